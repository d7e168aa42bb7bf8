"""Reporters on a fixed list of realistic findings, against golden files in tests/golden/report/.

Regenerate the golden files after an intended change with `AOTI_LINT_UPDATE_GOLDEN=1 pytest
tests/test_report.py`, then review the diff.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from analyzer import __version__
from analyzer.core.findings import Finding, Location, Severity
from analyzer.report import FORMATS, render
from analyzer.report import github as github_report
from analyzer.report import markdown as markdown_report
from analyzer.report.common import fingerprint, summary
from analyzer.rules import Rule

GOLDEN = Path(__file__).parent / "golden" / "report"
SARIF_SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "sarif-schema-2.1.0.json"
UPDATE = bool(os.environ.get("AOTI_LINT_UPDATE_GOLDEN"))

CUDA_ROOT = "gather_dyn.cuda/data/aotinductor/model"
CUDA_WRAPPER = f"{CUDA_ROOT}/ckaicpk46vp7tedo4uq3knwg75rzaht3kn7uure54km2eevnd6v5.wrapper.cpp"
STATIC_KERNEL = "gather_static.cpu/data/aotinductor/model/cabc123def456.kernel.cpp"
REDUCE_KERNEL = "empty_reduce.cpu/data/aotinductor/model/cq7rv2k5l3m4n6p8.kernel.cpp"


# Stand-in rules with clearly fake names and codes (never a real rule's), documented the way real
# rules must be.
class EmptyIndexBound(Rule):
    """An index bound is an input dimension that the package accepts as 0.

    ## What it does
    Finds index-bound assertions whose bound is a model input's size that may be 0.

    ## Why it matters
    With an empty input every index is out of bounds: the package raises or trips a device assert.

    ## Example
    ```python
    x[idx]  # x: [n, 8], n = Dim("n")
    ```

    ## Fix
    Declare `Dim("n", min=1)` or check `x.shape[0] > 0` before calling the package.
    """

    name = "fake-empty-bound"
    code = "FAKE001"
    severity = Severity.ERROR


class UncheckedInputRange(Rule):
    """The compiled input range is only checked with AOTI_RUNTIME_CHECK_INPUTS set.

    ## What it does
    Reports input dimensions whose `check_input_N` checks run only when an environment variable is set.

    ## Why it matters
    Without the checks an out-of-range size reaches the kernels.

    ## Example
    `expected it to be >= 2` inside a gated `check_input_0`.

    ## Fix
    Set `AOTI_RUNTIME_CHECK_INPUTS=1` or validate shapes yourself.
    """

    name = "fake-unchecked-range"
    code = "FAKE002"
    severity = Severity.WARNING


class DataIndexBound(Rule):
    """An index bound is a constant: only the index data can trip it.

    ## What it does
    Reports constant-bound assertions whose index is loaded from an input.

    ## Why it matters
    The failure depends on values, not shapes: shape checks cannot prevent it.

    ## Example
    `0 <= tmp7 < 10L` for `x[idx]` with a static `x`.

    ## Fix
    Validate index values before calling the package.
    """

    name = "fake-data-bound"
    code = "FAKE003"
    severity = Severity.INFO


class EmptyReduction(Rule):
    """A reduction or division runs over a dimension that may be empty.

    ## What it does
    Finds max/min reductions and divisions by a size that the package accepts as 0.

    ## Why it matters
    The output is NaN or -inf where eager PyTorch would raise.

    ## Example
    `x.amax(dim=0) + x.mean(dim=0)` with `x: [n, 5]`.

    ## Fix
    Guard the empty case in the model or declare `min=1`.
    """

    name = "fake-empty-reduction"
    code = "FAKE101"
    severity = Severity.ERROR


class MissingKernelSource(Rule):
    """A kernel's source is not in the package, so its assertions cannot be checked.

    ## What it does
    Reports launched kernels without source in the archive.

    ## Why it matters
    Findings about those kernels are missing, not absent.

    ## Example
    A `.cubin` with no matching `call_triton_` helper.

    ## Fix
    Build the package with the default configuration, which keeps kernel sources.
    """

    name = "fake-missing-source"
    code = "FAKE201"
    severity = Severity.WARNING


FAKE_RULES = [EmptyIndexBound, UncheckedInputRange, DataIndexBound, EmptyReduction, MissingKernelSource]

ASSERT_LINE = (
    '        tl.device_assert(((0 <= tmp4) & (tmp4 < ks0)) | ~(ymask), '
    '"index out of bounds: 0 <= tmp4 < ks0")'
)

FINDINGS = [
    Finding(
        code="FAKE001",
        rule="fake-empty-bound",
        severity=Severity.ERROR,
        message="index bound `ks0` is x.size(0) (input 0 dim 0), which the package accepts as 0: "
        "`0 <= tmp4 < ks0` fails for every index",
        model="model",
        location=Location(CUDA_WRAPPER, 656, 9),
        kernel="triton_poi_fused_index_mul_0",
        input=0,
        dim=0,
        symbol="s77",
        witness="arg0_1.shape = (0, 8), arg1_1.shape = (3,)",
        fix='declare Dim("n", min=1) for arg0_1 dim 0, or reject empty inputs before calling the package',
        chain=(
            "assertion `0 <= tmp4 < ks0` in triton_poi_fused_index_mul_0 (line 656)",
            "-> ks0 is parameter 3 of triton_poi_fused_index_mul_0",
            "-> launch at line 868 passes s77",
            "-> s77 = arg0_1_size[0] (line 855)",
            "-> arg0_1 is input 0, dim 0 compiled as [2, inf) but checked only with AOTI_RUNTIME_CHECK_INPUTS",
        ),
        key="0 <= idx < s77",
        package="pt2/gather_dyn.cuda.pt2",
        snippet=("        tmp4 = tl.where(tmp3, tmp2, tmp0)", ASSERT_LINE),
    ),
    Finding(
        code="FAKE002",
        rule="fake-unchecked-range",
        severity=Severity.WARNING,
        message="arg0_1.size(0) must be >= 2 but the check runs only with AOTI_RUNTIME_CHECK_INPUTS set",
        model="model",
        location=Location(CUDA_WRAPPER, 709, 5),
        input=0,
        dim=0,
        symbol="s77",
        fix="run with AOTI_RUNTIME_CHECK_INPUTS=1 or check the shape before calling the package",
        key="s77 >= 2",
        package="pt2/gather_dyn.cuda.pt2",
        snippet=("    if (arg0_1_size[0] < 2) {",),
    ),
    Finding(
        code="FAKE003",
        rule="fake-data-bound",
        severity=Severity.INFO,
        message="index bound `10L` is a constant: only the values of input 1 (arg1_1) can trip it",
        model="model",
        location=Location(STATIC_KERNEL, 21, 4),
        kernel="cpp_fused_index_mul_0",
        input=1,
        key="0 <= idx < 10",
        package="pt2/gather_static.cpu.stripped.pt2",
        snippet=("\t\t\tTORCH_CHECK((0 <= tmp7) & (tmp7 < 10L), \"index out of bounds: 0 <= tmp7 < 10L\");",),
    ),
    Finding(
        code="FAKE101",
        rule="fake-empty-reduction",
        severity=Severity.ERROR,
        message="mean over x.size(0) divides by 0 when it is empty: 100% of the output is NaN",
        model="model",
        location=Location(REDUCE_KERNEL, 34, 37),
        kernel="cpp_fused_add_amax_mean_0",
        input=0,
        dim=0,
        symbol="s77",
        witness="arg0_1.shape = (0, 5)",
        fix="guard the empty case (x.shape[0] == 0) in the model",
        chain=("division by `ks0` in cpp_fused_add_amax_mean_0", "-> ks0 = s77 = arg0_1.size(0)"),
        key="mean / s77",
        package="pt2/empty_reduce.cpu.stripped.pt2",
    ),
    Finding(
        code="FAKE201",
        rule="fake-missing-source",
        severity=Severity.WARNING,
        message="no source for kernel triton_poi_fused_0, its assertions are not checked",
        model="model",
        location=Location("gather_dyn.cuda/data/aotinductor/model/"),
        kernel="triton_poi_fused_0",
        package="pt2/gather_dyn.cuda.pt2",
    ),
]
PACKAGES = [
    "pt2/gather_dyn.cuda.pt2",
    "pt2/gather_static.cpu.stripped.pt2",
    "pt2/empty_reduce.cpu.stripped.pt2",
]


def _normalize(fmt: str, text: str) -> str:
    """Keep golden files valid across version bumps."""
    if fmt == "sarif":
        text = text.replace(f'"{__version__}"', '"<version>"')
    return text


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing golden file {path}; run with AOTI_LINT_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


EXT = {"text": "txt", "full": "txt", "concise": "txt", "json": "json", "sarif": "sarif", "github": "txt", "markdown": "md",
       "rdjson": "json", "gitlab": "json", "junit": "xml"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_golden(fmt: str) -> None:
    text = FORMATS[fmt](FINDINGS, packages=PACKAGES, color=False, rules=FAKE_RULES)
    _golden(f"{fmt}.{EXT[fmt]}", _normalize(fmt, text))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_golden_no_findings(fmt: str) -> None:
    text = FORMATS[fmt]([], packages=PACKAGES[:1], color=False, rules=FAKE_RULES)
    _golden(f"empty.{fmt}.{EXT[fmt]}", _normalize(fmt, text))


@pytest.mark.parametrize("fmt", ["text", "full", "concise"])
def test_text_color_only_when_asked(fmt: str) -> None:
    plain = FORMATS[fmt](FINDINGS, packages=PACKAGES, color=False, rules=FAKE_RULES)
    colored = FORMATS[fmt](FINDINGS, packages=PACKAGES, color=True, rules=FAKE_RULES)
    assert "\x1b[" not in plain
    assert "\x1b[" in colored
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain


def test_text_caret_under_column() -> None:
    text = FORMATS["full"](FINDINGS[:1], packages=PACKAGES[:1], color=False, rules=FAKE_RULES)
    lines = text.splitlines()
    src = next(line for line in lines if "tl.device_assert" in line)
    caret = lines[lines.index(src) + 1]
    assert caret.index("^") == src.index("tl.device_assert")


def test_text_caret_with_tabs() -> None:
    text = FORMATS["full"](FINDINGS[2:3], packages=PACKAGES, color=False, rules=FAKE_RULES)
    lines = text.splitlines()
    src = next(line for line in lines if "TORCH_CHECK" in line)
    caret = lines[lines.index(src) + 1]
    # Column 4 is the first character after three tabs, which expand to 12 columns.
    assert caret.index("^") == src.index("TORCH_CHECK")


def test_text_header_and_summary() -> None:
    full = FORMATS["full"](FINDINGS, packages=PACKAGES, color=False, rules=FAKE_RULES)
    assert full.startswith(
        f"{CUDA_WRAPPER}:656:9: FAKE001 [fake-empty-bound] error: index bound `ks0`"
    )
    assert "    -> s77 = arg0_1_size[0] (line 855)" in full
    text = FORMATS["text"](FINDINGS, packages=PACKAGES, color=False, rules=FAKE_RULES)
    # The default: the headline (its message wrapped at 100 columns), no chain, no snippet.
    # (`[rule]` left out: with this long member path the line would pass 100 columns)
    assert text.startswith(f"{CUDA_WRAPPER}:656:9: FAKE001 error:\n    index bound `ks0`")
    assert "s77 = arg0_1_size[0]" not in text and "tl.device_assert" not in text
    for out in (text, full):
        assert "  witness: arg0_1.shape = (0, 8), arg1_1.shape = (3,)" in out
        assert out.endswith("Found 2 errors, 2 warnings, 1 info in 3 packages (runtime checks: unset).\n")


def test_text_short_fix_and_witnesses() -> None:
    """The default format keeps a long fix to two lines (whole clauses when they fit) and lists
    the witnesses that fit on one line, counting the rest; `full` prints every one."""
    clauses = ["run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package rejects x.size(0) < 2",
               "or check `x.shape[0] >= 2` before calling the model and handle smaller inputs outside it",
               "`aoti-lint contract PKG --emit python` writes a check_inputs() guard that rejects such inputs"]
    witnesses = ("x.shape = (1, 8)", "x.shape = (0, 8)", "x = `torch.zeros(8, 1).t()` (shape (1, 8), strides "
                 "(1, 1))", "x = `torch.zeros(1, 8, dtype=torch.float64)` (float64 where float32 is compiled)")
    f = replace(FINDINGS[0], fix="; ".join(clauses), witness=witnesses[0], witnesses=witnesses)
    text = FORMATS["text"]([f], packages=PACKAGES[:1], color=False, rules=FAKE_RULES)
    lines = text.splitlines()
    fix = [n for n, line in enumerate(lines) if line.startswith("  fix: ")][0]
    assert lines[fix] + " " + lines[fix + 1].strip() == "  fix: " + "; ".join(clauses[:2]) + "; …"
    assert not lines[fix + 2]
    assert "  witness: x.shape = (1, 8); x.shape = (0, 8) (and 2 more)" in lines
    assert all(len(line) <= 100 for line in lines[1:])
    full = FORMATS["full"]([f], packages=PACKAGES[:1], color=False, rules=FAKE_RULES)
    assert "; ".join(clauses) in full and all(f"  witness: {w}" in full.splitlines() for w in witnesses)


def test_confirmation_in_text_formats() -> None:
    """A finding `aoti-lint confirm` ran (or a report of it rendered again) says its verdict."""
    f = replace(FINDINGS[0], confirmation={"verdict": "confirmed", "probe": "x.shape = (0, 8)", "reason": None,
                                           "outcome": {"what": "SIGABRT", "eager": "IndexError: out of range"}})
    for fmt in ("text", "full"):
        out = FORMATS[fmt]([f], packages=PACKAGES[:1], color=False, rules=FAKE_RULES)
        assert "  confirm: confirmed: SIGABRT at x.shape = (0, 8); eager: IndexError: out of range" in out


def test_summary_wording() -> None:
    assert summary([], ["a"]) == "All checks passed (runtime checks: unset)."
    assert summary(FINDINGS[:1], ["a"]) == "Found 1 error, 0 warnings, 0 infos in 1 package (runtime checks: unset)."


def test_json_contract() -> None:
    doc = json.loads(FORMATS["json"](FINDINGS, packages=PACKAGES, color=False, rules=FAKE_RULES))
    assert doc["schema"] == "aoti-lint.check/1"
    first = doc["findings"][0]
    assert list(first) == [
        "code", "rule", "severity", "message", "detail", "message_key", "package", "model", "kernel", "input", "dim",
        "symbol", "location", "member", "member_line", "witness", "witnesses", "fix", "chain", "source",
    ]
    assert first["witnesses"] == [first["witness"]]  # a finding built with one witness
    assert first["severity"] == "error"
    assert first["location"] == {"path": CUDA_WRAPPER, "line": 656, "column": 9}
    assert (first["input"], first["dim"]) == (0, 0)
    last = doc["findings"][-1]
    assert (last["input"], last["dim"], last["witness"], last["witnesses"]) == (None, None, None, [])
    assert [f["severity"] for f in doc["findings"]] == ["error", "warning", "info", "error", "warning"]


def _sarif(findings=FINDINGS, rules=FAKE_RULES) -> dict:
    return json.loads(FORMATS["sarif"](findings, packages=PACKAGES, color=False, rules=rules))


def test_sarif_validates_against_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA}")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(_sarif(), schema)
    jsonschema.validate(_sarif(findings=[]), schema)


def test_sarif_driver_lists_every_rule() -> None:
    run = _sarif(findings=[])["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "aoti-lint"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == [r.code for r in FAKE_RULES]
    first = driver["rules"][0]
    assert first["name"] == "fake-empty-bound"
    assert first["shortDescription"]["text"] == EmptyIndexBound.summary()
    assert first["fullDescription"]["text"].startswith("Finds index-bound assertions")
    assert "## Fix" in first["help"]["markdown"]
    assert "## " not in first["help"]["text"] and "Why it matters" in first["help"]["text"]
    assert [r["defaultConfiguration"]["level"] for r in driver["rules"]] == [
        "error", "warning", "note", "error", "warning"
    ]
    assert run["results"] == []


def test_sarif_results() -> None:
    results = _sarif()["runs"][0]["results"]
    first = results[0]
    assert first["ruleId"] == "FAKE001" and first["ruleIndex"] == 0 and first["level"] == "error"
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == CUDA_WRAPPER
    assert physical["region"]["startLine"] == 656 and physical["region"]["startColumn"] == 9
    logical = first["locations"][0]["logicalLocations"][0]
    assert logical["fullyQualifiedName"] == "pt2/gather_dyn.cuda.pt2::model::triton_poi_fused_index_mul_0"
    # text: the headline only; markdown: headline, detail, witness, fix.
    assert first["message"]["text"] == FINDINGS[0].message
    assert "Witness: `arg0_1.shape = (0, 8), arg1_1.shape = (3,)`" in first["message"]["markdown"]
    assert results[2]["level"] == "note"
    # A package-level finding has no line: no region at all.
    assert "region" not in results[-1]["locations"][0]["physicalLocation"]
    assert results[-1]["ruleIndex"] == 4


def test_sarif_uri_is_escaped() -> None:
    odd = replace(FINDINGS[0], location=Location("pkg/my model/a#b.cpp", 1, 1))
    result = _sarif(findings=[odd])["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/my%20model/a%23b.cpp"


def test_sarif_unknown_rule_has_no_rule_index() -> None:
    results = _sarif(rules=FAKE_RULES[1:])["runs"][0]["results"]
    assert "ruleIndex" not in results[0]
    assert results[1]["ruleIndex"] == 0


def test_fingerprint_ignores_build_hash_in_member_path() -> None:
    rebuilt = replace(
        FINDINGS[0],
        location=Location(CUDA_WRAPPER.replace("ckaicpk46vp7", "czzzzzzzzzzz"), 656, 9),
        message="reworded message",
    )
    a = _sarif(findings=[FINDINGS[0]])["runs"][0]["results"][0]["partialFingerprints"]
    b = _sarif(findings=[rebuilt])["runs"][0]["results"][0]["partialFingerprints"]
    assert a == b == {"aotiLint/v1": fingerprint(FINDINGS[0])}
    # The package path is part of the identity (two packages of one model are two findings).
    assert fingerprint(replace(FINDINGS[0], package="elsewhere/gather_dyn.cuda.pt2")) != fingerprint(FINDINGS[0])


@pytest.mark.parametrize(
    "change",
    [{"input": 1}, {"dim": 1}, {"key": "0 <= idx < s95"}, {"model": "other"}, {"rule": "x-y"}],
)
def test_fingerprint_changes_with_identity(change: dict) -> None:
    assert fingerprint(replace(FINDINGS[0], **change)) != fingerprint(FINDINGS[0])


def test_fingerprints_distinct_across_fixture() -> None:
    prints = [fingerprint(f) for f in FINDINGS]
    assert len(set(prints)) == len(prints)


def test_github_escaping() -> None:
    f = replace(
        FINDINGS[1],
        message="100% bad\r\nsecond line",
        location=Location("odd,dir/a:b.cpp", 3, 4),
        fix=None,
    )
    line = github_report.render([f], packages=[], color=False, rules=FAKE_RULES)
    assert line == (
        "::warning file=odd%2Cdir/a%3Ab.cpp,line=3,col=4,title=FAKE002 fake-unchecked-range"
        "::100%25 bad%0D%0Asecond line\n"
    )
    assert github_report.escape_data("a%0A") == "a%250A"  # % first, so escapes are not doubled


def test_github_levels_and_no_line() -> None:
    out = github_report.render(FINDINGS, packages=[], color=False, rules=FAKE_RULES).splitlines()
    assert [line.split(" ", 1)[0] for line in out] == [
        "::error", "::warning", "::notice", "::error", "::warning"
    ]
    assert out[-1].startswith("::warning file=gather_dyn.cuda/data/aotinductor/model/,title=")


def test_markdown_cells_escape_pipes() -> None:
    f = replace(FINDINGS[0], message="a | b\nc")
    text = markdown_report.render([f], packages=PACKAGES[:1], color=False, rules=FAKE_RULES)
    row = next(line for line in text.splitlines() if "| FAKE001 |" in line)
    assert "a \\| b\\nc" in row  # a line break from the input is shown, never a <br> or a new row
    assert row.count(" | ") == 3  # four cells, none split by the message's pipe


def test_markdown_code_span_fence() -> None:
    assert markdown_report.code_span("a`b") == "``a`b``"
    assert markdown_report.code_span("`x`") == "`` `x` ``"


def test_render_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render("xml", FINDINGS)


def test_formats_match_config_names() -> None:
    from analyzer.app.config import FORMAT_NAMES

    assert set(FORMATS) == set(FORMAT_NAMES)


HOSTILE_CONFIRMATION = {"verdict": "confirmed", "probe": "x.shape = (0, 8)", "reason": None,
                        "outcome": {"what": "RuntimeError: <img src=x onerror=alert(1)> @admin \x1b[31m\n::error::x",
                                    "eager": "ok </details> [a](https://evil.example)"}}


def test_confirmation_in_markdown_and_html_through_the_escaping_layer() -> None:
    """A verdict quotes what the package printed: the comment and the page show it inert."""
    from analyzer.report import html

    f = replace(FINDINGS[0], confirmation=HOSTILE_CONFIRMATION)
    md = render("markdown", [f], packages=PACKAGES[:1])
    [line] = [line for line in md.splitlines() if line.startswith("**Confirm:** ")]
    assert line.startswith("**Confirm:** confirmed: RuntimeError: &lt;img src=x onerror=alert(1)> `@admin`")
    # The closing tag made text, the link a code span (GitHub links nothing in one).
    assert "\\x1b[31m\\n::error::x" in line and "&lt;/details>" in line and "`[a](https://evil.example)`" in line
    assert md.count("</details>") == 1
    page = html._finding("p0-f0", f, None)  # one finding's article, as the page writes it
    assert "confirm: confirmed: RuntimeError: &lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img" not in page and "\x1b" not in page and '<p class="confirm confirmed">' in page
    for fmt in ("text", "full"):
        out = render(fmt, [f], packages=PACKAGES[:1])
        assert "\x1b" not in out and "\n::" not in out
        assert "confirm: confirmed: RuntimeError: <img src=x onerror=alert(1)> @admin \\x1b[31m\\n::error::x" in \
            out.replace("\n    ", " ")


def test_confirm_markdown_says_what_ran_and_each_verdict() -> None:
    """`aoti-lint confirm --format markdown`, from a report as confirm builds it (nothing run here)."""
    from analyzer.explain import confirm
    from analyzer.app.cli_confirm import render_markdown

    f = replace(FINDINGS[0], confirmation=HOSTILE_CONFIRMATION)
    outcome = confirm.Outcome(confirm.Status.FAILED, "SIGABRT <b>@x</b>")
    probe = confirm.Probe("x.shape[0] = 0", ((0, 8),))
    model = confirm.ModelReport("model", probes=[(probe, outcome)], unexplained=[(probe, outcome)])
    report = confirm.Report("pt2/gather_dyn.cuda.pt2", None, [FINDINGS[0]], [], [model])
    md = render_markdown([report], [f], PACKAGES[:1])
    assert md.startswith("## aoti-lint\n\n**aoti-lint confirm** RAN `pt2/gather_dyn.cuda.pt2`")
    assert "**Confirm:** confirmed: RuntimeError: &lt;img" in md and md.count("</details>") == 1
    # The mention-like word is a code span: inert, tags and all.
    assert md.endswith("- `pt2/gather_dyn.cuda.pt2`, model `model`: `x.shape[0] = 0`: SIGABRT `<b>@x</b>`\n")
