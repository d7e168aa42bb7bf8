"""`aoti-lint confirm PKG`: run the findings' witnesses (analyzer.explain.confirm). THIS RUNS THE PACKAGE.

A module of its own so that cli.py stays short; cli.py imports it at its end to register it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import click

from .clibase import LintError, Reading, resolve_config, write_output, lint_packages, cli, output_option, package_options
from ..core.findings import Finding, Severity
from ..core.untrusted import terminal as t, terminal_lines
from ..report.common import confirmation_text


def _torch_here(python: str) -> dict[str, bool]:
    """Which devices a child can run on; LintError when torch is not installed."""
    probe = subprocess.run([python, "-c", "import json, torch; print(json.dumps({'cpu': True, "
                            "'cuda': bool(torch.cuda.is_available())}))"], capture_output=True, text=True,
                           timeout=300, stdin=subprocess.DEVNULL)
    if probe.returncode != 0:
        lines = probe.stderr.strip().splitlines()
        last = lines[-1] if lines else ""
        if "No module named" in last and "torch" in last or not last:
            raise LintError("confirm runs the package and needs torch: pip install 'aoti-lint[confirm]' "
                            "(torch, with the build for the package's device)")
        # torch is there but does not import (a local module shadowing the standard library, a
        # broken build): the user needs its own error, not an install hint.
        raise LintError(f"confirm could not import torch with {t(python)}: {t(last)}")
    answer = json.loads(probe.stdout.strip().splitlines()[-1])
    return {k: bool(v) for k, v in answer.items()}


def _line(f: Finding) -> str:
    # A probe's outcome quotes what the package printed: shown through the terminal renderer too.
    return f"  {t(confirmation_text(f) or 'not-run')}"


def render_text(reports, findings: list[Finding]) -> str:
    from ..report import render

    lines = []
    for report in reports:
        ep = report.exported_program or "none (crashes and NaN only, no value comparison)"
        lines.append(f"aoti-lint confirm (this RUNS the package, in child processes): {t(report.package)}; "
                     f"eager reference: {t(ep)}")
        if report.not_run:
            lines.append(f"  nothing ran: {t(report.not_run)}")
    for f in findings:
        head = render("concise", [f]).splitlines()[0]
        lines += [head, _line(f)]
    unexplained = [(r, m, p, o) for r in reports for m in r.models for p, o in m.unexplained]
    if unexplained:
        lines.append("unexplained failures (a probe failed and no finding is about its dim and size):")
        for r, m, p, o in unexplained:
            lines.append(f"  {t(r.package)}, model {t(repr(m.model))}: {t(p.label)}: {t(o.what)}")
    counts = {v: sum(1 for f in findings if (f.confirmation or {}).get("verdict") == v)
              for v in ("confirmed", "not-reproduced", "not-run")}
    probes = sum(len(m.probes) for r in reports for m in r.models)
    lines.append(f"Confirmed {counts['confirmed']} of {len(findings)} findings, {counts['not-reproduced']} not "
                 f"reproduced, {counts['not-run']} not run; {len(unexplained)} unexplained failure(s) in "
                 f"{probes} dim probes.")
    return terminal_lines("\n".join(lines) + "\n")


def render_markdown(reports, findings: list[Finding], packages: list) -> str:
    """The pull-request comment of `check --format markdown` with each finding's verdict in its
    details, led by what ran and followed by the unexplained failures (every field through the
    markdown renderers)."""
    from ..report import render
    from ..core.untrusted import md_code, md_text

    lead = [f"**aoti-lint confirm** RAN {md_code(r.package)} in child processes; eager reference: "
            + (md_code(r.exported_program) if r.exported_program else "none (crashes and NaN only)")
            + (f"; nothing ran: {md_text(r.not_run)}" if r.not_run else "") for r in reports]
    body = render("markdown", findings, packages=packages)
    title, _, rest = body.partition("\n")
    unexplained = [f"- {md_code(r.package)}, model {md_code(m.model)}: {md_code(p.label)}: {md_text(o.what)}"
                   for r in reports for m in r.models for p, o in m.unexplained]
    tail = ["", "**Unexplained failures** (a probe failed and no finding is about its dim and size):", *unexplained] \
        if unexplained else []
    return "\n".join([title, "", *lead, rest.rstrip("\n"), *tail]) + "\n"


def _outcome_json(model: str, probe, outcome) -> dict:
    return {"model": model, "probe": probe.label, "outcome": outcome.as_dict()}


def render_json(reports, findings: list[Finding]) -> str:
    from ..report import render

    doc = json.loads(render("json", findings))
    doc["confirm"] = {"ran": True, "packages": [
        {"package": r.package, "exported_program": r.exported_program, "not_run": r.not_run,
         "probes": [_outcome_json(m.model, p, o) for m in r.models for p, o in m.probes],
         "unexplained": [_outcome_json(m.model, p, o) for m in r.models for p, o in m.unexplained]}
        for r in reports]}
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


@cli.command(name="confirm")
@click.argument("packages", nargs=-1, required=True, metavar="PKG...")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              help="Output format (markdown: the pull-request comment with each finding's verdict).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Lowest severity of a confirmed finding that makes the exit code 1 (default: error).")
@click.option("--probe-timeout", type=float, default=120.0, show_default=True, metavar="SECONDS",
              help="Wall-clock limit of one probe's child process.")
@click.option("--probe-memory", default="16G", show_default=True, metavar="SIZE",
              help="Address-space limit of one CPU probe's child process.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=2, show_default=True, metavar="N",
              help="Probes run at a time (each a child process).")
@click.option("--python", "python", default=None, metavar="PATH",
              help="The Python (with torch) that runs the probes (default: this one).")
@output_option
@package_options
def confirm_command(packages: tuple[str, ...], fmt: str, fail_on: str | None, probe_timeout: float,
                    probe_memory: str, jobs: int, python: str | None, output: str | None,
                    reading: Reading) -> None:
    """RUN each package on its findings' witnesses and on every dynamic dim at 0, 1 and max+1, and
    say which findings are confirmed.

    Unlike every other command, this one EXECUTES the package: each probe loads it with
    torch._inductor.aoti_load_package in a child process of its own (time and memory limits; an
    abort or a device assert ends only that child). Use it only on packages you trust to run. It
    needs torch (pip install 'aoti-lint[confirm]') and the package's device; the exported program
    (--exported-program, or X.ep.pt2 beside X.pt2 unless --no-pair) is the eager reference (same
    weights) to compare values with.

    Exit 1 when a confirmed finding is at or above --fail-on or a probe failed that no finding
    explains; 0 otherwise; 2 on a usage error, an unreadable package or no torch.
    """
    from ..read import archive
    from ..explain import confirm
    from .config import ConfigError, parse_size
    from .many import paired_exported_program

    config = resolve_config(reading, fail_on=fail_on)
    try:
        memory = parse_size(probe_memory, "--probe-memory")
    except ConfigError as exc:
        raise LintError(str(exc)) from None
    interpreter = python or sys.executable
    devices = _torch_here(interpreter)
    result, findings = lint_packages(list(packages), config, reading, lint_args={"keep_going": False})
    reports, confirmed = [], []
    for pkg in result.packages:
        with archive.open_package(pkg.path) as opened:
            binaries = [b for m in opened.models for b in m.binaries]
        mine = [f for f in findings if f.package == pkg.path]
        # The reference is the exported program the check read: given, or `X.ep.pt2` beside `X.pt2`.
        reference = reading.exported_program or (paired_exported_program(pkg.path) if reading.pair else None)
        report = confirm.confirm(pkg.path, pkg.models, mine, reference, binaries, devices,
                                 jobs=jobs, timeout_s=probe_timeout, max_memory=memory, python=interpreter)
        reports.append(report)
        confirmed.extend(confirm.with_confirmations(report))
    if fmt == "markdown":
        text = render_markdown(reports, confirmed, result.packages)
    else:
        text = render_json(reports, confirmed) if fmt == "json" else render_text(reports, confirmed)
    write_output(text, output)
    gate = config.fail_on if isinstance(config.fail_on, Severity) else Severity.parse(str(config.fail_on))
    failing = any(f.severity >= gate and not f.accepted and (f.confirmation or {}).get("verdict") == "confirmed"
                  for f in confirmed)
    unexplained = any(m.unexplained for r in reports for m in r.models)
    click.get_current_context().exit(1 if failing or unexplained else 0)
