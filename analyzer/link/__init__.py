"""Assertion -> kernel parameter -> launch argument -> symbol -> input dim, and the passes that feed it."""
