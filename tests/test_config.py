"""[tool.aoti-lint] discovery, validation and the CLI-wins merge; rule selection semantics."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.read.archive import Limits
from analyzer.app.config import Config, ConfigError, find_pyproject, load_config, merge, parse_count, parse_input_names, parse_size, parse_sm, parse_timeout
from analyzer.core.findings import Finding, Location, Severity
from analyzer.rules import Context, Rule, find_rule, register, run_rules, select_rules


def _write(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


FULL = """
[project]
name = "x"

[tool.aoti-lint]
select = ["AOTI0", "empty-reduction"]
ignore = ["AOTI003"]
fail-on = "warning"
target-device = "cuda"
target-sm = 90
format = "sarif"
"""


def test_discovers_nearest_pyproject_upward(tmp_path: Path) -> None:
    top = _write(tmp_path, FULL)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_pyproject(deep) == top
    config = load_config(deep)
    assert config == Config(
        select=("AOTI0", "empty-reduction"),
        ignore=("AOTI003",),
        fail_on=Severity.WARNING,
        target_device="cuda",
        target_sm="90",
        format="sarif",
    )
    assert config.source == top


def test_skips_pyproject_without_section(tmp_path: Path) -> None:
    top = _write(tmp_path, FULL)
    _write(tmp_path / "pkg", '[project]\nname = "inner"\n')
    assert find_pyproject(tmp_path / "pkg") == top


def test_nearest_section_wins(tmp_path: Path) -> None:
    _write(tmp_path, FULL)
    inner = _write(tmp_path / "pkg", '[tool.aoti-lint]\nfail-on = "info"\n')
    assert find_pyproject(tmp_path / "pkg") == inner
    assert load_config(tmp_path / "pkg").fail_on == Severity.INFO
    assert load_config(tmp_path / "pkg").select == ()  # no inheritance from the outer file


def test_defaults_from_cwd_without_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    if find_pyproject() is not None:  # a [tool.aoti-lint] above the temp dir: not our business
        pytest.skip("a pyproject.toml with [tool.aoti-lint] sits above the temp dir")
    assert load_config() == Config()


@pytest.mark.parametrize(
    "body, message",
    [
        ('fail-on = "fatal"', "fail-on"),
        ('target-device = "tpu"', "target-device must be cpu or cuda"),
        ('target-sm = "ampere"', "target-sm"),
        ('format = "xml"', "format must be one of"),
        ("select = 3", "select must be a list"),
        ("ignore = [1]", "ignore must be a list of strings"),
        ("selct = []", "unknown key 'selct'"),
    ],
)
def test_validation_errors_are_one_line(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path, f"[tool.aoti-lint]\n{body}\n")
    with pytest.raises(ConfigError, match=message) as info:
        load_config(tmp_path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text and "[tool.aoti-lint]" in text


def test_invalid_toml(tmp_path: Path) -> None:
    _write(tmp_path, "[tool.aoti-lint\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(tmp_path)


def test_config_error_is_value_error() -> None:
    assert issubclass(ConfigError, ValueError)


@pytest.mark.parametrize(
    "value, expected",
    [(80, "80"), ("80", "80"), ("sm_90a", "90a"), ("SM_86", "86"), ("8.0", "80"), ("9.0a", "90a")],
)
def test_parse_sm(value: object, expected: str) -> None:
    assert parse_sm(value) == expected


@pytest.mark.parametrize("value", [True, 8, "sm", "8.0.1", 8.0])
def test_parse_sm_rejects(value: object) -> None:
    with pytest.raises(ConfigError):
        parse_sm(value)


def test_merge_cli_wins(tmp_path: Path) -> None:
    base = load_config(_write(tmp_path, FULL).parent)
    merged = merge(base, fail_on="error", target_device="cpu", target_sm="sm_80", format="json")
    assert (merged.fail_on, merged.target_device, merged.target_sm, merged.format) == (
        Severity.ERROR, "cpu", "80", "json"
    )
    assert merged.select == base.select and merged.ignore == base.ignore


def test_merge_none_keeps_file_values(tmp_path: Path) -> None:
    base = load_config(_write(tmp_path, FULL).parent)
    assert merge(base, select=(), ignore=(), fail_on=None, format=None) == base


def test_merge_cli_select_replaces_selection() -> None:
    base = Config(select=("AOTI0",), ignore=("AOTI003",))
    merged = merge(base, select=["AOTI1,AOTI2"], ignore=["AOTI201"])
    assert merged.select == ("AOTI1", "AOTI2")
    assert merged.ignore == ("AOTI201",)


def test_merge_cli_ignore_extends_file_ignore() -> None:
    merged = merge(Config(select=("AOTI0",), ignore=("AOTI003",)), ignore=["AOTI001"])
    assert merged.select == ("AOTI0",)
    assert merged.ignore == ("AOTI003", "AOTI001")


def test_merge_validates_cli_values() -> None:
    with pytest.raises(ConfigError, match="target-device"):
        merge(Config(), target_device="tpu")


# --- limits ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (1024, 1024), ("1024", 1024), ("1", 1), ("100B", 100), ("1K", 1024), ("512k", 512 * 2**10),
        ("64M", 64 * 2**20), ("64MiB", 64 * 2**20), ("64MB", 64 * 2**20), ("1G", 2**30),
        ("1.5G", 3 * 2**29), ("2 K", 2048), ("1T", 2**40), (" 8m ", 8 * 2**20), ("1_000", 1000),
    ],
)
def test_parse_size(value: object, expected: int) -> None:
    assert parse_size(value) == expected


@pytest.mark.parametrize(
    "value, message",
    [
        (0, "at least 1 byte"), ("0", "at least 1 byte"), ("0K", "at least 1 byte"), ("0.0001K", "at least 1 byte"),
        (-1, "at least 1 byte"), ("-1K", "a size like"), ("1X", "a size like"), ("", "a size like"),
        ("K", "a size like"), ("1e3", "a size like"), ("64 MiBs", "a size like"), (True, "a size like"),
        (1.5, "a size like"), (None, "a size like"),
    ],
)
def test_parse_size_rejects(value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_size(value, "max-member-size")
    assert str(info.value).startswith("max-member-size ") and "\n" not in str(info.value)


def test_parse_count() -> None:
    assert parse_count(1) == 1 and parse_count("500") == 500 and parse_count(" 7 ") == 7
    for bad in (0, -3, "0", "-1", "1.5", 1.5, "ten", True, "", "1K"):
        with pytest.raises(ConfigError, match="max-nesting"):
            parse_count(bad, "max-nesting")


def test_parse_timeout() -> None:
    assert parse_timeout(0) == 0.0 and parse_timeout("2.5") == 2.5 and parse_timeout(30) == 30.0
    for bad in (-1, "-0.5", "nan", "inf", float("inf"), "soon", True, None, ""):
        with pytest.raises(ConfigError, match="timeout"):
            parse_timeout(bad)


def test_limits_default_to_archive_defaults() -> None:
    assert Config().limits() == Limits()
    assert Config(max_member_bytes=1024).limits() == Limits(max_member_bytes=1024)


LIMITS = """
[tool.aoti-lint]
max-members = 50
max-member-size = "1K"
max-total-size = 1048576
max-nesting = "40"
timeout = 2.5
"""


def test_limit_keys_in_pyproject(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, LIMITS).parent)
    assert (config.max_members, config.max_member_bytes, config.max_total_bytes, config.max_nesting,
            config.timeout_s) == (50, 1024, 2**20, 40, 2.5)
    assert config.limits() == Limits(max_members=50, max_member_bytes=1024, max_total_bytes=2**20,
                                     max_nesting=40, timeout_s=2.5)
    assert config.limits().max_depth == Limits().max_depth  # not configurable: keeps its default


def test_limit_keys_partial_keep_defaults(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, '[tool.aoti-lint]\ntimeout = 0\n').parent)
    assert config.limits() == Limits(timeout_s=0)


def test_merge_cli_limits_win(tmp_path: Path) -> None:
    base = load_config(_write(tmp_path, LIMITS).parent)
    merged = merge(base, max_member_size="64M", timeout="10", max_members=None)
    assert merged.max_member_bytes == 64 * 2**20 and merged.timeout_s == 10.0
    assert merged.max_members == 50 and merged.max_nesting == 40  # not given: the file's values
    assert merge(Config(), max_nesting="9", max_total_size="2G", max_members="3").limits() == Limits(
        max_nesting=9, max_total_bytes=2**31, max_members=3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_member_size": "0"}, "--max-member-size must be at least 1 byte"),
        ({"max_total_size": "lots"}, "--max-total-size must be a size like"),
        ({"max_members": "-5"}, "--max-members must be"),
        ({"max_nesting": "0"}, "--max-nesting must be at least 1"),
        ({"timeout": "-1"}, "--timeout must be a finite number"),
    ],
)
def test_merge_rejects_bad_cli_limits(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merge(Config(), **kwargs)


@pytest.mark.parametrize(
    "body, message",
    [
        ('max-member-size = "64X"', "max-member-size must be a size like"),
        ("max-member-size = 0", "max-member-size must be at least 1 byte"),
        ('max-total-size = "-1G"', "max-total-size must be a size like"),
        ("max-members = 0", "max-members must be at least 1"),
        ("max-nesting = 2.5", "max-nesting must be a whole number"),
        ("timeout = -1", "timeout must be a finite number"),
        ('timeout = "later"', "timeout must be a number of seconds"),
        ('input-names = ["x"]', "unknown key 'input-names'"),  # per package: command line only
        ('exported-program = "ep.pt2"', "unknown key 'exported-program'"),
    ],
)
def test_limit_key_errors_are_one_line(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path, f"[tool.aoti-lint]\n{body}\n")
    with pytest.raises(ConfigError, match=message) as info:
        load_config(tmp_path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text


def test_parse_input_names() -> None:
    assert parse_input_names(["x,idx"]) == ("x", "idx")
    assert parse_input_names(["x", " idx , w "]) == ("x", "idx", "w")
    assert parse_input_names([]) == ()
    for bad in (["x,,idx"], ["x,"], [""], [","], ["x", ""]):
        with pytest.raises(ConfigError, match="empty name"):
            parse_input_names(bad)
    with pytest.raises(ConfigError, match="'x' is given twice"):
        parse_input_names(["x,idx", "x"])


# --- rule selection -------------------------------------------------------------------------


class _R(Rule):
    """Stand-in rule.

    ## What it does
    Nothing.
    """


def _rule(code: str, name: str, severity: Severity = Severity.ERROR) -> type[Rule]:
    return type(name.title().replace("-", ""), (_R,), {"code": code, "name": name, "severity": severity})


UNIVERSE = [
    _rule("AOTI001", "empty-index-bound"),
    _rule("AOTI002", "unchecked-input-range", Severity.WARNING),
    _rule("AOTI011", "data-index-bound", Severity.INFO),
    _rule("AOTI101", "empty-reduction"),
    _rule("AOTI201", "missing-kernel-source", Severity.WARNING),
]


def _codes(select=(), ignore=()) -> list[str]:
    return [r.code for r in select_rules(select, ignore, rules=UNIVERSE)]


def test_select_default_is_all() -> None:
    assert _codes() == ["AOTI001", "AOTI002", "AOTI011", "AOTI101", "AOTI201"]
    assert _codes(["ALL"]) == _codes()


def test_all_is_valid_without_rules() -> None:
    assert select_rules(["ALL"], rules=[]) == []
    assert select_rules(rules=[]) == []


def test_select_by_prefix_and_name() -> None:
    assert _codes(["AOTI0"]) == ["AOTI001", "AOTI002", "AOTI011"]
    assert _codes(["AOTI00"]) == ["AOTI001", "AOTI002"]
    assert _codes(["aoti1"]) == ["AOTI101"]
    assert _codes(["empty-reduction", "AOTI201"]) == ["AOTI101", "AOTI201"]


def test_ignore_removes() -> None:
    assert _codes(ignore=["AOTI0"]) == ["AOTI101", "AOTI201"]
    assert _codes(["ALL"], ["data-index-bound"]) == ["AOTI001", "AOTI002", "AOTI101", "AOTI201"]


def test_more_specific_selector_wins() -> None:
    # ruff semantics: a full code beats a prefix whichever list it is in.
    assert _codes(["AOTI001"], ["AOTI0"]) == ["AOTI001"]
    assert _codes(["AOTI0"], ["AOTI001"]) == ["AOTI002", "AOTI011"]
    # At equal specificity, ignore wins.
    assert _codes(["AOTI0"], ["AOTI0"]) == []


@pytest.mark.parametrize("selector", ["AOTI9", "nope", "all-rules", "X"])
def test_unknown_selector_is_value_error(selector: str) -> None:
    with pytest.raises(ValueError, match=f"unknown rule selector '{selector}'"):
        _codes([selector])
    with pytest.raises(ValueError, match="unknown rule selector"):
        _codes(ignore=[selector])


def test_find_rule_by_name_or_code() -> None:
    assert find_rule("aoti101", UNIVERSE) is UNIVERSE[3]
    assert find_rule("empty-reduction", UNIVERSE) is UNIVERSE[3]
    assert find_rule("AOTI1", UNIVERSE) is None


def test_register_validates_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    import analyzer.rules as rules_module

    monkeypatch.setattr(rules_module, "RULES", [])
    register(UNIVERSE[0])
    with pytest.raises(TypeError, match="clashes"):
        register(_rule("AOTI001", "other-name"))
    with pytest.raises(TypeError, match="kebab-case"):
        register(_rule("AOTI009", "Bad_Name"))
    with pytest.raises(TypeError, match="like 'AOTI001'"):
        register(_rule("AOTI-9", "fine-name"))
    register(UNIVERSE[0])  # the same class again (a reload) is not a clash
    assert rules_module.RULES == [UNIVERSE[0]]


def test_run_rules_sorts_dedups_and_fills_package() -> None:
    from analyzer.core.model import Model, Package

    class Emit(_R):
        name, code, severity = "emit", "AOTI900", Severity.WARNING

        def check(self, model, ctx):
            yield self.finding(model, ctx, "late", Location("b.cpp", 9, 1))
            yield self.finding(model, ctx, "early", Location("a.cpp", 30, 2), input=0, dim=0)
            yield self.finding(model, ctx, "early", Location("a.cpp", 30, 2), input=0, dim=0)
            yield Finding("AOTI900", "emit", Severity.INFO, "hand-made", model.name, Location("a.cpp", 2, 1))

        def check_package(self, package, ctx):
            yield self.finding("-", ctx, "package", Location("a.cpp"))

    pkg = Package(path="x.pt2", models=[Model(name="m1"), Model(name="m2")])
    found = run_rules(pkg, [Emit], Context(target_device="cuda"))
    assert [(f.location.path, f.location.line, f.model, f.message) for f in found] == [
        ("a.cpp", 0, "-", "package"),
        ("a.cpp", 2, "m1", "hand-made"),
        ("a.cpp", 2, "m2", "hand-made"),
        ("a.cpp", 30, "m1", "early"),
        ("a.cpp", 30, "m2", "early"),
        ("b.cpp", 9, "m1", "late"),
        ("b.cpp", 9, "m2", "late"),
    ]
    assert {f.package for f in found} == {"x.pt2"}
    assert found[1].severity == Severity.INFO and found[3].severity == Severity.WARNING
