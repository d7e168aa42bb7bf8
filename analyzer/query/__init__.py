"""One answer per question about the linked model: sizes, relations, witnesses, source, headlines."""
