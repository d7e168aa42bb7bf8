"""The GitHub Action (action.yml + action/aoti_lint_action.py) and the pre-commit hook, run locally:
the gate on real packages, the single pull-request comment against a fake GitHub API."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, Iterator

import pytest
import yaml

from conftest import FIXTURES, REPO

spec = importlib.util.spec_from_file_location("aoti_lint_action", REPO / "action" / "aoti_lint_action.py")
action = importlib.util.module_from_spec(spec)
spec.loader.exec_module(action)

DYN = FIXTURES / "gather_dyn.cuda.stripped.pt2"  # 3 infos (x empty with idx not: eager rejects it too)
BROKEN = FIXTURES / "real" / "bert.cpu.stripped.pt2"  # an error: seq 0 reaches CPU flash attention (SIGFPE)
F32 = FIXTURES / "diff" / "gather_f32.cpu.stripped.pt2"  # the same model built for float32 ...
F64 = FIXTURES / "diff" / "gather_f64.cpu.stripped.pt2"  # ... and for float64: a dtype-changed diff
CLEAN = FIXTURES / "gather_static.cpu.stripped.pt2"  # none
AOTI_LINT = f"{sys.executable} -m analyzer"


def _env(tmp_path: Path, **inputs: str) -> dict[str, str]:
    (tmp_path / "out.txt").touch()
    return {"AOTI_LINT": AOTI_LINT, "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), **inputs}


def _outputs(tmp_path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (tmp_path / "out.txt").read_text().splitlines())


def test_expand_globs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("a/x.pt2", "a/b/y.pt2", "z.pt2"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    assert action.expand("**/*.pt2\nz.pt2 missing.pt2") == ["a/b/y.pt2", "a/x.pt2", "z.pt2", "missing.pt2"]
    assert action.expand("nothing/*.pt2") == ["nothing/*.pt2"]  # kept: the gate reports it (exit 2)


def test_gate_on_real_packages(tmp_path: Path) -> None:
    env = _env(tmp_path, INPUT_PACKAGES=f"{DYN}\n{CLEAN}", INPUT_FAIL_ON="info")
    assert action.gate(env) == 1
    out = _outputs(tmp_path)
    assert out["exit-code"] == "1"
    report = Path(out["report"]).read_text()
    assert report.startswith("## aoti-lint") and "AOTI001" in report and "s77 = input 0 dim 0" in report
    assert (tmp_path / "summary.md").read_text() == report
    sarif = json.loads(Path(out["sarif"]).read_text())
    # AOTI019 (info): the input layout of both packages, checked only with AOTI_RUNTIME_CHECK_INPUTS=1.
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["AOTI001", "AOTI002", "AOTI019", "AOTI019"]


def test_gate_with_baseline_and_args(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    subprocess.run([*AOTI_LINT.split(), "--write-baseline", str(base), str(DYN)], check=True, capture_output=True)
    env = _env(tmp_path, INPUT_PACKAGES=str(DYN), INPUT_FAIL_ON="info", INPUT_BASELINE=str(base))
    assert action.gate(env) == 0
    env = _env(tmp_path, INPUT_PACKAGES=str(DYN), INPUT_FAIL_ON="info", INPUT_ARGS="--ignore AOTI001")
    assert action.gate(env) == 1


def test_gate_on_a_missing_package_exits_2_with_a_report(tmp_path: Path) -> None:
    env = _env(tmp_path, INPUT_PACKAGES=str(tmp_path / "missing.pt2"))
    assert action.gate(env) == 2
    assert "could not check the packages (exit 2)" in Path(_outputs(tmp_path)["report"]).read_text()
    assert action.gate(_env(tmp_path, INPUT_PACKAGES="  ")) == 2


class FakeGitHub(BaseHTTPRequestHandler):
    """The issue-comments endpoints of the REST API, in memory."""

    comments: ClassVar[list[dict[str, Any]]] = []
    calls: ClassVar[list[tuple[str, str]]] = []
    status = 200
    # Who the token writes as; `GET /user` answers it only for a personal token (the workflow's
    # GITHUB_TOKEN gets 403 there and writes as github-actions[bot]).
    login = "github-actions[bot]"
    user_readable = False

    def _reply(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self) -> None:  # noqa: N802
        self.calls.append(("GET", self.path))
        if self.path == "/user":
            if not self.user_readable:
                return self._reply(403, {"message": "Resource not accessible by integration"})
            return self._reply(200, {"login": self.login})
        page = int(re.search(r"[?&]page=(\d+)", self.path).group(1))
        self._reply(200, self.comments[(page - 1) * 100: page * 100])

    def do_POST(self) -> None:  # noqa: N802
        self.calls.append(("POST", self.path))
        if self.status != 200:
            return self._reply(self.status, {"message": "Resource not accessible by integration"})
        assert self.headers["Authorization"] == "Bearer t0ken"
        comment = {"id": 1000 + len(self.comments), "body": self._body()["body"], "user": {"login": self.login}}
        self.comments.append(comment)
        self._reply(201, comment)

    def do_PATCH(self) -> None:  # noqa: N802
        self.calls.append(("PATCH", self.path))
        ident = int(self.path.rsplit("/", 1)[1])
        body = self._body()["body"]
        for c in self.comments:
            if c["id"] == ident:
                # GitHub lets a maintainer's token edit anyone's comment: the script must not ask.
                c["body"] = body
        self._reply(200, {"id": ident, "body": body})

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def github() -> Iterator[str]:
    FakeGitHub.comments = [{"id": i, "body": f"someone else's comment {i}", "user": {"login": f"user{i}"}}
                           for i in range(150)]
    FakeGitHub.calls = []
    FakeGitHub.status = 200
    FakeGitHub.login = "github-actions[bot]"
    FakeGitHub.user_readable = False
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _comment_env(tmp_path: Path, api: str, report: str) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    (tmp_path / "report.md").write_text(report)
    return {"GITHUB_EVENT_PATH": str(event), "GITHUB_API_URL": api, "GITHUB_TOKEN": "t0ken",
            "GITHUB_REPOSITORY": "o/r", "INPUT_REPORT": str(tmp_path / "report.md")}


def test_one_comment_created_then_updated(tmp_path: Path, github: str, capsys: pytest.CaptureFixture) -> None:
    assert action.comment(_comment_env(tmp_path, github, "## aoti-lint\n\nfirst\n")) == 0
    ours = [c for c in FakeGitHub.comments if c["body"].startswith(action.MARKER)]
    assert len(ours) == 1 and ours[0]["body"].endswith("first\n")
    # The second run finds it on page 2 (151 comments) and updates it in place.
    assert action.comment(_comment_env(tmp_path, github, "## aoti-lint\n\nsecond\n")) == 0
    ours = [c for c in FakeGitHub.comments if c["body"].startswith(action.MARKER)]
    assert len(ours) == 1 and ours[0]["body"].endswith("second\n")
    assert len(FakeGitHub.comments) == 151
    assert ("PATCH", f"/repos/o/r/issues/comments/{ours[0]['id']}") in FakeGitHub.calls
    assert "updated comment 1150 on #7" in capsys.readouterr().out


def _forged(ident: int, login: str) -> dict[str, Any]:
    return {"id": ident, "body": f"{action.MARKER}\nforged by {login}", "user": {"login": login}}


@pytest.mark.parametrize("personal", [False, True], ids=["github_token", "personal_token"])
def test_only_our_own_marked_comment_is_updated(tmp_path: Path, github: str, personal: bool) -> None:
    """A comment that starts with the marker but was written by someone else (a fork's author can
    paste the marker) is never edited; ours, found by author AND marker, is."""
    if personal:
        FakeGitHub.login, FakeGitHub.user_readable = "ci-user", True
    me = FakeGitHub.login
    other = "github-actions[bot]" if personal else "mallory"  # with a PAT, the bot is someone else too
    FakeGitHub.comments = [_forged(1, "mallory"), _forged(2, other),
                           {"id": 3, "body": "unrelated", "user": {"login": me}},
                           {"id": 4, "body": f"{action.MARKER}\nold report", "user": {"login": me}}]
    assert action.comment(_comment_env(tmp_path, github, "## aoti-lint\n\nnew\n")) == 0
    bodies = {c["id"]: c["body"] for c in FakeGitHub.comments}
    assert bodies[1] == f"{action.MARKER}\nforged by mallory"
    assert bodies[2] == f"{action.MARKER}\nforged by {other}"
    assert bodies[3] == "unrelated"
    assert bodies[4].endswith("new\n")
    assert [c for c in FakeGitHub.calls if c[0] == "PATCH"] == [("PATCH", "/repos/o/r/issues/comments/4")]
    assert ("GET", "/user") in FakeGitHub.calls


def test_a_foreign_marked_comment_alone_gets_a_new_comment(tmp_path: Path, github: str) -> None:
    FakeGitHub.comments = [_forged(1, "mallory"), {"id": 2, "body": f"{action.MARKER}\n", "user": None}]
    assert action.comment(_comment_env(tmp_path, github, "## aoti-lint\n\nours\n")) == 0
    assert FakeGitHub.comments[0]["body"] == f"{action.MARKER}\nforged by mallory"
    assert FakeGitHub.comments[1]["body"] == f"{action.MARKER}\n"
    assert len(FakeGitHub.comments) == 3 and FakeGitHub.comments[2]["user"]["login"] == "github-actions[bot]"
    assert not any(c[0] == "PATCH" for c in FakeGitHub.calls)


def test_a_file_named_like_an_option_is_a_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--write-baseline=model.pt2` in the glob's matches is checked as a package: nothing is
    overwritten, the gate fails on its findings."""
    work = tmp_path / "repo"
    work.mkdir()
    monkeypatch.chdir(work)
    model = work / "model.pt2"
    model.write_bytes(CLEAN.read_bytes())
    (work / "--write-baseline=model.pt2").write_bytes(DYN.read_bytes())
    (work / "-o").write_bytes(CLEAN.read_bytes())
    env = _env(tmp_path, INPUT_PACKAGES="*.pt2 -o", INPUT_FAIL_ON="info")
    report_cmd = action.gate_command(env, tmp_path / "aoti-lint")
    assert report_cmd[report_cmd.index("--") + 1:] == ["--write-baseline=model.pt2", "model.pt2", "-o"]
    assert action.gate(env) == 1
    assert model.read_bytes() == CLEAN.read_bytes()
    assert sorted(p.name for p in work.iterdir()) == ["--write-baseline=model.pt2", "-o", "model.pt2"]
    report = Path(_outputs(tmp_path)["report"]).read_text()
    assert "AOTI001" in report and "in 3 packages" in report
    sarif = json.loads(Path(_outputs(tmp_path)["report"]).with_suffix(".sarif").read_text())
    # The dynamic model's error and lower bounds, and each of the three packages' unchecked layout
    # (AOTI019, an info).
    assert sorted(r["ruleId"] for r in sarif["runs"][0]["results"]) == [
        "AOTI001", "AOTI002", "AOTI019", "AOTI019", "AOTI019"]


def test_third_party_actions_are_pinned_by_commit() -> None:
    text = (REPO / "action.yml").read_text()
    uses = re.findall(r"uses:\s*(\S+)(.*)", text)
    assert uses, "action.yml uses no action"
    for ref, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), ref
        assert re.search(r"#\s*v\d+\.\d+\.\d+", comment), (ref, "the version as a comment")


def test_comment_without_permission_warns_and_passes(tmp_path: Path, github: str,
                                                     capsys: pytest.CaptureFixture) -> None:
    FakeGitHub.status = 403
    assert action.comment(_comment_env(tmp_path, github, "## aoti-lint\n")) == 0
    assert "::warning title=aoti-lint::could not comment on the pull request: HTTP 403" in capsys.readouterr().out


def test_no_pull_request_no_comment(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"push": {}}))
    assert action.comment({"GITHUB_EVENT_PATH": str(event)}) == 0


def test_long_report_is_truncated_under_githubs_limit() -> None:
    body = action.comment_body("x" * 100_000)
    assert len(body) <= action.COMMENT_LIMIT and body.startswith(action.MARKER) and "truncated" in body


def test_action_yml_wires_the_script() -> None:
    doc = yaml.safe_load((REPO / "action.yml").read_text())
    assert doc["runs"]["using"] == "composite"
    steps = doc["runs"]["steps"]
    gate = next(s for s in steps if s.get("id") == "gate")
    assert "action/aoti_lint_action.py\" gate" in gate["run"]
    # Every INPUT_* the script reads is passed from a declared input.
    for name, value in gate["env"].items():
        key = re.search(r"inputs\.([\w-]+)", value).group(1)
        assert key in doc["inputs"], name
        assert name == "INPUT_" + key.upper().replace("-", "_")
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in steps)
    assert any("aoti_lint_action.py\" comment" in s.get("run", "") for s in steps)
    assert steps[-1]["run"] == 'exit "${{ steps.gate.outputs.exit-code || 2 }}"'
    for output in doc["outputs"].values():
        assert re.search(r"steps\.gate\.outputs\.([\w-]+)", output["value"]).group(1) in ("exit-code", "sarif", "report", "json",
                                                                                          "diff")


def test_pre_commit_hook_runs_on_staged_packages() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "aoti-lint" and hook["language"] == "python"
    staged = ["README.md", str(BROKEN.relative_to(REPO)), str(CLEAN.relative_to(REPO))]
    files = [f for f in staged if re.search(hook["files"], f)]
    assert files == staged[1:]
    # pre-commit appends the file names to the entry; `aoti-lint` is `python -m analyzer` here.
    entry = hook["entry"].split()
    assert entry[0] == "aoti-lint"
    result = subprocess.run([sys.executable, "-m", "analyzer", *entry[1:], *files], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 1 and "AOTI002 [unenforced-lower-bound] error" in result.stdout
    clean = subprocess.run([sys.executable, "-m", "analyzer", *entry[1:], files[1]], cwd=REPO)
    assert clean.returncode == 0


class Recorder:
    """subprocess.run for the gate: each command recorded, then run for real."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def __call__(self, cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        self.commands.append(cmd)
        return subprocess.run(cmd, **kwargs)

    def aoti_lint(self, sub: str) -> list[list[str]]:
        n = len(AOTI_LINT.split())
        return [c for c in self.commands if c[:n] == AOTI_LINT.split() and c[n] == sub]


def test_one_analysis_renders_every_format(tmp_path: Path) -> None:
    """One `check` run writes the markdown, the SARIF and the JSON report: the same findings."""
    run = Recorder()
    env = _env(tmp_path, INPUT_PACKAGES=f"{BROKEN}\n{CLEAN}", INPUT_RUNTIME_CHECKS="off")
    assert action.gate(env, run=run) == 1
    [check] = run.aoti_lint("check")
    assert check[check.index("--runtime-checks") + 1] == "off"
    out = _outputs(tmp_path)
    doc = json.loads(Path(out["json"]).read_text())
    sarif = json.loads(Path(out["sarif"]).read_text())
    assert doc["runtime_checks"] == "off" and sarif["runs"][0]["properties"]["runtime_checks"] == "off"
    assert [f["code"] for f in doc["findings"]] == [r["ruleId"] for r in sarif["runs"][0]["results"]]
    report = Path(out["report"]).read_text()
    assert all(f"| {f['code']} |" in report for f in doc["findings"])
    assert out["diff"] == "" and not run.aoti_lint("diff")  # not a pull request: nothing to compare


def _repo_with_base(tmp_path: Path) -> Path:
    """A git repository whose HEAD has model.pt2 (float32) and whose working tree has it rebuilt
    for float64."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "model.pt2").write_bytes(F32.read_bytes())
    subprocess.run([*git, "add", "model.pt2"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    (repo / "model.pt2").write_bytes(F64.read_bytes())
    return repo


@pytest.mark.parametrize("from_event", [False, True])
def test_diff_against_the_base_branch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, from_event: bool) -> None:
    """In a pull request each package is compared with its version at the base commit (the
    `base-ref` input, else the event's base sha) and the diff is appended to the report."""
    repo = _repo_with_base(tmp_path)
    monkeypatch.chdir(repo)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "base": {"sha": sha}}}))
    refs = {"GITHUB_EVENT_PATH": str(event)} if from_event else {"INPUT_BASE_REF": "HEAD"}
    run = Recorder()
    # AOTI001 ignored: the check passes, only the diff says the rebuild accepts less.
    env = _env(tmp_path, INPUT_PACKAGES="*.pt2", INPUT_ARGS="--ignore AOTI001", INPUT_RUNTIME_CHECKS="on", **refs)
    assert action.gate(env, run=run) == 0
    [diff] = run.aoti_lint("diff")
    assert diff[-1] == "model.pt2" and diff[diff.index("--runtime-checks") + 1] == "on"
    assert Path(diff[-2]).read_bytes() == F32.read_bytes()  # the base's package, from git
    out = _outputs(tmp_path)
    text = Path(out["diff"]).read_text()
    assert "dtype-changed" in text and "`float32` | `float64`" in text
    report = Path(out["report"]).read_text()
    assert report.startswith("## aoti-lint") and report.endswith(text)
    assert (tmp_path / "summary.md").read_text() == report
    assert action.gate({**env, "INPUT_FAIL_ON_DIFF": "true"}, run=run) == 1


def test_no_diff_for_a_package_the_base_does_not_have(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo_with_base(tmp_path)
    monkeypatch.chdir(repo)
    (repo / "new.pt2").write_bytes(CLEAN.read_bytes())
    run = Recorder()
    env = _env(tmp_path, INPUT_PACKAGES="new.pt2", INPUT_BASE_REF="HEAD")
    assert action.gate(env, run=run) == 0
    assert not run.aoti_lint("diff") and _outputs(tmp_path)["diff"] == ""
    # A base ref the (shallow) checkout does not have: no diff either, the gate unchanged.
    assert action.gate({**env, "INPUT_PACKAGES": "model.pt2", "INPUT_BASE_REF": "0" * 40, "INPUT_FAIL_ON": "info"},
                       run=run) == 1


def test_diff_against_a_named_base_package(tmp_path: Path) -> None:
    """`base-package`: the deployed build, wherever the workflow put it."""
    env = _env(tmp_path, INPUT_PACKAGES=str(F64), INPUT_BASE_PACKAGE=str(F32), INPUT_FAIL_ON_DIFF="true",
               INPUT_ARGS="--ignore AOTI001")
    assert action.gate(env) == 1
    assert "dtype-changed" in Path(_outputs(tmp_path)["diff"]).read_text()
