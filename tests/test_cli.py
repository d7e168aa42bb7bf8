"""The command line: dispatch, options -> api, exit codes, one-line errors, rules/explain/why."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import analyzer
import analyzer.report
import analyzer.rules as rules_module
from analyzer import __version__
from analyzer.app import api
from analyzer.read.archive import Limits
from analyzer.core.budget import ArchiveError
from analyzer.app.cli import cli, exit_code
from analyzer.core.findings import Finding, Location, Severity
from analyzer.core.model import Package
from analyzer.rules import DOC_SECTIONS, Rule, all_rules

PT2 = Path(__file__).resolve().parents[2] / "shared" / "pt2"
WRAPPER = "gather_dyn.cuda/data/aotinductor/model/ckaicpk46vp7.wrapper.cpp"


class FakeError(Rule):
    """An index bound is an input dimension that the package accepts as 0.

    ## What it does
    Finds index-bound assertions whose bound may be 0.

    ## Why it matters
    Every index is out of bounds for an empty input.

    ## Example
    ```python
    x[idx]  # x: [n, 8]
    ```

    ## Fix
    Declare `Dim("n", min=1)`.
    """

    name = "fake-empty-bound"
    code = "FAKE001"
    severity = Severity.ERROR


class FakeWarning(Rule):
    """Input range checks run only with AOTI_RUNTIME_CHECK_INPUTS.

    ## What it does
    x
    ## Why it matters
    x
    ## Example
    x
    ## Fix
    x
    """

    name = "fake-unchecked-range"
    code = "FAKE002"
    severity = Severity.WARNING


def _finding(severity: Severity, code: str = "FAKE001", rule: str = "fake-empty-bound") -> Finding:
    return Finding(
        code=code, rule=rule, severity=severity, message="index bound may be 0", model="model",
        location=Location(WRAPPER, 656, 9), kernel="triton_poi_fused_index_mul_0", input=0, dim=0,
        symbol="s77", witness="arg0_1.shape = (0, 8), arg1_1.shape = (3,)", key="0 <= idx < s77",
        package="gather_dyn.cuda.pt2",
    )


ERROR = _finding(Severity.ERROR)
WARNING = _finding(Severity.WARNING, "FAKE002", "fake-unchecked-range")
INFO = _finding(Severity.INFO, "FAKE002", "fake-unchecked-range")


@dataclass
class Calls:
    """What the fake api saw, and what it will return or raise."""

    findings: list[Finding] = field(default_factory=list)
    raises: BaseException | None = None
    lint: list[tuple[list[str], Any]] = field(default_factory=list)
    load: list[tuple[str, Any]] = field(default_factory=list)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Calls:
    """api.lint/api.load replaced; the registry holds FakeError and FakeWarning; cwd is empty."""
    calls = Calls()

    def lint(paths, options=None, **_):
        calls.lint.append((list(paths), options))
        if calls.raises is not None:
            raise calls.raises
        return api.Result([Package(path=p) for p in paths], list(calls.findings))

    def load(path, options=None):
        calls.load.append((path, options))
        if calls.raises is not None:
            raise calls.raises
        return Package(path=path)

    all_rules()  # import the real rule modules first, so they do not register into the fake list
    monkeypatch.setattr(rules_module, "RULES", [FakeError, FakeWarning])
    monkeypatch.setattr(api, "lint", lint)
    monkeypatch.setattr(api, "load", load)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)  # no pyproject.toml from the repository leaks in
    return calls


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, prog_name="aoti-lint")


def _error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("aoti-lint: error: ")
    assert "Traceback" not in result.output
    return lines[0]


# --- dispatch -------------------------------------------------------------------------------


def test_help_lists_commands(fake: Calls) -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("check", "inspect", "rules", "explain", "why"):
        assert command in result.stdout
    assert fake.lint == []


def test_version(fake: Calls) -> None:
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"aoti-lint {__version__}"


def test_bare_package_means_check(fake: Calls) -> None:
    result = run("a.pt2", "b.pt2")
    assert result.exit_code == 0, result.output
    assert fake.lint[0][0] == ["a.pt2", "b.pt2"]
    assert result.stdout == "All checks passed (runtime checks: unset).\n"


def test_bare_with_options_first(fake: Calls) -> None:
    fake.findings = [ERROR]
    result = run("--format", "json", "--exit-zero", "a.pt2")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["findings"][0]["code"] == "FAKE001"


def test_explicit_check(fake: Calls) -> None:
    assert run("check", "a.pt2").exit_code == 0
    assert fake.lint[0][0] == ["a.pt2"]


def test_check_needs_a_package(fake: Calls) -> None:
    assert run("check").exit_code == 2


# --- exit codes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "findings, args, code",
    [
        ([], [], 0),
        ([ERROR], [], 1),
        ([WARNING], [], 0),
        ([WARNING], ["--fail-on", "warning"], 1),
        ([INFO], ["--fail-on", "warning"], 0),
        ([INFO], ["--fail-on", "info"], 1),
        ([ERROR, WARNING], ["--exit-zero"], 0),
        ([ERROR], ["--fail-on", "info", "--exit-zero"], 0),
    ],
)
def test_exit_codes(fake: Calls, findings: list[Finding], args: list[str], code: int) -> None:
    fake.findings = findings
    result = run("check", "a.pt2", *args)
    assert result.exit_code == code, result.output


@pytest.mark.parametrize(
    "error",
    [
        ArchiveError("a.pt2: not a zip archive or a package folder"),
        FileNotFoundError(2, "No such file or directory", "a.pt2"),
        ValueError("bad\nthing"),
    ],
)
def test_unreadable_package_exits_2_with_one_line(fake: Calls, error: BaseException) -> None:
    fake.raises = error
    result = run("check", "a.pt2", "--exit-zero")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "a.pt2" in line or "bad thing" in line
    assert result.stdout == ""


def test_unknown_selector_exits_2(fake: Calls) -> None:
    result = run("check", "a.pt2", "--select", "AOTI9")
    assert result.exit_code == 2
    assert "unknown rule selector 'AOTI9'" in _error_line(result)
    assert fake.lint == []  # rejected before any package is read


def test_usage_error_exits_2(fake: Calls) -> None:
    assert run("check", "a.pt2", "--format", "xml").exit_code == 2
    assert run("check", "a.pt2", "--fail-on", "fatal").exit_code == 2


def test_bad_config_exits_2(fake: Calls, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint]\ntarget-device = "tpu"\n')
    result = run("check", "a.pt2")
    assert result.exit_code == 2
    assert "target-device must be cpu or cuda" in _error_line(result)


def test_exit_code_function() -> None:
    assert exit_code([WARNING], Severity.ERROR) == 0
    assert exit_code([WARNING], Severity.WARNING) == 1
    assert exit_code([ERROR], Severity.ERROR, exit_zero=True) == 0


# --- options --------------------------------------------------------------------------------


def test_options_reach_api(fake: Calls) -> None:
    result = run(
        "check", "a.pt2", "--select", "FAKE0,fake-empty-bound", "--select", "FAKE002",
        "--ignore", "FAKE002", "--fail-on", "warning", "--target-device", "cuda", "--target-sm", "sm_90a",
    )
    assert result.exit_code == 0, result.output
    options = fake.lint[0][1]
    assert isinstance(options, api.Options)
    assert options.select == ("FAKE0", "fake-empty-bound", "FAKE002")
    assert options.ignore == ("FAKE002",)
    assert (options.target_device, options.target_sm) == ("cuda", "90a")


def test_pyproject_config_and_cli_wins(fake: Calls, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aoti-lint]\nselect = ["FAKE001"]\nfail-on = "warning"\nformat = "json"\n'
        'target-device = "cpu"\ntarget-sm = 80\n'
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    fake.findings = [WARNING]
    monkeypatch.chdir(sub)  # discovered upward from the working directory
    result = run("check", "a.pt2", "--target-device", "cuda")
    options = fake.lint[0][1]
    assert options.select == ("FAKE001",) and options.target_sm == "80"
    assert options.target_device == "cuda"  # the command line wins
    assert result.exit_code == 1  # fail-on = "warning" from the file
    assert json.loads(result.stdout)["schema"] == "aoti-lint.check/1"  # format from the file
    result = run("check", "a.pt2", "--format", "concise", "--fail-on", "error")
    assert result.exit_code == 0 and result.stdout.endswith("in 1 package (runtime checks: unset).\n")


def test_output_file(fake: Calls, tmp_path: Path) -> None:
    fake.findings = [ERROR]
    result = run("check", "a.pt2", "--format", "sarif", "-o", "out.sarif")
    assert result.exit_code == 1 and result.stdout == ""
    doc = json.loads((tmp_path / "out.sarif").read_text())
    assert [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]] == ["FAKE001", "FAKE002"]
    assert doc["runs"][0]["results"][0]["ruleIndex"] == 0


def test_output_file_unwritable_exits_2(fake: Calls, tmp_path: Path) -> None:
    result = run("check", "a.pt2", "-o", str(tmp_path / "missing" / "out.txt"))
    assert result.exit_code == 2
    _error_line(result)


def test_color(fake: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.findings = [ERROR]
    assert "\x1b[" not in run("check", "a.pt2").stdout  # not a TTY
    assert "\x1b[" in run("check", "a.pt2", "--color").stdout
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" in run("check", "a.pt2", "--color").stdout  # an explicit flag beats NO_COLOR
    assert "\x1b[" not in run("check", "a.pt2", "--no-color").stdout


def test_color_auto_on_tty(fake: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    import analyzer.app.clibase as cli_module

    fake.findings = [ERROR]

    monkeypatch.setattr(cli_module, "stdout_isatty", lambda: True)
    assert "\x1b[" in run("check", "a.pt2").stdout
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run("check", "a.pt2").stdout


# --- package-reading options: limits, exported program, input names ---------------------------


def _options_seen(fake: Calls) -> api.Options:
    calls = fake.lint or fake.load
    assert len(calls) == 1, calls
    options = calls[0][1]
    assert isinstance(options, api.Options)
    return options


READING = ["--max-members", "10", "--max-member-size", "1K", "--max-total-size", "2M",
           "--max-nesting", "40", "--timeout", "2.5", "--input-names", "x,idx", "--input-names", "w"]
READ_LIMITS = Limits(max_members=10, max_member_bytes=1024, max_total_bytes=2 * 2**20, max_nesting=40,
                     timeout_s=2.5)


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "a.pt2"],
        ["a.pt2"],  # bare: short for check
        ["--timeout", "2.5", "a.pt2"],  # bare, options first
        ["inspect", "a.pt2"],
        ["why", "a.pt2", "0 <= tmp4 < ks0"],
    ],
)
def test_reading_options_reach_api(fake: Calls, fake_why, tmp_path: Path, argv: list[str]) -> None:
    ep = tmp_path / "ep.pt2"
    ep.write_bytes(b"PK")
    result = run(*argv, *READING, "--exported-program", str(ep))
    assert result.exit_code == 0, result.output
    options = _options_seen(fake)
    assert options.limits == READ_LIMITS
    assert options.exported_program == str(ep)
    assert options.input_names == ("x", "idx", "w")


def test_reading_defaults(fake: Calls) -> None:
    assert run("check", "a.pt2").exit_code == 0
    options = _options_seen(fake)
    assert options.limits == Limits()
    assert (options.exported_program, options.input_names) == (None, ())


@pytest.mark.parametrize(
    "args, message",
    [
        (["--max-member-size", "0"], "--max-member-size must be at least 1 byte, got '0'"),
        (["--max-member-size", "-1"], "--max-member-size must be a size like"),
        (["--max-member-size", "64X"], "--max-member-size must be a size like"),
        (["--max-total-size", "0.5K"], None),  # valid: 512 bytes, see the test below
        (["--max-total-size", "0.1"], "--max-total-size must be at least 1 byte"),
        (["--max-members", "0"], "--max-members must be at least 1"),
        (["--max-members", "many"], "--max-members must be a whole number"),
        (["--max-nesting", "-3"], "--max-nesting"),
        (["--timeout", "-1"], "--timeout must be a finite number of seconds, at least 0"),
        (["--timeout", "soon"], "--timeout must be a number of seconds"),
        (["--timeout", "nan"], "--timeout must be a finite number"),
        (["--input-names", "x,,idx"], "--input-names: empty name in 'x,,idx'"),
        (["--input-names", ""], "--input-names: empty name"),
        (["--input-names", "x", "--input-names", "x"], "--input-names: 'x' is given twice"),
        (["--exported-program", "missing-ep.pt2"], "missing-ep.pt2: No such file or directory"),
    ],
)
def test_bad_reading_option_exits_2_one_line(fake: Calls, args: list[str], message: str | None) -> None:
    if message is None:  # a control: the same option with a good value goes through
        assert run("check", "a.pt2", *args).exit_code == 0
        assert _options_seen(fake).limits.max_total_bytes == 512
        return
    for argv in (["check", "a.pt2"], ["inspect", "a.pt2"], ["a.pt2"]):
        result = run(*argv, *args)
        assert result.exit_code == 2, (argv, result.output)
        assert message in _error_line(result)
        assert result.stdout == ""
    assert fake.lint == [] and fake.load == []  # rejected before any package is read


def test_pyproject_limits_and_cli_wins(fake: Calls, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aoti-lint]\nmax-member-size = "1K"\nmax-members = 7\ntimeout = 3\n'
    )
    assert run("check", "a.pt2").exit_code == 0
    assert _options_seen(fake).limits == Limits(max_member_bytes=1024, max_members=7, timeout_s=3.0)
    fake.lint.clear()
    assert run("check", "a.pt2", "--max-member-size", "64M", "--timeout", "0").exit_code == 0
    assert _options_seen(fake).limits == Limits(max_member_bytes=64 * 2**20, max_members=7, timeout_s=0.0)
    assert run("inspect", "a.pt2").exit_code == 0  # inspect reads the file's limits too
    assert fake.load[0][1].limits.max_member_bytes == 1024


def test_pyproject_bad_limit_exits_2(fake: Calls, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint]\nmax-total-size = "huge"\n')
    result = run("inspect", "a.pt2")
    assert result.exit_code == 2
    assert "max-total-size must be a size like" in _error_line(result)


def test_help_lists_reading_options(fake: Calls) -> None:
    for command in ("check", "inspect", "why"):
        out = run(command, "--help").stdout
        for option in ("--exported-program", "--input-names", "--max-members", "--max-member-size",
                       "--max-total-size", "--max-nesting", "--timeout"):
            assert option in out, (command, option)
    assert "--timeout" not in run("rules", "--help").stdout


# --- rules / explain ------------------------------------------------------------------------


def test_rules_table(fake: Calls) -> None:
    result = run("rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "SUMMARY"]
    assert lines[1].split()[:3] == ["FAKE001", "fake-empty-bound", "error"]
    assert lines[1].endswith("An index bound is an input dimension that the package accepts as 0.")
    assert lines[2].split()[:3] == ["FAKE002", "fake-unchecked-range", "warning"]
    assert [r["code"] for r in json.loads(run("rules", "--format", "json").stdout)] == ["FAKE001", "FAKE002"]


@pytest.mark.parametrize("selector", ["fake-empty-bound", "FAKE001", "fake001"])
def test_explain(fake: Calls, selector: str) -> None:
    result = run("explain", selector)
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("FAKE001 fake-empty-bound (error)\n")
    for section in DOC_SECTIONS:
        assert f"\n{section}\n" in out
    assert "##" not in out and "```" not in out
    assert "    x[idx]  # x: [n, 8]" in out


def test_explain_unknown(fake: Calls) -> None:
    result = run("explain", "AOTI")
    assert result.exit_code == 2
    assert "unknown rule 'AOTI'" in _error_line(result)


def test_registered_rules_are_documented() -> None:
    """Every real rule: identity, a summary line and the four documentation sections."""
    for rule in all_rules():
        assert rule.summary(), rule
        missing = [s for s in DOC_SECTIONS if not rule.sections().get(s)]
        assert not missing, f"{rule.code} {rule.name}: docstring lacks sections {missing}"


# --- inspect / why --------------------------------------------------------------------------


def test_inspect_uses_lead_renderer(fake: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    renderer = types.ModuleType("analyzer.report.inspect")
    renderer.render_text = lambda pkg: f"package {pkg.path}"
    renderer.render_json = lambda pkg: json.dumps({"path": pkg.path})
    monkeypatch.setitem(sys.modules, "analyzer.report.inspect", renderer)
    monkeypatch.setattr(analyzer.report, "inspect", renderer, raising=False)
    result = run("inspect", "a.pt2")
    assert result.exit_code == 0 and result.stdout == "package a.pt2\n"
    assert json.loads(run("inspect", "a.pt2", "--format", "json").stdout) == {"path": "a.pt2"}
    fake.raises = ArchiveError("a.pt2: too many members")
    result = run("inspect", "a.pt2")
    assert result.exit_code == 2 and "too many members" in _error_line(result)


@pytest.fixture
def fake_why(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Package, str]]:
    seen: list[tuple[Package, str]] = []

    @dataclass
    class Explanation:
        matched: bool
        text: str

    module = types.ModuleType("analyzer.explain.why")

    def explain_failure(package, text, deadline=None):
        seen.append((package, text))
        return Explanation(matched="tmp4 < ks0" in text, text=text)

    module.explain_failure = explain_failure
    monkeypatch.setitem(sys.modules, "analyzer.explain.why", module)
    # `from ..explain import why` reads the package's attribute first, once anything imported it
    import analyzer.explain

    monkeypatch.setattr(analyzer.explain, "why", module, raising=False)
    monkeypatch.setattr(analyzer, "why", module, raising=False)
    report = types.ModuleType("analyzer.report.why")
    report.render_text = lambda e: f"matched={e.matched}"
    report.render_json = lambda e: json.dumps({"matched": e.matched})
    monkeypatch.setitem(sys.modules, "analyzer.report.why", report)
    monkeypatch.setattr(analyzer.report, "why", report, raising=False)
    return seen


def test_why_message(fake: Calls, fake_why) -> None:
    result = run("why", "a.pt2", "index out of bounds: 0 <= tmp4 < ks0")
    assert result.exit_code == 0 and result.stdout == "matched=True\n"
    assert fake_why[0][0].path == "a.pt2"
    result = run("why", "a.pt2", "something else", "--format", "json")
    assert result.exit_code == 1 and json.loads(result.stdout) == {"matched": False}


def test_why_log_file_and_stdin(fake: Calls, fake_why, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("noise\nAssertion `index out of bounds: 0 <= tmp4 < ks0` failed.\n")
    assert run("why", "a.pt2", "--log", str(log)).exit_code == 0
    assert "noise" in fake_why[-1][1]
    assert run("why", "a.pt2", "--log", "-", input="0 <= tmp4 < ks0\n").exit_code == 0
    assert fake_why[-1][1] == "0 <= tmp4 < ks0\n"


def test_why_usage(fake: Calls, fake_why, tmp_path: Path) -> None:
    assert run("why", "a.pt2").exit_code == 2
    assert run("why", "a.pt2", "msg", "--log", "-").exit_code == 2
    result = run("why", "a.pt2", "--log", str(tmp_path / "missing.log"))
    assert result.exit_code == 2 and "missing.log" in _error_line(result)


# --- real packages (the real api, no fakes) --------------------------------------------------


def _real_package(name: str) -> Path:
    path = PT2 / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path


def test_real_package_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    pkg = _real_package("gather_dyn.cuda.pt2")
    result = run("check", str(pkg), "--format", "json")
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "aoti-lint.check/1"
    assert all(f["package"] == str(pkg) for f in doc["findings"])


def test_real_missing_package_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(str(tmp_path / "nope.pt2"))
    assert result.exit_code == 2
    assert "nope.pt2" in _error_line(result)


def test_real_not_a_package_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    junk = tmp_path / "junk.pt2"
    junk.write_bytes(b"PK\x03\x04 this is not a zip")
    result = run("check", str(junk))
    assert result.exit_code == 2
    _error_line(result)


def test_module_entry_point_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", str(tmp_path / "nope.pt2")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("aoti-lint: error: ") and proc.stderr.count("\n") == 1


# --- real packages: limits and input names --------------------------------------------------


@pytest.mark.parametrize("command", [["check"], [], ["inspect"], ["why", "--log", "-"]])
def test_real_member_size_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    pkg = _real_package("gather_dyn.cuda.pt2")  # its wrapper.cpp is 37 800 bytes
    if command[:1] == ["why"]:
        pytest.importorskip("analyzer.explain.why", reason="analyzer/explain/why.py is not written yet")
    result = run(*command[:1], "--max-member-size", "1K", *command[1:], str(pkg), input="x\n")
    assert result.exit_code == 2, result.output
    line = _error_line(result)
    assert "wrapper.cpp" in line and "1 KiB per-member limit" in line
    assert result.stdout == ""


def test_real_member_size_limit_from_pyproject(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    pkg = _real_package("gather_dyn.cuda.pt2")
    (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint]\nmax-member-size = "1K"\n')
    result = run("check", str(pkg))
    assert result.exit_code == 2
    assert "1 KiB per-member limit" in _error_line(result)
    result = run("check", str(pkg), "--max-member-size", "64M", "--format", "json")
    assert result.exit_code in (0, 1), result.output  # the command line wins
    assert json.loads(result.stdout)["schema"] == "aoti-lint.check/1"


def test_real_total_size_and_member_count_limits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    pkg = _real_package("gather_dyn.cuda.pt2")  # 11 members, ~41 KB of text
    result = run("check", str(pkg), "--max-total-size", "40K")
    assert result.exit_code == 2 and "40 KiB limit on bytes read from the whole package" in _error_line(result)
    result = run("check", str(pkg), "--max-members", "2")
    assert result.exit_code == 2 and "more than 2 members" in _error_line(result)
    assert run("check", str(pkg), "--max-members", "11", "--max-total-size", "1M").exit_code in (0, 1)


def test_real_timeout_zero_expires_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """0 is not "no limit": Deadline(0) has expired before the first member is listed."""
    monkeypatch.chdir(tmp_path)
    pkg = _real_package("gather_dyn.cuda.pt2")
    for command in (["check"], ["inspect"]):
        result = run(*command, str(pkg), "--timeout", "0")
        assert result.exit_code == 2, result.output
        line = _error_line(result)
        assert "exceeded the 0 s time limit" in line and str(pkg) in line
    assert run("check", str(pkg), "--timeout", "60").exit_code in (0, 1)


def test_real_input_names_in_inspect_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    pkg = _real_package("gather_dyn.cuda.stripped.pt2" if (PT2 / "gather_dyn.cuda.stripped.pt2").is_file()
                        else "gather_dyn.cuda.pt2")
    result = run("inspect", str(pkg), "--format", "json", "--input-names", "x,idx")
    assert result.exit_code == 0, result.output
    inputs = json.loads(result.stdout)["models"][0]["inputs"]
    assert [(i["name"], i.get("user_name")) for i in inputs] == [("arg0_1", "x"), ("arg1_1", "idx")]
