"""Headlines first, details after, on real packages: every finding's message is a
headline of at most 100 characters in the user's names (no compiler name when the exported program
gives names), `--format concise` lines stay within 160 characters, findings come by severity, and a
fix repeated within a package is printed once."""

from __future__ import annotations

import json
from dataclasses import replace
import re
from functools import lru_cache
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.core.findings import Severity
from analyzer.query.headline import LIMIT, shorten
from analyzer.core.messages import REPORT
from analyzer.rules import catalog
from analyzer.report import render
from analyzer.report.concise import WIDTH
from conftest import COMPILER_NAME, FIXTURES, REPO

REAL = FIXTURES / "real"
STRANGER = FIXTURES / "stranger"


def _exported(package: Path) -> Path | None:
    """The exported program of a fixture: `NAME.ep.pt2` beside it, or one folder up for CUDA builds."""
    stem = package.name.split(".")[0]
    for folder in (package.parent, package.parent.parent):
        candidate = folder / f"{stem}.ep.pt2"
        if candidate.exists():
            return candidate
    return None


PACKAGES = sorted(p for folder in (FIXTURES, REAL, REAL / "cuda", STRANGER, STRANGER / "cuda")
                  for p in folder.glob("*.stripped.pt2") if _exported(p) is not None)


@lru_cache(maxsize=None)
def _lint(package: Path, exported: bool = True):
    ep = _exported(package) if exported else None
    return api.lint(str(package), api.Options(exported_program=None if ep is None else str(ep)))


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_the_fixtures_cover_every_family():
    codes = {f.code for p in PACKAGES for f in _lint(p).findings}
    assert len(PACKAGES) >= 40
    assert {"AOTI001", "AOTI002", "AOTI003", "AOTI004", "AOTI005", "AOTI012", "AOTI013", "AOTI014"} <= codes


@pytest.mark.parametrize("package", PACKAGES, ids=_rel)
def test_headlines_are_short_and_in_the_users_names(package):
    result = _lint(package)
    for f in result.findings:
        assert f.message_key in catalog()["HEADLINES"], f.message_key
        assert len(f.message) <= LIMIT, f.message
        assert not COMPILER_NAME.search(f.message), f.message
        assert f.detail and f.detail != f.message  # the long explanation stays, as detail
    for line in render("concise", result.findings, packages=result.packages).splitlines():
        assert len(line) <= WIDTH, line


def test_headlines_without_names_are_short_too():
    for name in ("gather_dyn.cuda.stripped.pt2", "small_transformer.cpu.stripped.pt2"):
        for f in _lint(FIXTURES / name, exported=False).findings:
            assert len(f.message) <= LIMIT and not re.search(r"\btmp\d+|\bks\d+|cpp_fused|triton_", f.message), f.message


def test_headline_says_effect_module_and_size():
    """GPT-2's position table: the size that trips it, what it does on the device, the module."""
    cpu = [f for f in _lint(REAL / "gpt2.cpu.stripped.pt2").findings if f.code == "AOTI003"]
    cuda = [f for f in _lint(REAL / "cuda" / "gpt2.cuda.stripped.pt2").findings if f.code == "AOTI003"]
    assert cpu and cuda
    for f in cpu:
        assert f.message.startswith("`x.shape[1]` > 128 aborts") and "`inner.wpe` (Embedding)" in f.message
    assert all("crashes" in f.message for f in cuda)
    (gather,) = [f for f in _lint(FIXTURES / "gather_dyn.cuda.stripped.pt2").findings if f.code == "AOTI001"]
    assert gather.message.startswith("empty `x.shape[0]` crashes the index at generate.py:")


def test_huge_user_names_are_cut_safely(tmp_path):
    name = "x" * 300
    result = api.lint(str(FIXTURES / "gather_dyn.cuda.stripped.pt2"), api.Options(input_names=(name, "idx")))
    assert result.findings
    for f in result.findings:
        assert len(f.message) <= LIMIT and f.message.count("`") % 2 == 0, f.message
        assert f.input != 0 or name in f.detail  # the detail keeps the whole name
    for line in render("concise", result.findings, packages=result.packages).splitlines():
        assert len(line) <= WIDTH
    assert shorten("a `" + "b" * 200 + "` c", 20) == "a…"


def test_reports_are_sorted_by_severity_within_each_package():
    a, b = REAL / "bert.cpu.stripped.pt2", FIXTURES / "gather_dyn.cpu.stripped.pt2"
    findings = [*_lint(b).findings, *_lint(a).findings]
    doc = json.loads(render("json", findings, packages=[1, 2]))["findings"]
    packages = [entry["package"] for entry in doc]
    assert packages == sorted(packages, key=[str(b), str(a)].index)  # packages keep their input order
    for package in (str(a), str(b)):
        levels = [Severity.parse(e["severity"]) for e in doc if e["package"] == package]
        assert levels == sorted(levels, reverse=True)
    # BERT's error (size 0 reaches CPU flash attention) leads its block.
    first_of_a = [e["package"] for e in doc].index(str(a))
    assert doc[first_of_a]["code"] == "AOTI002" and doc[first_of_a]["severity"] == "error"
    # An error found after the rest still leads: the order does not depend on the rules' order.
    again = json.loads(render("json", list(reversed(findings)), packages=[1, 2]))["findings"]
    assert again[[e["package"] for e in again].index(str(a))]["severity"] == "error"
    # then by location: each severity's findings in path, line, column order
    for package in (str(a), str(b)):
        for level in ("error", "warning"):
            places = [(e["location"]["path"], e["location"]["line"], e["location"]["column"]) for e in doc
                      if e["package"] == package and e["severity"] == level]
            assert places == sorted(places)


def test_repeated_fix_is_printed_once_per_package():
    result = _lint(REAL / "gpt2.cpu.stripped.pt2")
    [first] = [f for f in result.findings if f.code == "AOTI003"]
    # Two findings of one package with the same fix (another table past the same max, say).
    second = replace(first, message="another finding", location=replace(first.location, line=first.location.line + 1))
    # `full` prints the whole fix; the default its first two lines (the same test on its start).
    for fmt, fix in (("full", first.fix), ("text", first.fix[:60])):
        text = render(fmt, [first, second], packages=result.packages)
        assert text.count(fix) == 1
        assert text.count("fix: " + REPORT["see-fix"].format(code="AOTI003")) == 1
        # Per package: the same package checked under two paths prints it in full twice.
        again = [replace(f, package="other.pt2") for f in (first, second)]
        assert render(fmt, [first, second, *again], packages=[1, 2]).count(fix) == 2


def test_one_finding_for_a_check_fused_into_several_kernels():
    """GPT-2's position embedding is fused into three kernels, each with its own copy of the check
    `tmpN < 128L`: one finding (same rule, headline, witness, fix), the other two under `also`."""
    result = _lint(REAL / "gpt2.cpu.stripped.pt2")
    [f] = [f for f in result.findings if f.code == "AOTI003"]
    assert len(f.also) == 2 and len({f.kernel, *(k for k, _ in f.also)}) == 3
    text = render("full", result.findings, packages=result.packages)
    assert all(f"also in {kernel} at " in text for kernel, _ in f.also)
    doc = json.loads(render("json", result.findings, packages=result.packages))
    [entry] = [e for e in doc["findings"] if e["code"] == "AOTI003"]
    assert [a["kernel"] for a in entry["also"]] == [k for k, _ in f.also]
    assert all("also" not in e for e in doc["findings"] if e["code"] != "AOTI003")


def test_full_block_is_headline_then_detail():
    result = _lint(FIXTURES / "gather_dyn.cuda.stripped.pt2")
    text = render("full", result.findings, packages=result.packages)
    (empty,) = [f for f in result.findings if f.code == "AOTI001"]
    block = next(b for b in text.split("\n\n") if "AOTI001" in b.splitlines()[0]).splitlines()
    first, second = block[:2]
    assert first.endswith(empty.message)
    assert second.startswith("  index bound `ks0`")  # the detail, indented, after the headline
    wrapped = block[1:next(i for i, line in enumerate(block) if line.startswith("  in "))]
    assert len(wrapped) >= 2 and all(len(line) <= 100 for line in wrapped)
    assert " ".join(line.strip() for line in wrapped) == " ".join(empty.detail.split())


def test_json_message_is_the_headline_and_detail_the_explanation():
    result = _lint(FIXTURES / "gather_dyn.cuda.stripped.pt2")
    doc = json.loads(render("json", result.findings, packages=result.packages))
    by_code = {f.code: f for f in result.findings}  # one finding per rule here
    assert len(by_code) == len(result.findings) == len(doc["findings"])
    for entry in doc["findings"]:
        f = by_code[entry["code"]]
        assert entry["message"] == f.message and entry["detail"] == f.detail and entry["message_key"] == f.message_key
    sarif = json.loads(render("sarif", result.findings, packages=result.packages))
    for res in sarif["runs"][0]["results"]:
        assert len(res["message"]["text"]) <= LIMIT and res["properties"]["detail"] in res["message"]["markdown"]


# --- markdown for a pull-request comment -------------------------------------------

def _markdown_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith(("| severity", "| ---"))]


@pytest.mark.parametrize("name", ["real/gpt2.cpu.stripped.pt2", "real/cuda/bert.cuda.stripped.pt2",
                                  "gather_dyn.cuda.stripped.pt2", "empty_reduce.cpu.stripped.pt2"])
def test_markdown_one_row_per_finding_nothing_twice(name):
    result = _lint(FIXTURES / name)
    findings = result.findings
    text = render("markdown", findings, packages=result.packages)
    rows = _markdown_rows(text)
    assert len(rows) == len(findings) == text.count("<details>")
    for f in findings:
        # the headline only in its row (identical headlines: one row each), never in the details
        same = sum(1 for g in findings if g.message == f.message)
        assert text.count(f.message) == same, f.message
        assert f.detail in text
    for fix in {f.fix for f in findings if f.fix}:
        assert text.count(fix) == 1  # printed once, then "as for CODE above"
    assert "| severity | count |" not in text  # the summary line says the counts once
    assert len(text) <= 60_000


def test_markdown_where_is_the_users_source_or_the_package():
    result = _lint(FIXTURES / "gather_dyn.cuda.stripped.pt2")
    rows = _markdown_rows(render("markdown", result.findings, packages=result.packages))
    # x empty with idx not: eager rejects it too (every index is out of range), so an info.
    (row,) = [r for r in rows if "| AOTI001 |" in r]
    assert "| 🔵 info | AOTI001 | empty `x.shape[0]` crashes the index at generate.py:" in row
    assert row.endswith("| `fixtures/generate.py:62` |")
    assert all(r.endswith("| `fixtures/gather_dyn.cuda.stripped.pt2` |") for r in rows if r != row)


def test_markdown_is_cut_to_its_budget_with_a_count():
    """A registry's worth of findings: the comment stays under 60,000 characters (GitHub's limit is
    65,536), the first findings keep their rows and details, a line counts the rest, and the
    unreadable packages keep their rows."""
    from analyzer.core.findings import PackageError
    from analyzer.report.markdown import BUDGET

    base = [f for name in ("real/gpt2.cpu.stripped.pt2", "real/bert.cpu.stripped.pt2",
                           "gather_dyn.cuda.stripped.pt2") for f in _lint(FIXTURES / name).findings]
    many = [f.__class__(**{**f.__dict__, "package": f"models/m{i:03d}.pt2"}) for i in range(60) for f in base]
    errors = [PackageError("models/broken.pt2", "not a zip file")]
    text = render("markdown", many, packages=list(range(61)), errors=errors)
    assert len(text) <= BUDGET
    rows = [r for r in _markdown_rows(text) if "unreadable-package" not in r]
    shown = text.count("<details>")
    assert rows and len(rows) == shown < len(many)
    more = re.search(r"\*\*(\d+) more findings in the full report\*\*", text)
    assert more is not None and int(more.group(1)) == len(many) - shown
    assert sum("unreadable-package" in r for r in _markdown_rows(text)) == 1
    # Under the budget nothing is cut and no count is printed.
    small = render("markdown", base, packages=[1, 2, 3])
    assert "more findings in the full report" not in small and small.count("<details>") == len(base)


def test_every_witness_is_printed():
    """resnetish's batch, declared [0, inf) and compiled for [2, 15]: 1, 0 and 16 all run unchecked;
    the text, markdown and HTML reports list each (JSON carries `witnesses`)."""
    result = _lint(REAL / "resnetish.cpu.stripped.pt2")
    [f] = [f for f in result.findings if f.code == "AOTI002"]
    assert len(f.witnesses) == 3
    text = render("full", result.findings, packages=result.packages)
    for w in f.witnesses:
        assert f"  witness: {w}\n" in text
    markdown = render("markdown", result.findings, packages=result.packages)
    assert "**Witnesses:** " + ", ".join(f"`{w}`" for w in f.witnesses) in markdown


def test_a_finding_about_dims_with_other_minimums_says_so():
    """torchvision's resnet18 (fixtures/stranger2): batch compiled for >= 2, h and w for >= 33, one
    AOTI002 for the input. Its headline compares only the first dim with 2 and says the others are
    below their own minimums; with one minimum for all (resnetish: batch alone) nothing changes."""
    package = FIXTURES / "stranger2" / "tv_resnet.cpu.stripped.pt2"
    result = api.lint([package], api.Options(exported_program=str(_exported(package))))
    (f,) = [f for f in result.findings if f.code == "AOTI002"]
    assert (f.dim, f.message_fields["min"], f.message_fields["more_dims"], f.message_fields["more_same_min"]) \
        == (0, 2, 2, False)
    assert f.message.startswith("`x.shape[0]` < 2 (and 2 more dims below theirs) ")
    assert "more dims) < 2" not in f.message
