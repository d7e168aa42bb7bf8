"""`aoti-lint merge REPORT...`: shard reports into one (analyzer.app.merge).

A module of its own so that cli.py stays short; cli.py imports it at its end to register it.
"""

from __future__ import annotations

import click

from .clibase import write_output, cli, output_option
from ..core.findings import Severity


@cli.command(name="merge")
@click.argument("reports", nargs=-1, required=True, metavar="REPORT...")
@output_option
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error",
              help="Lowest severity that makes the exit code 1 (default: error).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with findings (errors still exit 2).")
@click.option("--confirmed-only", is_flag=True,
              help="Only findings `aoti-lint confirm` confirmed count for the exit code (reports of `confirm`).")
def merge_command(reports: tuple[str, ...], output: str | None, fail_on: str, exit_zero: bool,
                  confirmed_only: bool) -> None:
    """Merge `check` reports of shards into one: JSON reports into one JSON report, SARIF logs
    into one multi-run SARIF log. Exit codes as `check`: 2 when a merged report lists an
    unreadable package, else 1 with findings at or above --fail-on."""
    from .merge import merge

    merged = merge(list(reports))
    write_output(merged.text(), output)
    gate = Severity.parse(fail_on)
    counted = [s for s, c in zip(merged.severities, merged.confirmed) if c or not confirmed_only]
    failed = not exit_zero and any(s >= gate for s in counted)
    click.get_current_context().exit(2 if merged.errors else 1 if failed else 0)
