"""The distribution: the wheel ships the tree-sitter queries, and the analyzer runs without torch."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

from conftest import REPO, SHARED_PT2, require


def test_wheel_ships_grammars_and_console_script(tmp_path):
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources it builds.
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv*", ".git", "fixtures", "tests", "bench", "build",
                                                             "*.egg-info", "__pycache__", ".pytest_cache"))
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(out), str(src)], check=True, capture_output=True)
    (wheel,) = out.glob("aoti_lint-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    scm = {n for n in names if n.endswith(".scm")}
    expected = {f"analyzer/grammars/{p.name}" for p in (REPO / "grammars").glob("*.scm")}
    assert expected and scm == expected
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "aoti-lint = analyzer.app.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    # The licence (PEP 639), the output schemas and the metadata a user reads before adopting it.
    dist_info = entry_points.rsplit("/", 1)[0]
    assert zipfile.ZipFile(wheel).read(f"{dist_info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
    schemas = {n for n in names if n.startswith("analyzer/schemas/")}
    assert schemas == {f"analyzer/schemas/{p.name}" for p in (REPO / "analyzer" / "schemas").glob("*.schema.json")}
    metadata = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    from analyzer import REPOSITORY

    for line in ("License-Expression: BSD-3-Clause", "License-File: LICENSE",
                 f"Project-URL: Repository, {REPOSITORY}", "Classifier: Programming Language :: Python :: 3.10"):
        assert line in metadata.splitlines(), line


def test_analyzer_runs_with_torch_blocked():
    # `sys.modules["torch"] = None` makes any `import torch` raise ImportError.
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from analyzer.app import api\n"
        f"pkg = api.load({str(require(SHARED_PT2 / 'gather_dyn.cuda.pt2'))!r})\n"
        "print(pkg.models[0].assertions[0].bound_expr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "s77"
