"""The GitHub Action's script (stdlib only): run the gate once (one analysis, its markdown report,
SARIF and JSON rendered from it), compare each package with its version on the base branch
(`aoti-lint diff`, appended to the report), and create or update the pull request's single
aoti-lint comment.

    python aoti_lint_action.py gate      # reads INPUT_* and GITHUB_* like the Action's steps do
    python aoti_lint_action.py comment

`gate` writes `exit-code`, `sarif`, `report`, `json` and `diff` to $GITHUB_OUTPUT and the report to
the job summary. The base: `base-package` (one old package for the one checked package), else each
checked package at `base-ref` (default: the pull request's base commit; the checkout needs that
commit, e.g. `fetch-depth: 0`), read with `git show`; a package the base does not have is not
compared. With `fail-on-diff: true` a rebuild that accepts less than the base fails the gate.
`comment` finds the comment that the token's own user wrote and that starts with MARKER among the pull
request's comments and updates it, or creates it; it does nothing outside a pull request. Anyone can
write a comment starting with MARKER: one by another user is never edited. The token's user is
`GET /user`'s login (a personal access token); the workflow's GITHUB_TOKEN may not read `/user` (403)
and writes as `github-actions[bot]`, which is then assumed.

Globs in `packages` are expanded here (Python's glob, `**` recursive) and the files passed to aoti-lint
after `--`: a file named `--write-baseline=model.pt2` is a package to check, not an option.
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

MARKER = "<!-- aoti-lint-action -->"
COMMENT_LIMIT = 65536  # GitHub rejects longer comment bodies
# Who writes with the workflow's GITHUB_TOKEN, which cannot read `GET /user`.
ACTIONS_BOT = "github-actions[bot]"


def expand(patterns: str) -> list[str]:
    """Whitespace- or newline-separated paths and globs (`**` recursive), in order, each once.
    A pattern that matches nothing is kept, so that the gate reports the missing file (exit 2)."""
    out: list[str] = []
    for pattern in shlex.split(patterns):
        matches = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else [pattern]
        for path in matches or [pattern]:
            if path not in out:
                out.append(path)
    return out


def gate_command(env: Mapping[str, str], out_dir: Path) -> list[str]:
    """The one aoti-lint run: the markdown report (its exit code is the gate's), with the SARIF and
    the JSON report written from the same analysis (`--also-output`)."""
    packages = expand(env.get("INPUT_PACKAGES", ""))
    exe = shlex.split(env.get("AOTI_LINT", "aoti-lint"))
    # `--` ends the options: every expanded path is a package, whatever it starts with.
    return [*exe, "check", "--format", "markdown", "-o", str(out_dir / "aoti-lint.md"),
            "--also-output", f"sarif={out_dir / 'aoti-lint.sarif'}", "--also-output", f"json={out_dir / 'aoti-lint.json'}",
            "--fail-on", env.get("INPUT_FAIL_ON") or "error", *_common(env), "--", *packages]


def _common(env: Mapping[str, str]) -> list[str]:
    out = [*shlex.split(env.get("INPUT_ARGS", ""))]
    if env.get("INPUT_BASELINE"):
        out += ["--baseline", env["INPUT_BASELINE"]]
    if env.get("INPUT_RUNTIME_CHECKS"):
        out += ["--runtime-checks", env["INPUT_RUNTIME_CHECKS"]]
    return out


def base_ref(env: Mapping[str, str]) -> str | None:
    """The commit whose packages the pull request changes: the `base-ref` input, else the pull
    request's base commit from the event; None outside a pull request."""
    if env.get("INPUT_BASE_REF"):
        return env["INPUT_BASE_REF"]
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not os.path.exists(path):
        return None
    event = json.loads(Path(path).read_text(encoding="utf-8"))
    sha = ((event.get("pull_request") or {}).get("base") or {}).get("sha")
    return sha if isinstance(sha, str) and sha else None


def _git_show(ref: str, path: str, dest: Path, run: Callable[..., Any]) -> bool:
    """`path` as it is at `ref`, written to `dest`; False when `ref` has no such file (a new
    package, a shallow clone without the base commit)."""
    shown = run(["git", "show", f"{ref}:./{path}"], capture_output=True)
    if shown.returncode != 0:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(shown.stdout)
    return True


def base_pairs(env: Mapping[str, str], out_dir: Path, run: Callable[..., Any] = subprocess.run) -> list[tuple[str, str]]:
    """(old, new) package pairs to diff: `base-package` against the one checked package, or each
    checked package against its version at the base ref (written under out_dir/base, with the
    exported program `X.ep.pt2` beside it when the ref has one, so that both sides are paired alike)."""
    packages = [p for p in expand(env.get("INPUT_PACKAGES", "")) if os.path.isfile(p) and not p.endswith(".ep.pt2")]
    if env.get("INPUT_BASE_PACKAGE"):
        return [(env["INPUT_BASE_PACKAGE"], packages[0])] if len(packages) == 1 else []
    ref = base_ref(env)
    if ref is None:
        return []
    pairs = []
    for n, path in enumerate(packages):
        dest = out_dir / "base" / str(n) / Path(path).name
        if _git_show(ref, path, dest, run):
            if path.endswith(".pt2"):
                ep = path[: -len(".pt2")] + ".ep.pt2"
                _git_show(ref, ep, dest.with_name(Path(ep).name), run)
            pairs.append((str(dest), path))
    return pairs


def diff_report(env: Mapping[str, str], out_dir: Path, run: Callable[..., Any] = subprocess.run) -> tuple[str, int]:
    """The `aoti-lint diff` markdown of every pair (empty without one) and the worst exit code."""
    exe = shlex.split(env.get("AOTI_LINT", "aoti-lint"))
    runtime = ["--runtime-checks", env["INPUT_RUNTIME_CHECKS"]] if env.get("INPUT_RUNTIME_CHECKS") else []
    parts, worst = [], 0
    for n, (old, new) in enumerate(base_pairs(env, out_dir, run)):
        out = out_dir / f"aoti-lint.diff.{n}.md"
        code = run([*exe, "diff", "--format", "markdown", "-o", str(out), "--fail-on",
                    env.get("INPUT_FAIL_ON") or "error", *runtime, "--", old, new]).returncode
        worst = max(worst, code)
        if out.exists() and out.stat().st_size:
            parts.append(out.read_text(encoding="utf-8"))
        else:
            parts.append(f"## aoti-lint diff\n\n❌ could not compare `{new}` with the base's (exit {code}); "
                         "see the job log.\n")
    return "\n".join(parts), worst


def gate(env: Mapping[str, str], run: Callable[..., Any] = subprocess.run) -> int:
    out_dir = Path(env.get("RUNNER_TEMP") or ".") / "aoti-lint"
    out_dir.mkdir(parents=True, exist_ok=True)
    if not expand(env.get("INPUT_PACKAGES", "")):
        print("aoti-lint action: error: the `packages` input is empty", file=sys.stderr)
        return _outputs(env, 2, out_dir, "")
    code = run(gate_command(env, out_dir)).returncode
    report = out_dir / "aoti-lint.md"
    text = report.read_text(encoding="utf-8") if report.exists() else ""
    if not text:  # exit 2: nothing was rendered; the error line is in the job log
        text = f"## aoti-lint\n\n❌ aoti-lint could not check the packages (exit {code}); see the job log.\n"
    diff, diff_code = diff_report(env, out_dir, run)
    if diff:
        _write_whole(out_dir / "aoti-lint.diff.md", diff)
        text = text.rstrip("\n") + "\n\n" + diff
        if env.get("INPUT_FAIL_ON_DIFF") == "true" and diff_code == 1:
            code = max(code, 1)  # the rebuild accepts less than the base's package
    _write_whole(report, text)
    return _outputs(env, code, out_dir, text, diff=bool(diff))


def _write_whole(path: Path, text: str) -> None:
    """Write `path` through a temporary file renamed over it: never a half-written report."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def _outputs(env: Mapping[str, str], code: int, out_dir: Path, text: str, diff: bool = False) -> int:
    if env.get("GITHUB_OUTPUT"):
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as fh:
            fh.write(f"exit-code={code}\nsarif={out_dir / 'aoti-lint.sarif'}\nreport={out_dir / 'aoti-lint.md'}\n"
                     f"json={out_dir / 'aoti-lint.json'}\ndiff={out_dir / 'aoti-lint.diff.md' if diff else ''}\n")
    if env.get("GITHUB_STEP_SUMMARY") and text:
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
            fh.write(text)
    return code


def comment_body(report: str) -> str:
    body = f"{MARKER}\n{report}"
    if len(body) > COMMENT_LIMIT:
        note = "\n\n… (truncated: the full report is in the job summary and the SARIF upload)\n"
        body = body[: COMMENT_LIMIT - len(note)] + note
    return body


def pull_request_number(env: Mapping[str, str]) -> int | None:
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not os.path.exists(path):
        return None
    event = json.loads(Path(path).read_text(encoding="utf-8"))
    number = (event.get("pull_request") or {}).get("number")
    return int(number) if number is not None else None


class GitHub:
    """The three REST calls the comment needs."""

    def __init__(self, api_url: str, token: str):
        self.api_url = api_url.rstrip("/")
        self.token = token

    def request(self, method: str, path: str, body: dict | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api_url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"null")


def own_login(gh: GitHub) -> str:
    """The login the token writes as: `GET /user`, or github-actions[bot] for the workflow's
    GITHUB_TOKEN (an installation token: `/user` answers 403)."""
    try:
        user = gh.request("GET", "/user")
    except (urllib.error.URLError, ValueError):
        return ACTIONS_BOT
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and login else ACTIONS_BOT


def _ours(c: Any, login: str) -> bool:
    """A comment this token wrote earlier: its author is the token's user AND it has the marker."""
    if not isinstance(c, dict):
        return False
    author = c.get("user") if isinstance(c.get("user"), dict) else {}
    return author.get("login") == login and str(c.get("body", "")).startswith(MARKER)


def upsert_comment(gh: GitHub, repo: str, number: int, body: str) -> tuple[str, int]:
    """Update the pull request's aoti-lint comment, or create it: ("updated"|"created", id)."""
    login = own_login(gh)
    page = 1
    while True:
        comments = gh.request("GET", f"/repos/{repo}/issues/{number}/comments?per_page=100&page={page}")
        if not isinstance(comments, list):
            break
        for c in comments:
            if _ours(c, login):
                gh.request("PATCH", f"/repos/{repo}/issues/comments/{int(c['id'])}", {"body": body})
                return "updated", int(c["id"])
        if len(comments) < 100:
            break
        page += 1
    created = gh.request("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
    return "created", int(created["id"])


def comment(env: Mapping[str, str]) -> int:
    number = pull_request_number(env)
    if number is None:
        print("aoti-lint action: not a pull request; no comment")
        return 0
    report = Path(env.get("INPUT_REPORT") or Path(env.get("RUNNER_TEMP") or ".") / "aoti-lint" / "aoti-lint.md")
    text = report.read_text(encoding="utf-8") if report.exists() else "## aoti-lint\n\nNo report was written.\n"
    gh = GitHub(env.get("GITHUB_API_URL", "https://api.github.com"), env.get("GITHUB_TOKEN", ""))
    try:
        action, ident = upsert_comment(gh, env["GITHUB_REPOSITORY"], number, comment_body(text))
    except urllib.error.HTTPError as exc:
        # A fork's pull request gets a read-only token: say so, do not fail the gate for it.
        print(f"::warning title=aoti-lint::could not comment on the pull request: HTTP {exc.code} {exc.reason}")
        return 0
    print(f"aoti-lint action: {action} comment {ident} on #{number}")
    return 0


def main(argv: Sequence[str]) -> int:
    commands = {"gate": gate, "comment": comment}
    if len(argv) != 1 or argv[0] not in commands:
        print("usage: aoti_lint_action.py gate|comment", file=sys.stderr)
        return 2
    return commands[argv[0]](os.environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
