"""Package and device rules: unreadable members, missing kernel source, target device mismatch.

Placeholder: the rule writer fills this module (each rule registered with `@register`).
"""
