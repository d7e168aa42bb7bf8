"""`aoti-lint diff OLD NEW`: the contract and findings a rebuild changes (analyzer.report.diff).

A module of its own so that cli.py stays short; cli.py imports it at its end to register it.
"""

from __future__ import annotations

import dataclasses

import click

from .clibase import Reading, resolve_config, write_output, lint_packages, cli, output_option, package_options
from ..core.findings import Severity


@cli.command(name="diff")
@click.argument("old", metavar="OLD.pt2")
@click.argument("new", metavar="NEW.pt2")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              help="Output format (markdown: a pull-request comment).")
@click.option("--old-exported-program", metavar="EP.pt2", default=None,
              help="The exported program OLD was compiled from (declared ranges, input names).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Lowest severity of a new finding that makes the exit code 1 (default: error).")
@click.option("--runtime-checks", type=click.Choice(["on", "off"]), default=None,
              help="Whether production runs with AOTI_RUNTIME_CHECK_INPUTS=1 (as for check).")
@output_option
@package_options
def diff_command(old: str, new: str, fmt: str, old_exported_program: str | None, fail_on: str | None,
                 output: str | None, reading: Reading, runtime_checks: str | None = None) -> None:
    """Compare two builds of a model: what NEW accepts that OLD did not, and the reverse, as each
    package enforces it (inputs, dtypes, devices, compiled ranges and who checks them, declared
    ranges), and the findings NEW adds or drops (by build-stable fingerprint).
    --exported-program is NEW's, --old-exported-program OLD's.

    Exit 1 when NEW accepts less than OLD (a dim gone static, a range narrowed, a dtype, device or
    input changed) or adds a finding at or above --fail-on; 0 otherwise; 2 on a usage error or an
    unreadable package.
    """
    from ..explain import contract as contract_module
    from ..report import diff as diff_module

    config = resolve_config(reading, fail_on=fail_on, runtime_checks=runtime_checks)
    old_reading = dataclasses.replace(reading, exported_program=old_exported_program)
    sides = []
    for path, side in ((old, old_reading), (new, reading)):
        result, findings = lint_packages([path], config, side)
        contracts = [contract_module.build(path, model, findings) for pkg in result.packages for model in pkg.models]
        sides.append((contracts, findings))
    (old_contracts, old_findings), (new_contracts, new_findings) = sides
    diff = diff_module.compare(old, new, old_contracts, new_contracts, old_findings, new_findings)
    gate = config.fail_on if isinstance(config.fail_on, Severity) else Severity.parse(str(config.fail_on))
    if fmt == "json":
        text = diff_module.render_json(diff, gate)
    elif fmt == "markdown":
        text = diff_module.render_markdown(diff, gate)
    else:
        text = diff_module.render_text(diff, gate)
    write_output(text, output)
    click.get_current_context().exit(diff.exit_code(gate))
