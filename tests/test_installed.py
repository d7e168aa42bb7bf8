"""What ships is what is tested: the sdist and the wheel built from this tree, the wheel installed
alone into fresh virtualenvs outside the tree (no `-e`, no PYTHONPATH, no torch), on the lowest and
the highest supported Python this machine has, running every subcommand and format the README names
on committed packages, with the exit codes it documents.

`.ci/run` builds the distributions once and names their folder in AOTI_LINT_DIST; without it the
test builds them itself. Installing the wheel's dependencies needs a package index: where none is
reachable the tests skip and say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO

# Every format `check --format` takes, as the README's Commands section names them.
CHECK_FORMATS = ("text", "concise", "json", "sarif", "github", "markdown", "rdjson", "gitlab", "junit")
BROKEN = "aoti-lint: error:"
NO_INDEX = ("Failed to establish a new connection", "Name or service not known", "Temporary failure in name",
            "Network is unreachable", "No route to host")


def _supported_minors() -> tuple[int, int]:
    """(lowest, highest) minor version of Python 3 the project declares: requires-python's floor and
    the newest `Programming Language :: Python :: 3.N` classifier (3.13 when none is listed)."""
    text = (REPO / "pyproject.toml").read_text()
    floor = re.search(r'requires-python\s*=\s*">=\s*3\.(\d+)"', text)
    assert floor, "pyproject.toml declares no requires-python floor"
    listed = [int(m) for m in re.findall(r"Programming Language :: Python :: 3\.(\d+)", text)]
    return int(floor[1]), max(listed, default=13)


def _interpreters() -> dict[str, Path]:
    """The lowest and the highest supported Python found on PATH or under pyenv, by version."""
    low, high = _supported_minors()
    found: dict[int, Path] = {}
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for minor in range(low, high + 1):
        # pyenv's own builds first: its shims on PATH fail for a version that is not selected.
        candidates = [str(p) for p in sorted(pyenv.glob(f"3.{minor}.*/bin/python3.{minor}"), reverse=True)]
        candidates.append(shutil.which(f"python3.{minor}"))
        for candidate in candidates:
            if candidate and _runs(candidate, minor):
                found[minor] = Path(candidate)
                break
    if not found:
        return {}
    picked = {min(found), max(found)}
    return {f"3.{minor}": found[minor] for minor in sorted(picked)}


def _runs(python: str, minor: int) -> bool:
    try:
        probe = subprocess.run([python, "-c", "import sys, venv; print(sys.version_info[1])"], capture_output=True,
                               text=True, timeout=30)
    except OSError:
        return False
    return probe.returncode == 0 and probe.stdout.strip() == str(minor)


INTERPRETERS = _interpreters()


def _tracked(prefix: str) -> list[str]:
    """Files under `prefix` as git tracks them (or as they lie on disk outside a checkout)."""
    if (REPO / ".git").exists() and shutil.which("git"):
        out = subprocess.run(["git", "ls-files", prefix], cwd=REPO, capture_output=True, text=True, check=True)
        return [line for line in out.stdout.splitlines() if (REPO / line).is_file()]
    return [p.relative_to(REPO).as_posix() for p in (REPO / prefix).rglob("*") if p.is_file()]


def _build(out: Path) -> None:
    """sdist first, then the wheel from the unpacked sdist, as `python -m build` does: a file the
    sdist forgets is then missing from the wheel too."""
    src = out / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv*", ".git", "build", "dist", "*.egg-info",
                                                             "__pycache__", ".pytest_cache", ".hypothesis"))
    run = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(src)],
                         capture_output=True, text=True)
    if run.returncode != 0 and any(word in run.stdout + run.stderr for word in NO_INDEX):
        pytest.skip("building the sdist needs setuptools from a package index, and none is reachable")
    assert run.returncode == 0, run.stdout + run.stderr
    (sdist,) = out.glob("aoti_lint-*.tar.gz")
    run = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(sdist)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("AOTI_LINT_DIST")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("dist")
    _build(out)
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("aoti_lint-*.whl")
    return found


@pytest.fixture(scope="module")
def sdist(dist: Path) -> Path:
    (found,) = dist.glob("aoti_lint-*.tar.gz")
    return found


def test_wheel_holds_every_module_and_grammar(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {p for p in _tracked("analyzer") if not p.endswith((".pyc", ".pyo"))}
    wanted |= {"analyzer/grammars/" + Path(p).name for p in _tracked("grammars") if p.endswith(".scm")}
    assert wanted, "nothing tracked under analyzer/ or grammars/"
    missing = sorted(wanted - names)
    assert not missing, f"the wheel lacks {missing}"
    assert not any(n.startswith(("tests/", "fixtures/", "bench/")) for n in names)


def test_sdist_holds_the_sources_the_wheel_is_built_from(sdist: Path) -> None:
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    wanted = {p for p in _tracked("analyzer") + _tracked("grammars") if p.endswith((".py", ".scm", ".json"))}
    wanted |= {"pyproject.toml", "README.md"}
    missing = sorted(wanted - names)
    assert not missing, f"the sdist lacks {missing}"


@dataclass(frozen=True)
class Installed:
    """A fresh virtualenv holding the wheel and what it depends on, nothing else."""

    python: Path
    bin: Path
    work: Path  # a folder outside the source tree holding copies of committed packages

    def run(self, *args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NO_COLOR", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        result = subprocess.run([str(self.bin / "aoti-lint"), *args], cwd=cwd or self.work, env=env,
                                input=stdin, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in result.stderr, result.stderr
        return result

    def python_run(self, code: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        return subprocess.run([str(self.python), "-c", code], cwd=self.work, env=env, capture_output=True,
                              text=True, timeout=120)


PACKAGES = {
    "gather_dyn.cuda.stripped.pt2": "infos",      # AOTI001 an info (eager rejects its witness too): exit 0
    "gather_dyn.cpu.stripped.pt2": "infos",       # unless --fail-on info
    "gather_dyn.ep.pt2": "exported program",
    "empty_reduce.cpu.stripped.pt2": "warnings",  # warnings only: exit 0 unless --fail-on warning
    "gather_static.cpu.stripped.pt2": "clean",
}


@pytest.fixture(scope="module", params=sorted(INTERPRETERS), ids=lambda v: f"py{v}")
def installed(request: pytest.FixtureRequest, wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    version = request.param
    root = tmp_path_factory.mktemp(f"installed-py{version}")
    venv = root / "venv"
    subprocess.run([str(INTERPRETERS[version]), "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_NO_INDEX")}
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
                             capture_output=True, text=True, env=env, timeout=600)
    if install.returncode != 0 and any(word in install.stdout + install.stderr for word in NO_INDEX):
        pytest.skip(f"installing the wheel's dependencies on Python {version} needs a package index, and none is "
                    "reachable")
    assert install.returncode == 0, install.stdout + install.stderr
    work = root / "work"
    work.mkdir()
    for name in PACKAGES:
        shutil.copy(FIXTURES / name, work / name)
    shutil.copy(FIXTURES / "logs" / "gather_dyn.cpu.empty.log", work / "crash.log")
    return Installed(python=python, bin=venv / "bin", work=work)


pytestmark = pytest.mark.skipif(not INTERPRETERS, reason="no supported Python interpreter found")


def test_runs_the_installed_copy_without_torch(installed: Installed) -> None:
    where = installed.python_run("import analyzer, importlib.util; print(analyzer.__file__); "
                                 "print(importlib.util.find_spec('torch'))")
    assert where.returncode == 0, where.stderr
    path, torch = where.stdout.split()
    assert "site-packages" in path and not path.startswith(str(REPO))
    assert torch == "None"
    version = installed.run("--version")
    assert version.returncode == 0 and "aoti-lint" in version.stdout
    module = subprocess.run([str(installed.python), "-m", "analyzer", "--version"], capture_output=True, text=True)
    assert module.returncode == 0 and module.stdout == version.stdout


@pytest.mark.parametrize("fmt", CHECK_FORMATS)
def test_check_every_format(installed: Installed, fmt: str) -> None:
    result = installed.run("check", "--format", fmt, "--fail-on", "info", "gather_dyn.cuda.stripped.pt2")
    assert result.returncode == 1, result.stderr
    out = result.stdout
    if fmt in ("json", "sarif", "rdjson", "gitlab"):
        data = json.loads(out)
        if fmt == "json":
            assert data["schema"] == "aoti-lint.check/1"
            assert "AOTI001" in {f["code"] for f in data["findings"]}
        elif fmt == "sarif":
            assert data["version"] == "2.1.0" and data["runs"][0]["results"]
    elif fmt == "junit":
        assert ET.fromstring(out).iter("testcase")
    elif fmt == "github":
        assert out.startswith("::notice ")   # infos
    else:
        assert "AOTI001" in out


def test_check_exit_codes(installed: Installed) -> None:
    assert installed.run("gather_dyn.cuda.stripped.pt2").returncode == 0  # `check` is the default command
    assert installed.run("--fail-on", "info", "gather_dyn.cuda.stripped.pt2").returncode == 1
    assert installed.run("check", "--exit-zero", "--fail-on", "info", "gather_dyn.cuda.stripped.pt2").returncode == 0
    assert installed.run("check", "gather_static.cpu.stripped.pt2").returncode == 0
    assert installed.run("check", "empty_reduce.cpu.stripped.pt2").returncode == 0
    assert installed.run("check", "--fail-on", "warning", "empty_reduce.cpu.stripped.pt2").returncode == 1
    with_ep = installed.run("check", "--exported-program", "gather_dyn.ep.pt2", "gather_dyn.cuda.stripped.pt2")
    assert with_ep.returncode == 0 and "x.shape[0]" in with_ep.stdout
    usage = installed.run("check", "--format", "nope", "gather_dyn.cuda.stripped.pt2")
    assert usage.returncode == 2
    (installed.work / "broken.pt2").write_bytes(b"not a zip")
    broken = installed.run("check", "broken.pt2")
    assert broken.returncode == 2 and broken.stderr.startswith(BROKEN) and "broken.pt2" in broken.stderr
    missing = installed.run("check", "no-such.pt2")
    assert missing.returncode == 2 and "no-such.pt2" in missing.stderr


def test_configuration_changes_the_exit_code(installed: Installed) -> None:
    """[tool.aoti-lint] is read on every supported Python (3.10 through tomli)."""
    project = installed.work / "project"
    project.mkdir(exist_ok=True)
    shutil.copy(installed.work / "empty_reduce.cpu.stripped.pt2", project / "model.pt2")
    (project / "pyproject.toml").write_text('[tool.aoti-lint]\nfail-on = "warning"\n')
    assert installed.run("check", "model.pt2", cwd=project).returncode == 1
    (project / "pyproject.toml").write_text('[tool.aoti-lint]\nfail-on = "warning"\nignore = ["ALL"]\n')
    assert installed.run("check", "model.pt2", cwd=project).returncode == 0
    (project / "pyproject.toml").write_text('[tool.aoti-lint]\nfail-on = "sometimes"\n')
    bad = installed.run("check", "model.pt2", cwd=project)
    assert bad.returncode == 2 and "pyproject.toml" in bad.stderr


def test_directory_and_jobs(installed: Installed) -> None:
    folder = installed.work / "models"
    folder.mkdir(exist_ok=True)
    for name in ("gather_dyn.cuda.stripped.pt2", "empty_reduce.cpu.stripped.pt2", "gather_dyn.ep.pt2"):
        shutil.copy(installed.work / name, folder / name)
    result = installed.run("check", "-j", "2", "--format", "json", "--fail-on", "warning", "models")
    assert result.returncode == 1, result.stderr   # empty_reduce's warnings
    packages = {Path(f["package"]).name for f in json.loads(result.stdout)["findings"]}
    assert packages == {"gather_dyn.cuda.stripped.pt2", "empty_reduce.cpu.stripped.pt2"}
    serial = installed.run("check", "-j", "1", "--format", "json", "--fail-on", "warning", "models")
    assert serial.stdout == result.stdout


@pytest.mark.parametrize("fmt", ("text", "json", "dot"))
def test_inspect(installed: Installed, fmt: str) -> None:
    result = installed.run("inspect", "--format", fmt, "gather_dyn.cuda.stripped.pt2")
    assert result.returncode == 0, result.stderr
    if fmt == "json":
        assert json.loads(result.stdout)["schema"] == "aoti-lint.inspect/1"
    elif fmt == "dot":
        assert result.stdout.lstrip().startswith("digraph")
    else:
        assert "ks0" in result.stdout


def test_why_message_and_log(installed: Installed) -> None:
    message = installed.run("why", "gather_dyn.cpu.stripped.pt2", "index out of bounds: 0 <= tmp7 < ks1")
    assert message.returncode == 0 and "input 0 dim 0" in message.stdout, message.stderr
    log = installed.run("why", "gather_dyn.cpu.stripped.pt2", "--log", "crash.log")
    assert log.returncode == 0 and "index-assert" in log.stdout, log.stderr
    stdin = installed.run("why", "gather_dyn.cpu.stripped.pt2", "--log", "-",
                          stdin=(installed.work / "crash.log").read_text())
    assert stdin.returncode == 0 and stdin.stdout == log.stdout
    as_json = installed.run("why", "--format", "json", "gather_dyn.cpu.stripped.pt2", "--log", "crash.log")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["schema"] == "aoti-lint.why/1"
    unmatched = installed.run("why", "gather_dyn.cpu.stripped.pt2", "nothing like an assertion")
    assert unmatched.returncode == 1


def test_rules_and_explain(installed: Installed) -> None:
    rules = installed.run("rules")
    assert rules.returncode == 0 and "AOTI001" in rules.stdout and "AOTI018" in rules.stdout
    for rule in ("AOTI001", "empty-index-bound"):
        explain = installed.run("explain", rule)
        assert explain.returncode == 0 and "What it does" in explain.stdout
    assert installed.run("explain", "no-such-rule").returncode == 2


def test_contract_and_its_guard(installed: Installed) -> None:
    text = installed.run("contract", "gather_dyn.cuda.stripped.pt2")
    assert text.returncode == 0 and "arg0_1" in text.stdout
    as_json = installed.run("contract", "--format", "json", "gather_dyn.cuda.stripped.pt2")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["schema"] == "aoti-lint.contract/1"
    emit = installed.run("contract", "--emit", "python", "-o", "guard.py", "gather_dyn.cuda.stripped.pt2")
    assert emit.returncode == 0, emit.stderr
    # The guard is dependency-free: plain objects with .shape stand in for tensors (no torch here).
    code = (
        "import guard\n"
        "class T:\n"
        "    def __init__(self, *shape, dtype='torch.float32'):\n"
        "        self.shape, self.dtype, self.device = shape, dtype, 'cuda:0'\n"
        "guard.check_inputs(T(3, 8), T(3, dtype='torch.int64'))\n"
        "try:\n"
        "    guard.check_inputs(T(0, 8), T(3, dtype='torch.int64'))\n"
        "except ValueError as exc:\n"
        "    print('rejected:', exc)\n"
    )
    called = installed.python_run(code)
    assert called.returncode == 0, called.stderr
    assert called.stdout.startswith("rejected: arg0_1.shape[0] = 0")


def test_report_html(installed: Installed) -> None:
    result = installed.run("report", "gather_dyn.cuda.stripped.pt2", "-o", "report.html")
    assert result.returncode == 0, result.stderr
    page = (installed.work / "report.html").read_text()
    assert page.lstrip().lower().startswith("<!doctype html") and "AOTI001" in page


def test_merge_json_and_sarif(installed: Installed) -> None:
    for fmt in ("json", "sarif"):
        for name in ("gather_dyn.cuda.stripped.pt2", "empty_reduce.cpu.stripped.pt2"):
            shard = installed.run("check", "--format", fmt, "-o", f"{name}.{fmt}", name)
            assert shard.returncode in (0, 1), shard.stderr
        merged = installed.run("merge", "--fail-on", "warning", f"gather_dyn.cuda.stripped.pt2.{fmt}",
                               f"empty_reduce.cpu.stripped.pt2.{fmt}")
        assert merged.returncode == 1, merged.stderr
        data = json.loads(merged.stdout)
        if fmt == "json":
            assert {Path(f["package"]).name for f in data["findings"]} == {"gather_dyn.cuda.stripped.pt2",
                                                                            "empty_reduce.cpu.stripped.pt2"}
        else:
            assert len(data["runs"]) == 2


def test_baseline(installed: Installed) -> None:
    written = installed.run("check", "--write-baseline", "baseline.json", "gather_dyn.cuda.stripped.pt2")
    assert written.returncode == 0, written.stderr
    assert json.loads((installed.work / "baseline.json").read_text())
    gated = installed.run("check", "--fail-on", "warning", "--baseline", "baseline.json",
                          "gather_dyn.cuda.stripped.pt2")
    assert gated.returncode == 0, gated.stdout + gated.stderr
    other = installed.run("check", "--baseline", "baseline.json", "--fail-on", "info", "gather_dyn.cpu.stripped.pt2")
    assert other.returncode == 1


def test_diff(installed: Installed) -> None:
    same = installed.run("diff", "gather_dyn.cpu.stripped.pt2", "gather_dyn.cpu.stripped.pt2", "--format", "json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["changes"] == []
    other = installed.run("diff", "gather_dyn.cpu.stripped.pt2", "empty_reduce.cpu.stripped.pt2",
                          "--format", "markdown")
    assert other.returncode == 1 and other.stdout.startswith("**aoti-lint diff**"), other.stderr


def test_confirm_without_torch_says_what_it_needs(installed: Installed) -> None:
    """The wheel alone has no torch: confirm, the one command that runs a package, says so (exit 2)."""
    result = installed.run("confirm", "gather_dyn.cpu.stripped.pt2")
    assert result.returncode == 2
    assert result.stderr.startswith(BROKEN) and "aoti-lint[confirm]" in result.stderr
