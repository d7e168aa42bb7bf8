"""The JSON Schemas (draft 2020-12) of the JSON outputs, shipped in the wheel under analyzer/schemas/.

`text(name)` is a schema file as shipped, `load(name)` it parsed; `name` is a file stem (`check`,
`check-statistics`, `inspect`, `contract`, `why`, `diff`) or a versioned contract tag (`aoti-lint.check/1`).
Nothing here validates: the analyzer has no jsonschema dependency, the tests and the users do.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

# The `schema` tag of each versioned output -> its file stem in analyzer/schemas/.
TAGS = {
    "aoti-lint.check/1": "check",
    "aoti-lint.inspect/1": "inspect",
    "aoti-lint.contract/1": "contract",
    "aoti-lint.why/1": "why",
    "aoti-lint.diff/1": "diff",
}
# `check --statistics --format json` is a bare list, without a tag.
NAMES = (*TAGS.values(), "check-statistics")


def _stem(name: str) -> str:
    stem = TAGS.get(name, name)
    if stem not in NAMES:
        raise ValueError(f"unknown schema {name!r} (use {', '.join(NAMES)})")
    return stem


def text(name: str) -> str:
    """The schema file's text, as shipped."""
    # One name per joinpath: Python 3.10's Traversable takes one.
    return resources.files("analyzer").joinpath("schemas").joinpath(f"{_stem(name)}.schema.json").read_text("utf-8")


def load(name: str) -> dict[str, Any]:
    """The schema, parsed."""
    return json.loads(text(name))
