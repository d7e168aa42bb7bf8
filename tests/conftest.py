"""Shared paths and helpers for the test suite.

Real packages come from two places: `../shared/pt2` (the starter set, beside the checkout) and
`fixtures/` (built by fixtures/generate.py and committed).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_PT2 = SHARED / "pt2"
FIXTURES = REPO / "fixtures"
GOLDEN = REPO / "tests" / "golden"
UPDATE_GOLDEN = bool(os.environ.get("AOTI_LINT_UPDATE_GOLDEN"))

def _coverage_paths_absolute() -> None:
    """Under `coverage run`, the data file and the source folder as absolute paths: a process forked
    while a test has changed directory (a -j worker, the helper worker) restarts coverage from the
    parent's configuration, and relative ones would measure nothing and write its data file there."""
    try:
        from coverage import Coverage
    except ImportError:
        return
    cov = Coverage.current()
    if cov is None:
        return
    data_file = os.path.abspath(cov.get_option("run:data_file"))
    cov.set_option("run:data_file", data_file)
    os.environ["COVERAGE_FILE"] = data_file  # read by every process that starts coverage, over its config
    cov.set_option("run:source", [os.path.abspath(s) if os.path.isdir(s) else s
                                  for s in cov.get_option("run:source") or ()])


_coverage_paths_absolute()

# A compiler name a headline must not show when the exported program gives the user's names:
# Triton/C++ temporaries (tmp4), kernel size parameters (ks0), size symbols (s77, u0), wrapper
# argument names (arg0_1) and generated kernel names.
COMPILER_NAME = re.compile(r"\btmp\d+|\bks\d+|\b[su]\d+\b|\barg\d+_\d+|\btriton_\w+|\bcpp_fused\w*|\bbuf\d+")


def shared_packages() -> list[Path]:
    return sorted(SHARED_PT2.glob("*.pt2")) if SHARED_PT2.is_dir() else []


def fixture_packages() -> list[Path]:
    """AOTI packages in fixtures/, fixtures/stress/pkgs/ and fixtures/launches/ (exported-program
    archives `*.ep.pt2` are not packages)."""
    found = [p for folder in (FIXTURES, FIXTURES / "stress" / "pkgs", FIXTURES / "launches") for p in folder.glob("*.pt2")]
    return sorted(p for p in found if not p.name.endswith(".ep.pt2"))


def all_packages() -> list[Path]:
    return shared_packages() + fixture_packages()


def every_package() -> list[Path]:
    """Every AOTI package committed (fixtures/ and its folders: real, stranger, large, versions,
    stress) and in ../shared/pt2."""
    found = [p for p in FIXTURES.rglob("*.pt2") if not p.name.endswith(".ep.pt2")]
    return shared_packages() + sorted(found)


def package_id(path: Path) -> str:
    if path.parent == SHARED_PT2:
        return f"shared/{path.name}"
    return "fixtures/" + path.relative_to(FIXTURES).as_posix()


def require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not present (the repo is expected beside ../shared)")
    return path


def finding_refs(finding) -> set[tuple[int, int]]:
    """The (input, dim) pairs a finding names: its own and its merged dims'."""
    refs = {(d.input, d.dim) for d in finding.dims}
    if finding.input is not None and finding.dim is not None:
        refs.add((finding.input, finding.dim))
    return refs


def pin(finding) -> tuple:
    """(code, severity, the (input, dim) pairs it names): how the corpus tests pin a finding."""
    return finding.code, str(finding.severity), tuple(sorted(finding_refs(finding)))


def compare_golden(actual: str, golden: Path) -> None:
    """Snapshot comparison; AOTI_LINT_UPDATE_GOLDEN=1 rewrites the file for review."""
    if UPDATE_GOLDEN or not golden.exists():
        if not UPDATE_GOLDEN:
            pytest.fail(f"golden file {golden} is missing; run with AOTI_LINT_UPDATE_GOLDEN=1 and review it")
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual)
        return
    assert actual == golden.read_text(), f"output differs from {golden} (AOTI_LINT_UPDATE_GOLDEN=1 to update)"


@pytest.fixture(scope="session")
def fresh_cpu_package(tmp_path_factory):
    """Compile (once per session) one of tests/torch_models.py's models for CPU with the
    installed torch; returns a function name -> .pt2 path. Skips when torch is missing."""
    pytest.importorskip("torch")
    import torch_models

    out = tmp_path_factory.mktemp("fresh_pt2")
    cache: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in cache:
            cache[name] = torch_models.compile_package(name, out)
        return cache[name]

    return get


def pytest_report_header(config: pytest.Config) -> str:
    if SHARED_PT2.is_dir():
        return f"starter packages: {SHARED_PT2}"
    return f"starter packages: {SHARED_PT2} is absent: the tests that read them skip (a bare clone)"
