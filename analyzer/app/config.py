"""`[tool.aoti-lint]` from the nearest pyproject.toml, merged with the command line (which wins).

```toml
[tool.aoti-lint]
select = ["ALL"]            # rule names, code prefixes ("AOTI0") or "ALL"
ignore = ["AOTI201"]
extend-select = ["AOTI016"] # added to select / ignore (as in ruff)
extend-ignore = ["AOTI007"]
exclude = ["legacy/*"]      # globs a folder walk leaves out (the path below the folder, or the name)
fail-on = "warning"         # error | warning | info
target-device = "cuda"      # cpu | cuda
target-sm = 90              # or "90", "sm_90", "9.0", "90a"
format = "sarif"            # text | concise | json | sarif | github | markdown
runtime-checks = "off"      # on | off: whether production sets AOTI_RUNTIME_CHECK_INPUTS=1
max-members = 100000        # limits on reading one package (analyzer.read.archive.Limits); unset keys
max-member-size = "64M"     #   keep Limits' defaults. Sizes: bytes (an integer) or a string with
max-total-size = "1G"       #   a binary suffix: 512K, 64M, 1G (K = 1024; KB, KiB and a trailing B
max-nesting = 500           #   also read as binary)
timeout = 120               # seconds per package; 0 expires at once (there is no "unlimited")
max-memory = "4G"           # resident memory of the process (at least 256M)
```

`--exported-program` and `--input-names` are command-line only: they describe one package.

Where a value comes from, as in ruff: the command line, then the nearest pyproject.toml with a
`[tool.aoti-lint]` table above the package, then the one above the working directory, then the
default (`Config.origins` records which, for `--show-settings`).
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from ..core import capability
from ..core.findings import Severity

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - 3.10 only
    try:
        import tomli as _toml
    except ImportError:  # a broken install: reading a configuration says so instead of ignoring it
        _toml = None

SECTION = "aoti-lint"
MAX_CONFIG_BYTES = 16 * 2**20  # a pyproject.toml is kilobytes; past this it is not one
FORMAT_NAMES = ("text", "full", "concise", "json", "sarif", "github", "markdown", "rdjson", "gitlab", "junit")
DEVICES = ("cpu", "cuda")
LIMIT_KEYS = ("max-members", "max-member-size", "max-total-size", "max-nesting", "timeout", "max-memory")
RUNTIME_CHECKS = ("on", "off")
KEYS = ("select", "ignore", "extend-select", "extend-ignore", "exclude", "fail-on", "target-device", "target-sm",
        "format", "runtime-checks", *LIMIT_KEYS, "per-package-ignores", "accept")  # the last two: analyzer.app.accept


# config key / CLI option stem -> Config (and Limits) field
LIMIT_FIELDS = {
    "max-members": "max_members",
    "max-member-size": "max_member_bytes",
    "max-total-size": "max_total_bytes",
    "max-nesting": "max_nesting",
    "timeout": "timeout_s",
    "max-memory": "max_memory",
}


class ConfigError(ValueError):
    """A bad value in the config file or on the command line; the message is one line."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.ERROR
    target_device: str | None = None
    target_sm: str | None = None
    format: str = "text"
    # Whether the deployment runs with AOTI_RUNTIME_CHECK_INPUTS=1: "on", "off", None (not said).
    runtime_checks: str | None = None
    # Package-reading limits; None keeps the analyzer.read.archive.Limits default.
    max_members: int | None = None
    max_member_bytes: int | None = None
    max_total_bytes: int | None = None
    max_nesting: int | None = None
    timeout_s: float | None = None
    max_memory: int | None = None
    source: Path | None = field(default=None, compare=False)  # the pyproject.toml it came from
    per_package_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # analyzer.app.accept
    accept: tuple[Any, ...] = ()  # analyzer.app.accept.Acceptance entries
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # globs a folder walk leaves out
    # field -> where its value came from ("command line" or a pyproject.toml path); absent: default
    origins: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def origin(self, name: str) -> str:
        return dict(self.origins).get(name, "default")

    def selection(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(select, ignore) as the rules see them: `extend-select` added to select (default ALL),
        `extend-ignore` to ignore; the more specific selector wins, as in `select_rules`."""
        select = (self.select or ("ALL",)) + self.extend_select if self.extend_select else self.select
        return select, self.ignore + self.extend_ignore

    def limits(self) -> Any:
        """An `analyzer.read.archive.Limits` with the configured values over its defaults.

        Raises ValueError when the combination is invalid (Limits validates itself)."""
        from ..read.archive import Limits# lazy: `--help` and `rules` need no archive reader

        given = {name: getattr(self, name) for name in LIMIT_FIELDS.values()}
        return Limits(**{name: value for name, value in given.items() if value is not None})


def _covered(selector: str, by: tuple[str, ...]) -> bool:
    """Every rule `selector` names is one `by` names (an ignore the extension overrides)."""
    from ..rules import select_rules  # lazy: only when extend-select is used

    try:
        mine = {r.code for r in select_rules([selector])}
        theirs = {r.code for r in select_rules(by)}
    except ValueError:
        return False
    return bool(mine) and mine <= theirs


def _with_origin(config: Config, origin: str, **values: Any) -> Config:
    origins = dict(config.origins)
    origins.update({name: origin for name in values})
    return replace(config, origins=tuple(origins.items()), **values)


def layer(base: Config, over: Config) -> Config:
    """`over` (a package's nearest configuration) on top of `base` (the working directory's): each
    value `over` sets wins, the rest stay `base`'s; `source` is `over`'s."""
    out = replace(base, source=over.source or base.source)
    values = {name: getattr(over, name) for name, _ in over.origins}
    if values:
        out = _with_origin(out, str(over.source), **values)
    return out


def find_pyproject(start: str | Path | None = None) -> Path | None:
    """The nearest pyproject.toml at or above `start` (default: cwd) with a [tool.aoti-lint] table.

    As in ruff, a pyproject.toml without our table is skipped, so a project's own pyproject does
    not hide a workspace-level configuration.
    """
    here = Path(start if start is not None else Path.cwd()).resolve()
    if here.is_file():
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and read_section(candidate) is not None:
            return candidate
    return None


def _read(path: Path) -> dict[str, Any] | None:
    if _toml is None:  # pragma: no cover - 3.10 without its declared dependency
        # Ignoring the file would silently drop fail-on, accept and the ignores: a gate that passes.
        raise ConfigError(f"{path}: reading it needs tomli on Python {sys.version_info[0]}.{sys.version_info[1]} "
                          "(`pip install tomli`, a dependency of aoti-lint there)")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES // 2**20} MiB; not a configuration file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); TOML files must be UTF-8") from None
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {' '.join(str(exc).split())}") from None
    except (RecursionError, ValueError) as exc:  # arrays nested thousands deep, 4300+ digit numbers
        reason = "nested too deeply" if isinstance(exc, RecursionError) else " ".join(str(exc).split())[:200]
        raise ConfigError(f"{path}: invalid TOML: {reason}") from None


def read_section(path: Path) -> dict[str, Any] | None:
    data = _read(path)
    if data is None:
        return None
    section = data.get("tool", {}).get(SECTION)
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    return section


def load_config(start: str | Path | None = None, path: str | Path | None = None) -> Config:
    """The configuration from `path`, or from the nearest pyproject.toml; defaults if none."""
    found = Path(path) if path is not None else find_pyproject(start)
    if found is None:
        return Config()
    section = read_section(found)
    if section is None:
        return Config(source=found)
    return parse_section(section, source=found)


def parse_section(section: dict[str, Any], source: Path | None = None) -> Config:
    """Validate a `[tool.aoti-lint]` table; errors name the file and the key."""
    where = f"{source}: [tool.{SECTION}]" if source else f"[tool.{SECTION}]"
    unknown = sorted(set(section) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    try:
        config = Config(source=source)
        origin = str(source) if source else "configuration"
        for key, name in (("select", "select"), ("ignore", "ignore"), ("extend-select", "extend_select"),
                          ("extend-ignore", "extend_ignore")):
            if key in section:
                config = _with_origin(config, origin, **{name: parse_selectors(section[key], key)})
        if "exclude" in section:
            config = _with_origin(config, origin, exclude=parse_globs(section["exclude"], "exclude"))
        if "fail-on" in section:
            config = _with_origin(config, origin, fail_on=parse_severity(section["fail-on"]))
        if "target-device" in section:
            config = _with_origin(config, origin, target_device=parse_device(section["target-device"]))
        if "target-sm" in section:
            config = _with_origin(config, origin, target_sm=parse_sm(section["target-sm"]))
        if "format" in section:
            config = _with_origin(config, origin, format=parse_format(section["format"]))
        if "runtime-checks" in section:
            config = _with_origin(config, origin, runtime_checks=parse_runtime_checks(section["runtime-checks"]))
        for key, name in LIMIT_FIELDS.items():
            if key in section:
                limit: dict[str, Any] = {name: LIMIT_PARSERS[key](section[key], key)}
                config = _with_origin(config, origin, **limit)
        if "per-package-ignores" in section or "accept" in section:
            from . import accept

            try:
                values: dict[str, Any] = {}
                if "accept" in section:
                    values["accept"] = accept.parse_accept(section["accept"])
                if "per-package-ignores" in section:
                    values["per_package_ignores"] = accept.parse_per_package_ignores(section["per-package-ignores"])
                config = _with_origin(config, origin, **values)
            except accept.AcceptError as exc:
                raise ConfigError(str(exc)) from None
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return config


def parse_selectors(value: Any, key: str = "select") -> tuple[str, ...]:
    """A list of selectors (or one comma-separated string) as a tuple of stripped strings."""
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise ConfigError(f"{key} must be a list of rule names or codes")
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"{key} must be a list of strings, got {item!r}")
        out += [part.strip() for part in item.split(",") if part.strip()]
    return tuple(out)


def parse_globs(value: Any, key: str = "exclude") -> tuple[str, ...]:
    """Glob patterns: a list of strings, or one comma-separated string."""
    return parse_selectors(value, key)


def parse_severity(value: Any) -> Severity:
    if isinstance(value, Severity):
        return value
    if not isinstance(value, str):
        raise ConfigError(f"fail-on must be error, warning or info, got {value!r}")
    try:
        return Severity.parse(value)
    except ValueError as exc:
        raise ConfigError(f"fail-on: {exc}") from None


def parse_device(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in DEVICES:
        raise ConfigError(f"target-device must be cpu or cuda, got {value!r}")
    return value.strip().lower()


def parse_sm(value: Any) -> str:
    """A compute capability as digits: 80, "80", "sm_80", "8.0" -> "80"; "sm_90a" -> "90a"."""
    sm = capability.parse_sm(value)
    if sm is None:
        raise ConfigError(f"target-sm must be like 80 or 'sm_90a', got {value!r}")
    return capability.sm_text(sm)


def parse_runtime_checks(value: Any, key: str = "runtime-checks") -> str:
    """`on` / `off` (TOML booleans too: true is on)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if not isinstance(value, str) or value.strip().lower() not in RUNTIME_CHECKS:
        raise ConfigError(f"{key} must be on or off, got {value!r}")
    return value.strip().lower()


def parse_format(value: Any) -> str:
    if not isinstance(value, str) or value not in FORMAT_NAMES:
        raise ConfigError(f"format must be one of {', '.join(FORMAT_NAMES)}, got {value!r}")
    return value


_COUNT_RE = re.compile(r"^\+?\d+$")
_SIZE_RE = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*(?:([kmgt])(?:i?b)?|b)?$", re.IGNORECASE)
_SIZE_SCALE = {None: 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_count(value: Any, key: str = "max-members") -> int:
    """A positive whole number: 500 or "500"."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(f"{key} must be a whole number of at least 1, got {value!r}")
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        if not _COUNT_RE.match(text):
            raise ConfigError(f"{key} must be a whole number of at least 1, got {value!r}")
        value = int(text)
    if value < 1:
        raise ConfigError(f"{key} must be at least 1, got {value!r}")
    return value


def parse_nesting(value: Any, key: str = "max-nesting") -> int:
    """A nesting depth: a whole number from 1 to archive.MAX_NESTING_CAP (500)."""
    from ..read.archive import MAX_NESTING_CAP

    depth = parse_count(value, key)
    if depth > MAX_NESTING_CAP:
        raise ConfigError(f"{key} must be at most {MAX_NESTING_CAP}, got {value!r} (deeper nesting would "
                          "exhaust Python's recursion limit; deeper source is reported as unparsed)")
    return depth


def parse_size(value: Any, key: str = "max-member-size") -> int:
    """Bytes: an integer, or a string with a binary suffix: "1048576", "512K", "64M", "1.5G", "64MiB"."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(f"{key} must be a size like 1048576, 512K, 64M or 1G, got {value!r}")
    if isinstance(value, str):
        match = _SIZE_RE.match(value.strip().replace("_", ""))
        if not match:
            raise ConfigError(f"{key} must be a size like 1048576, 512K, 64M or 1G, got {value!r}")
        number, unit = match.group(1), match.group(2)
        scale = _SIZE_SCALE[unit.lower() if unit else None]
        size = int(number) * scale if "." not in number else int(float(number) * scale)
    else:
        size = value
    if size < 1:
        raise ConfigError(f"{key} must be at least 1 byte, got {value!r}")
    return size


def parse_timeout(value: Any, key: str = "timeout") -> float:
    """Seconds, a finite number >= 0 (int, float or a numeric string). 0 expires at once."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"{key} must be a number of seconds, got {value!r}")
    try:
        seconds = float(value.strip().replace("_", "") if isinstance(value, str) else value)
    except ValueError:
        raise ConfigError(f"{key} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(f"{key} must be a finite number of seconds, at least 0, got {value!r}")
    return seconds


LIMIT_PARSERS = {
    "max-members": parse_count,
    "max-member-size": parse_size,
    "max-total-size": parse_size,
    "max-nesting": parse_nesting,
    "timeout": parse_timeout,
    "max-memory": parse_size,
}


def parse_input_names(values: Iterable[str], key: str = "--input-names") -> tuple[str, ...]:
    """Comma-separated names, possibly repeated, as one tuple; an empty or repeated name is an error."""
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            name = part.strip()
            if not name:
                raise ConfigError(f"{key}: empty name in {value!r} (give names like x,idx)")
            if name in out:
                raise ConfigError(f"{key}: {name!r} is given twice")
            out.append(name)
    return tuple(out)


def merge(
    config: Config,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    fail_on: str | Severity | None = None,
    target_device: str | None = None,
    target_sm: str | int | None = None,
    format: str | None = None,
    runtime_checks: str | None = None,
    max_members: Any = None,
    max_member_size: Any = None,
    max_total_size: Any = None,
    max_nesting: Any = None,
    timeout: Any = None,
    max_memory: Any = None,
    extend_select: Iterable[str] | None = None,
    extend_ignore: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> Config:
    """The config with the command line on top; None (or an empty selector list) means "not given".

    Selection layers as in ruff: `--select` replaces the file's select *and* ignore (a fresh
    selection); `--ignore` alone adds to the file's ignore list; `--extend-select` and
    `--extend-ignore` add to whatever the selection is (an `--extend-select` of a rule the file
    ignores selects it again). `--exclude` replaces the file's `exclude`.
    """
    cli = "command line"
    out = _merge_selection(config, cli, select, ignore, extend_select, extend_ignore)
    if exclude:
        out = _with_origin(out, cli, exclude=parse_globs(list(exclude), "--exclude"))
    if fail_on is not None:
        out = _with_origin(out, cli, fail_on=parse_severity(fail_on))
    if target_device is not None:
        out = _with_origin(out, cli, target_device=parse_device(target_device))
    if target_sm is not None:
        out = _with_origin(out, cli, target_sm=parse_sm(target_sm))
    if format is not None:
        out = _with_origin(out, cli, format=parse_format(format))
    if runtime_checks is not None:
        out = _with_origin(out, cli, runtime_checks=parse_runtime_checks(runtime_checks, "--runtime-checks"))
    cli_limits = {"max-members": max_members, "max-member-size": max_member_size,
                  "max-total-size": max_total_size, "max-nesting": max_nesting, "timeout": timeout,
                  "max-memory": max_memory}
    for key, value in cli_limits.items():
        if value is not None:
            limit: dict[str, Any] = {LIMIT_FIELDS[key]: LIMIT_PARSERS[key](value, f"--{key}")}
            out = _with_origin(out, cli, **limit)
    return out


def _merge_selection(config: Config, cli: str, select: Iterable[str] | None, ignore: Iterable[str] | None,
                     extend_select: Iterable[str] | None, extend_ignore: Iterable[str] | None) -> Config:
    """`merge`'s rule selection: the command line's selectors layered on the file's."""
    out = config
    cli_select = parse_selectors(list(select), "--select") if select else ()
    cli_ignore = parse_selectors(list(ignore), "--ignore") if ignore else ()
    if cli_select:
        out = _with_origin(out, cli, select=cli_select, ignore=cli_ignore)
    elif cli_ignore:
        out = _with_origin(out, cli, ignore=out.ignore + cli_ignore)
    if extend_select:
        added = parse_selectors(list(extend_select), "--extend-select")
        out = _with_origin(out, cli, extend_select=out.extend_select + added)
        # A rule the configuration ignores comes back: the command line is the later layer.
        out = replace(out, ignore=tuple(i for i in out.ignore if i.lower() not in {a.lower() for a in added}
                                        and not _covered(i, added)),
                      extend_ignore=tuple(i for i in out.extend_ignore if not _covered(i, added)))
    if extend_ignore:
        out = _with_origin(out, cli, extend_ignore=out.extend_ignore
                           + parse_selectors(list(extend_ignore), "--extend-ignore"))
    return out
