"""`aoti-lint report PKG... -o report.html`: the HTML report command (analyzer.report.html).

A module of its own so that cli.py stays short; cli.py imports it at its end to register it.
"""

from __future__ import annotations

import click

from .clibase import PROG, Reading, resolve_config, write_output, lint_packages, render_limit, cli, output_option, package_options
from ..core.untrusted import terminal


@cli.command(name="report")
@click.argument("packages", nargs=-1, required=True, metavar="PKG...")
@output_option
@click.option("--select", multiple=True, metavar="RULES", help="Rules to enable (as for check).")
@click.option("--ignore", multiple=True, metavar="RULES", help="Rules to disable (as for check).")
@click.option("--target-device", type=click.Choice(["cpu", "cuda"]), default=None,
              help="The device the packages will run on.")
@click.option("--target-sm", metavar="SM", default=None, help="The GPU's compute capability, e.g. 80 or 90a.")
@click.option("--runtime-checks", type=click.Choice(["on", "off"]), default=None,
              help="Whether production runs with AOTI_RUNTIME_CHECK_INPUTS=1 (as for check).")
@package_options
def report_command(packages: tuple[str, ...], output: str | None, select: tuple[str, ...],
                   ignore: tuple[str, ...], target_device: str | None, target_sm: str | None,
                   reading: Reading, runtime_checks: str | None = None) -> None:
    """Write one self-contained HTML page: inputs and ranges, findings with their chains, and each
    kernel's source with its assertions highlighted and linked from the findings.

    Exits 0 when the page is written, whatever it found (use `check` to gate).
    """
    from ..report.html import render_html

    from ..report.common import RUNTIME_CHECKS

    config = resolve_config(reading, select=select, ignore=ignore, target_device=target_device, target_sm=target_sm,
                     runtime_checks=runtime_checks)
    result, findings = lint_packages(packages, config, reading, keep_sources=True)
    token = RUNTIME_CHECKS.set(config.runtime_checks or "unset")  # the page's summary line says it
    try:
        with render_limit(config, len(result.packages)):
            page = render_html(result.packages, findings)
    finally:
        RUNTIME_CHECKS.reset(token)
    write_output(page, output)
    if output not in (None, "-"):
        click.echo(f"{PROG}: wrote {terminal(output)}", err=True)
