"""Hostile text costs what its text costs to scan, not a tree: measured in a child process.

bench/hostile_text.py builds the inputs on a real CPU package; here they run scaled down (a few MB
instead of 55 MiB, 20 MB and a million checks: `python bench/bench.py --hostile` runs those), which
is enough to tell a text scan (peak RSS about the interpreter's plus the member) from a parse (about
60 bytes of tree per byte: 8 MiB of statements peaked at 480 MB before bodies nothing reads were left
out of the parse). Peak RSS is the child's own: a fresh process runs the check and reports
getrusage(RUSAGE_CHILDREN), which holds that one child alone.
"""

from __future__ import annotations

import zipfile

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.app import parsing
from analyzer.parse import unread

from conftest import FIXTURES, REPO, SHARED_PT2

_spec = importlib.util.spec_from_file_location("hostile_text", REPO / "bench" / "hostile_text.py")
assert _spec is not None and _spec.loader is not None
hostile_text = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile_text)

BASE = SHARED_PT2 / "gather_dyn.cpu.stripped.pt2"
MiB = 2**20

_CHILD = """
import resource, subprocess, sys, time
start = time.monotonic()
proc = subprocess.run([sys.executable, "-m", "analyzer", "check", "--format", "json", sys.argv[1]],
                      capture_output=True, text=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write(proc.stderr)
print(proc.returncode, time.monotonic() - start, usage.ru_maxrss * 1024)
print(proc.stdout)
"""


def measured_check(path: Path) -> tuple[int, float, int, dict]:
    """(exit code, wall seconds, peak RSS bytes, JSON report) of `python -m analyzer check` on `path`."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    first, _, rest = proc.stdout.partition("\n")
    code, seconds, peak = first.split()
    return int(code), float(seconds), int(peak), json.loads(rest)


def rules_and_messages(report: dict) -> list[tuple[str, str]]:
    return sorted((f["rule"], f["message"]) for f in report["findings"])


def target(path: Path) -> int:
    """The peak RSS a check may reach: three times its largest text member plus 100 MB."""
    import zipfile

    with zipfile.ZipFile(path) as zf:
        return 3 * max(i.file_size for i in zf.infolist() if i.filename.endswith(".cpp")) + 100 * MiB


pytestmark = pytest.mark.skipif(not BASE.is_file(), reason=f"real packages not found at {SHARED_PT2}")


@pytest.fixture(scope="module")
def base_report() -> tuple:
    return measured_check(BASE)


@pytest.mark.parametrize("build", [
    lambda dest: hostile_text.unread_statements(dest, 8),
    lambda dest: hostile_text.long_line(dest, 4),
], ids=["unread_statements_8mib", "long_line_4mb"])
def test_unread_text_costs_a_scan(build, tmp_path: Path, base_report: tuple) -> None:
    path = build(tmp_path)
    code, seconds, peak, report = measured_check(path)
    # the same exit code and findings as the package without the hostile text
    assert code == base_report[0] and rules_and_messages(report) == rules_and_messages(base_report[3])
    assert peak < target(path), (peak / MiB, target(path) / MiB)
    assert seconds < 30, seconds


def test_a_kernel_of_too_many_checks_is_refused_from_its_text(tmp_path: Path) -> None:
    path = hostile_text.check_lines(tmp_path, parsing.MAX_CHECKS + 10_000)
    code, seconds, peak, report = measured_check(path)
    assert peak < target(path) and seconds < 30, (peak / MiB, seconds)
    problems = [f for f in report["findings"] if f["rule"] == "unparsed-member"]
    said = json.dumps(problems)
    assert f"more than the {parsing.MAX_CHECKS:,}" in said  # the kernel, refused before its parse
    assert "more lines of check text" in said           # its check lines: listed up to a bound, then counted
    assert code in (0, 1)


def test_unread_bodies_keep_what_readers_read() -> None:
    data = (b'#include <x.h>\nnamespace torch::aot_inductor {\n'
            b'void helper_a(int x) {\n' + b'    y = x; // {\n' * 40 + b'}\n'
            b'void AOTInductorModel::run_impl(int x) {\n' + b'    y = x;\n' * 40 + b'}\n'
            b'extern "C" void cpp_fused_k(int x) {\n#pragma omp\n' + b'    y = x;\n' * 40 + b'}\n'
            b'struct S { void m() {' + b' y = 1;' * 60 + b' } };\n'
            b'}  // namespace\n')
    spans = unread.unread_bodies(data)
    assert len(spans) == 1
    lo, hi = spans[0]
    assert data[:lo].endswith(b"void helper_a(int x) {") and data[hi:].startswith(b"}\nvoid AOTInductorModel")
    # Text it does not understand stops the scan: what follows is parsed whole.
    assert unread.unread_bodies(b"void f() {\n#if X\n{\n#endif\n" + b" y = 1;\n" * 60 + b"}\n") == []


def test_kernel_declarations_are_left_out_as_one_span() -> None:
    """A wrapper's file-level `extern "C" void cpp_...(...);` declarations (one per kernel) are read
    by no one: consecutive ones are one span left out; anything else between them ends the span,
    and a comment before a declaration stays, as does a declaration of another function."""
    decl = b'extern "C"  void cpp_fused_%d(const float* in_ptr0,\n                       const int64_t ks0);\n'
    data = (b'#include <x.h>\n' + b"".join(decl % i for i in range(3)) + b'int other(int x);\n'
            + decl % 3 + b'// a comment\n' + decl % 4 + b'void helper(int x);\n')
    spans = unread.unread_bodies(data)
    assert [data[lo:hi] for lo, hi in spans] == [b"".join(decl % i for i in range(3)).rstrip(b"\n"),
                                                 (decl % 3).rstrip(b"\n"), (decl % 4).rstrip(b"\n")]
    with zipfile.ZipFile(FIXTURES / "versions" / "2.8" / "pos_embedding.cpu.stripped.pt2") as zf:
        wrapper = next(zf.read(n) for n in zf.namelist() if n.endswith(".wrapper.cpp"))
    (span,) = [(lo, hi) for lo, hi in unread.unread_bodies(wrapper) if b"cpp_fused" in wrapper[lo:hi]]
    assert wrapper[span[0]:span[1]].startswith(b'extern "C"  void cpp_fused_add_arange_embedding_0(')
