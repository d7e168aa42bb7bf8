"""Which configuration applies to which package, and `--show-settings`.

As ruff finds a configuration per file, each package gets the nearest pyproject.toml with a
`[tool.aoti-lint]` table at or above its own folder; precedence is the command line, then that
package's configuration, then the working directory's (key by key: a package's file that sets only
`ignore` keeps the working directory's `fail-on`). Settings of the run itself (`format`, `-o`)
come from the command line and the working directory's configuration only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .config import LIMIT_FIELDS, Config, find_pyproject, layer, load_config


def package_config(path: str, cwd_config: Config, cache: dict[Path | None, Config] | None = None) -> Config:
    """The configuration of the package at `path` below the command line: its nearest file over the
    working directory's, or the working directory's alone when that is the same file (or none)."""
    start = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    found = find_pyproject(start)
    if found is None or (cwd_config.source is not None and found.resolve() == Path(cwd_config.source).resolve()):
        return cwd_config
    cache = cache if cache is not None else {}
    if found not in cache:
        cache[found] = layer(cwd_config, load_config(path=found))
    return cache[found]


def expand(paths: Sequence[str], exclude: Sequence[str] = ()) -> list[Any]:
    """`paths` with each folder that holds a configuration of its own below it replaced by the
    packages a walk finds there (`many.Target`s), so that each gets its own configuration."""
    from . import many

    out: list[Any] = []
    for path in paths:
        if os.path.isdir(path) and not many.is_package_dir(path) and _nested_config(path):
            out.extend(many.discover([path], pair=False, exclude=exclude))
        else:
            out.append(path)
    return out


def _nested_config(folder: str, depth: int = 0) -> bool:
    """A pyproject.toml with a [tool.aoti-lint] table in a folder below `folder` (links not followed)."""
    from .config import read_section

    if depth > 32:
        return False
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return False
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            candidate = os.path.join(entry.path, "pyproject.toml")
            if os.path.isfile(candidate) and not os.path.islink(candidate) and read_section(Path(candidate)) is not None:
                return True
            if _nested_config(entry.path, depth + 1):
                return True
    return False


def group(paths: Sequence[Any], cwd_config: Config, merge_cli: Callable[[Config], Config]) -> list[tuple[Config, list[int]]]:
    """Indices of `paths` grouped by the configuration that applies to them (command line on top),
    in order of first appearance."""
    cache: dict[Path | None, Config] = {}
    groups: dict[int, tuple[Config, list[int]]] = {}
    merged: dict[int, Config] = {}
    for i, item in enumerate(paths):
        path = getattr(item, "path", item)  # a path, or a many.Target a walk found
        base = package_config(path, cwd_config, cache)
        key = id(base)
        if key not in merged:
            merged[key] = merge_cli(base)
            groups[key] = (merged[key], [])
        groups[key][1].append(i)
    return list(groups.values())


def render(config: Config, title: str | None = None) -> str:
    """The resolved settings, one `key = value  # origin` per line (TOML values), exit 0."""
    select, ignore = config.selection()
    limits = config.limits()
    rows: list[tuple[str, Any, str]] = [
        ("select", list(config.select) or ["ALL"], config.origin("select")),
        ("ignore", list(config.ignore), config.origin("ignore")),
        ("extend-select", list(config.extend_select), config.origin("extend_select")),
        ("extend-ignore", list(config.extend_ignore), config.origin("extend_ignore")),
        ("exclude", list(config.exclude), config.origin("exclude")),
        ("fail-on", str(config.fail_on), config.origin("fail_on")),
        ("target-device", config.target_device, config.origin("target_device")),
        ("target-sm", config.target_sm, config.origin("target_sm")),
        ("format", config.format, config.origin("format")),
        ("runtime-checks", getattr(config, "runtime_checks", None), config.origin("runtime_checks")),
    ]
    for key, name in LIMIT_FIELDS.items():  # Limits' fields are named as Config's
        rows.append((key, getattr(limits, name), config.origin(name)))
    rows.append(("per-package-ignores", len(config.per_package_ignores), config.origin("per_package_ignores")))
    rows.append(("accept", len(config.accept), config.origin("accept")))
    lines = [f"# {title}"] if title else []
    lines.append(f"# configuration file: {config.source if config.source else 'none found'}")
    width = max(len(key) for key, _, _ in rows)
    for key, value, origin in rows:
        shown = "(unset)" if value is None else json.dumps(value)
        lines.append(f"{key.ljust(width)} = {shown}  # {origin}")
    lines.append(f"# rules run: select {json.dumps(list(select) or ['ALL'])}, ignore {json.dumps(list(ignore))}")
    return "\n".join(lines) + "\n"
