"""The `aoti-lint` command line: parse options, call the library, render, pick the exit code.

Exit codes: 0 nothing at or above `--fail-on`; 1 findings at or above it; 2 a usage error or a
package that could not be read (one `aoti-lint: error: ...` line on stderr, never a traceback).

The commands' shared parts are in clibase.py; `report`, `merge`, `diff` and `confirm` live in
cli_*.py; the work itself is in api.py, many.py and report/.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any, Callable, Sequence

import click

from ..core import budget
from . import baseline
from .config import FORMAT_NAMES, Config, ConfigError, load_config, merge
from ..core.findings import Finding, Severity
from ..core.untrusted import terminal
from . import cli_confirm, cli_diff, cli_merge, cli_report  # noqa: F401  (each registers its command on `cli`)
from .clibase import (
    LOG_LIMIT, PROG, LintError, Reading, cli, write_output, exit_code, lint_packages, one_line_error, options_for,
    output_option, package_options, render_limit, resolve_config, use_color,
)

# The console script's entry point and the group tests invoke; the commands below register on it.
__all__ = ["cli", "exit_code", "main"]

@cli.command()
@click.argument("packages", nargs=-1, metavar="PKG...")
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default=None,
              help="Report format (default: text, or `format` in [tool.aoti-lint]); full: text with the "
                   "explanation, chain, snippet, every witness and the whole fix.")
@output_option
@click.option("--select", multiple=True, metavar="RULES",
              help="Rules to enable: names, code prefixes or ALL (comma-separated, repeatable).")
@click.option("--ignore", multiple=True, metavar="RULES",
              help="Rules to disable: names or code prefixes (comma-separated, repeatable).")
@click.option("--extend-select", multiple=True, metavar="RULES",
              help="Rules to enable on top of the selection (and of a configuration's ignore).")
@click.option("--extend-ignore", multiple=True, metavar="RULES",
              help="Rules to disable on top of the selection.")
@click.option("--exclude", multiple=True, metavar="GLOBS",
              help="Leave out what a folder walk finds matching these globs (the path below the folder, or "
                   "the name; comma-separated, repeatable; replaces `exclude` in [tool.aoti-lint]).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Lowest severity that makes the exit code 1 (default: error).")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even when findings reach --fail-on (usage errors and unreadable "
                   "packages still exit 2).")
@click.option("--baseline", "baseline_file", metavar="FILE", default=None,
              help="Accept the findings recorded in FILE (see --write-baseline): only new findings "
                   "are reported and fail; entries that match nothing any more are listed on stderr.")
@click.option("--write-baseline", metavar="FILE", default=None,
              help="Record the current findings in FILE as accepted, and exit 0.")
@click.option("--target-device", type=click.Choice(["cpu", "cuda"]), default=None,
              help="The device the package will run on.")
@click.option("--target-sm", metavar="SM", default=None,
              help="The GPU's compute capability, e.g. 80 or 90a.")
@click.option("--runtime-checks", type=click.Choice(["on", "off"]), default=None,
              help="Whether production runs with AOTI_RUNTIME_CHECK_INPUTS=1: on (the checks it enables "
                   "count as enforced; only what fails anyway is reported), off (what it would check is "
                   "reported at its consequence); default: not said, or `runtime-checks` in [tool.aoti-lint].")
@click.option("--source-root", metavar="DIR", default=None, type=click.Path(exists=True, file_okay=False),
              help="Where the model's source files are: findings point at them when found (default: the "
                   "working directory).")
@click.option("--color/--no-color", "color", default=None,
              help="Colour the text output (default: when stdout is a terminal and NO_COLOR is unset).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N", help="Worker processes (default: CPUs).")
@click.option("--statistics", is_flag=True, help="The number of findings per rule instead of the findings.")
@click.option("-q", "--quiet", is_flag=True,
              help="Print the findings only: no summary line, no notes (errors are still printed).")
@click.option("--show-settings", is_flag=True,
              help="Print the resolved configuration and where each value comes from, and exit 0.")
@click.option("--also-output", "also_output", multiple=True, metavar="FORMAT=FILE",
              help="Also write the report in FORMAT to FILE, from the same run (repeatable), e.g. "
                   "`--also-output sarif=out.sarif --also-output markdown=comment.md`.")
@package_options
def check(
    packages: tuple[str, ...],
    fmt: str | None,
    output: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_on: str | None,
    exit_zero: bool,
    baseline_file: str | None,
    write_baseline: str | None,
    target_device: str | None,
    target_sm: str | None,
    runtime_checks: str | None,
    color: bool | None,
    jobs: int | None,
    statistics: bool,
    reading: Reading,
    source_root: str | None = None,
    extend_select: tuple[str, ...] = (),
    extend_ignore: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    quiet: bool = False,
    show_settings: bool = False,
    also_output: tuple[str, ...] = (),
) -> None:
    """Check packages and report findings.

    PKG: a .pt2 file, an extracted package folder, or a folder searched for both (after `--`, a
    path that starts with `-` is a path). Exit 0: no finding at or above --fail-on; 1: findings at
    or above it; 2: usage error or unreadable package; 130/143: interrupted (SIGINT/SIGTERM).
    """
    from .many import default_jobs, progress_bar

    cli_values: dict[str, Any] = {
        "select": select, "ignore": ignore, "fail_on": fail_on, "target_device": target_device,
        "target_sm": target_sm, "format": fmt, "extend_select": extend_select, "extend_ignore": extend_ignore,
        "exclude": exclude, "runtime_checks": runtime_checks}
    config = resolve_config(reading, **cli_values)
    extra_outputs = _also_outputs(also_output)
    items, groups = _package_groups(packages, reading, cli_values, config)
    if show_settings:
        _show_settings(config, items, groups)
        return
    if not packages:
        raise click.UsageError("Missing argument 'PKG...'.")
    if baseline_file is not None and not os.path.isfile(baseline_file):
        raise LintError(f"{baseline_file}: No such file (--baseline; create it with --write-baseline)")
    with progress_bar() as progress:
        result, findings, failing = _lint_groups(items, groups, reading, source_root=source_root, lint_args={
            "jobs": jobs or default_jobs(), "progress": progress, "keep_going": True})
    errors = _say_errors(result, packages, quiet)
    findings = _baselines(findings, [p.path for p in result.packages], errors, baseline_file, write_baseline, quiet)
    text, extra = _reports(config, findings, result, errors, extra_outputs, statistics=statistics,
                           color=use_color(color, output), quiet=quiet)
    if result.packages or not errors:  # nothing read: no report a later CI step could take for a clean run
        write_output(text, output)
        for path, other in extra:
            write_output(other, path)
    click.get_current_context().exit(2 if errors else exit_code(failing(findings), Severity.INFO, exit_zero))



def _say_errors(result, packages: Sequence[str], quiet: bool) -> list:
    """Print the run's notes and errors (stderr); the errors. Nothing checked is a usage error."""
    for note in getattr(result, "notes", []) if not quiet else []:
        click.echo(f"{PROG}: note: {terminal(note)}", err=True)
    for error in (errors := getattr(result, "errors", [])):
        click.echo(f"{PROG}: error: {terminal(error.message)}", err=True)
    if not result.packages and not errors:  # e.g. a folder of exported programs: nothing was checked
        named = ", ".join(packages[:3]) + (f" and {len(packages) - 3} more" if len(packages) > 3 else "")
        raise LintError(f"no package found in {named} (exported programs, *.ep.pt2, are not packages)")
    return errors


def _baselines(findings: list, checked: list, errors: list, baseline_file: str | None, write_baseline: str | None,
               quiet: bool) -> list:
    """`--write-baseline` (writes and exits) and `--baseline` (the findings it does not hold);
    `checked`: the packages read (folders expanded, duplicates dropped)."""
    if write_baseline is not None:
        count = baseline.write(write_baseline, findings)
        if not quiet:
            click.echo(f"{PROG}: wrote {count} baseline entr{'y' if count == 1 else 'ies'} to "
                       f"{terminal(write_baseline)}", err=True)
        click.get_current_context().exit(2 if errors else 0)
    if baseline_file is not None:
        findings, notes = baseline.apply_file(baseline_file, findings, checked)
        for note in notes if not quiet else []:
            click.echo(f"{PROG}: {terminal(note)}", err=True)
    return findings


def _reports(config, findings: list, result, errors: list, extra_outputs: list[tuple[str, str]], *,
             statistics: bool, color: bool, quiet: bool) -> tuple[str, list[tuple[str, str]]]:
    """The report in the configured format (or the statistics), and each `--also-output` one."""
    from ..report import render, render_statistics
    from ..rules import all_rules

    with render_limit(config, len(result.packages)):
        text = render_statistics(config.format, findings, errors=errors) if statistics else render(
            config.format, findings, packages=result.packages, color=color, rules=all_rules(),
            errors=errors, runtime_checks=config.runtime_checks)
        extra = [(path, render(fmt, findings, packages=result.packages, rules=all_rules(), errors=errors,
                               runtime_checks=config.runtime_checks)) for fmt, path in extra_outputs]
    if quiet and not statistics and config.format in ("text", "full", "concise"):
        text = _without_summary(text)
    return text, extra

def _also_outputs(values: Sequence[str]) -> list[tuple[str, str]]:
    """`--also-output FORMAT=FILE` values as (format, file); a usage error names a bad one."""
    out = []
    for value in values:
        fmt, sep, path = value.partition("=")
        if not sep or not path or fmt not in FORMAT_NAMES:
            raise click.UsageError(f"--also-output {value!r}: expected FORMAT=FILE with FORMAT one of "
                                   f"{', '.join(FORMAT_NAMES)}")
        out.append((fmt, path))
    return out


def _without_summary(text: str) -> str:
    """A text or concise report without its last line (the summary) and the blank line before it."""
    body = text.rstrip("\n")
    cut = body.rfind("\n")
    body = body[:cut].rstrip("\n") if cut >= 0 else ""
    return body + "\n" if body else ""


def _package_groups(packages: Sequence[str], reading: Reading, cli_values: dict[str, Any],
                    config: Config) -> tuple[list[Any], list[tuple[Config, list[int]]]]:
    """The packages (a folder with configurations of its own below it: what its walk finds), and
    their indices grouped by the configuration that applies to each (analyzer/app/settings.py); one
    group (the working directory's) when none has a nearer configuration file."""
    from . import settings

    try:
        items = settings.expand(list(packages), config.exclude)
        return items, settings.group(items, load_config(),
                                     lambda base: merge(base, **cli_values, **(reading.limits or {})))
    except ConfigError as exc:
        raise LintError(str(exc)) from None


def _show_settings(config: Config, packages: Sequence[Any], groups: list[tuple[Config, list[int]]]) -> None:
    from . import settings

    try:
        shown = [settings.render(config, "settings for the working directory")]
        for cfg, indices in groups:
            if cfg.source != config.source:
                names = ", ".join(getattr(packages[i], "path", packages[i]) for i in indices)
                shown.append(settings.render(cfg, f"settings for {names}"))
    except ValueError as exc:  # Limits rejected the combination
        raise LintError(one_line_error(exc)) from None
    write_output("\n".join(shown), None)


def _lint_groups(packages: Sequence[Any], groups: list[tuple[Config, list[int]]], reading: Reading,
                 lint_args: dict[str, Any], **extra: Any) -> tuple[Any, list[Finding], Callable[[list[Finding]], list[Finding]]]:
    """`lint_packages` once per configuration group, merged in the order the packages were given; and a
    filter of the findings whose own group's `fail-on` they reach (for the exit code)."""
    if len(groups) <= 1:
        config = groups[0][0] if groups else resolve_config(reading)
        result, findings = lint_packages(packages, config, reading, lint_args=lint_args, **extra)
        return result, findings, lambda found: [f for f in found if f.severity >= config.fail_on]
    from . import api

    results = [(cfg, lint_packages([packages[i] for i in indices], cfg, reading, lint_args=lint_args, **extra))
               for cfg, indices in groups]
    rank = {}
    for n, (_, (res, _)) in enumerate(results):
        for k, pkg in enumerate(res.packages):
            rank[pkg.path] = (min(i for i in groups[n][1]), k)
    packages_out = sorted((p for _, (res, _) in results for p in res.packages), key=lambda p: rank[p.path])
    findings = sorted((f for _, (_, found) in results for f in found), key=lambda f: rank.get(f.package, (0, 0)))
    errors = [e for _, (res, _) in results for e in res.errors]
    notes = [n for _, (res, _) in results for n in res.notes]
    fail_on = {f.package: cfg.fail_on for cfg, (_, found) in results for f in found}

    def failing(found: list[Finding]) -> list[Finding]:
        # Each package's own fail-on decides whether its findings fail the run.
        return [f for f in found if f.severity >= fail_on.get(f.package, Severity.ERROR)]

    return api.Result(packages_out, findings, errors, notes), findings, failing


@cli.command()
@click.argument("package", metavar="PKG")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot"]), default="text",
              help="Output format (dot: the package's graph for Graphviz).")
@output_option
@package_options
def inspect(package: str, fmt: str, output: str | None, reading: Reading) -> None:
    """Show what the analyzer sees in a package: models, inputs, symbols, kernels, assertions."""
    from . import api
    from ..report import inspect as inspect_report

    config = resolve_config(reading, package)
    pkg = api.load(package, options_for(config, reading))
    with render_limit(config, 1):
        if fmt == "dot":
            from ..report.dot import render_dot

            text = render_dot(pkg)
        else:
            text = inspect_report.render_json(pkg) if fmt == "json" else inspect_report.render_text(pkg)
    write_output(text if text.endswith("\n") else text + "\n", output)


@cli.command(name="rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="Output format.")
def rules_command(fmt: str) -> None:
    """List every rule: code, name, default severity, summary."""
    from ..report.ruledoc import render_table, render_table_json
    from ..rules import all_rules

    rules = all_rules()
    click.echo(render_table_json(rules) if fmt == "json" else render_table(rules), nl=False)


@cli.command()
@click.argument("rule", metavar="RULE")
def explain(rule: str) -> None:
    """Explain a rule, by name (empty-index-bound) or code (AOTI001)."""
    from ..report.ruledoc import render_explain
    from ..rules import find_rule

    found = find_rule(rule)
    if found is None:
        raise LintError(f"unknown rule {rule!r} (see `{PROG} rules`)")
    click.echo(render_explain(found, color=use_color(None, None)), nl=False, color=True)


@cli.command()
@click.argument("package", metavar="PKG")
@click.argument("message", required=False)
@click.option("--log", "log", metavar="FILE|-", default=None,
              help="A log to search for the failure ('-' reads stdin).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="Output format.")
@click.option("--runtime-checks", type=click.Choice(["on", "off"]), default=None,
              help="Whether production runs with AOTI_RUNTIME_CHECK_INPUTS=1 (as for check).")
@output_option
@package_options
def why(package: str, message: str | None, log: str | None, fmt: str, output: str | None,
        reading: Reading, runtime_checks: str | None = None) -> None:
    """Explain a runtime failure (an assertion message or a log) against a package.

    Exits 0 when the failure is matched to the package, 1 when it is not.
    """
    if message is not None and log is not None:
        raise click.UsageError("give MESSAGE or --log, not both")
    if message is None and log is None:
        raise click.UsageError("give the failure MESSAGE or --log FILE (or --log - for stdin)")
    text = message if message is not None else _read_log(log or "-")

    from . import api
    from ..explain import why as why_module
    from ..report import why as why_report

    options = options_for(resolve_config(reading, package, runtime_checks=runtime_checks), reading)
    pkg = api.load(package, options)
    # The log is untrusted text too: it gets its own --timeout (and --max-memory) budget.
    label = "MESSAGE" if message is not None else ("<stdin>" if log == "-" else str(log))
    deadline = budget.Deadline(options.limits.timeout_s, label, options.limits.max_memory)
    explanation = api.text_hits(package, why_module.explain_failure(pkg, text, deadline), options)
    rendered = why_report.render_json(explanation) if fmt == "json" else why_report.render_text(explanation)
    write_output(rendered if rendered.endswith("\n") else rendered + "\n", output)
    click.get_current_context().exit(0 if getattr(explanation, "matched", bool(explanation)) else 1)


@cli.command()
@click.argument("package", metavar="PKG")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="Output format of the contract.")
@click.option("--emit", type=click.Choice(["python"]), default=None,
              help="Write a dependency-free input guard instead: `check_inputs(*args, **kwargs)`.")
@click.option("--runtime-checks", type=click.Choice(["on", "off"]), default=None,
              help="Whether production runs with AOTI_RUNTIME_CHECK_INPUTS=1 (as for check).")
@output_option
@package_options
def contract(package: str, fmt: str, emit: str | None, output: str | None, reading: Reading,
             runtime_checks: str | None = None) -> None:
    """Print each input's contract as the package enforces it, or emit a guard to paste.

    Per input: dtype, device, each dim's compiled range and whether anything checks it (always,
    only with AOTI_RUNTIME_CHECK_INPUTS=1, never); then the calls that fail unchecked.
    """
    from . import api
    from ..explain import contract as contract_module, guard

    config = resolve_config(reading, package, runtime_checks=runtime_checks)
    result = api.lint([package], options_for(config, reading))
    contracts = [contract_module.build(package, model, result.findings)
                 for pkg in result.packages for model in pkg.models]
    with render_limit(config, len(result.packages)):
        if emit == "python":
            text = guard.render_python(contracts)
        elif fmt == "json":
            text = contract_module.render_json(contracts)
        else:
            text = contract_module.render_text(contracts)
    write_output(text, output)


def _read_log(path: str) -> str:
    if path == "-":
        stdin = sys.stdin
        buffer = getattr(stdin, "buffer", None)
        data = buffer.read(LOG_LIMIT + 1) if buffer is not None else stdin.read(LOG_LIMIT + 1).encode()
    else:
        with open(path, "rb") as fh:
            data = fh.read(LOG_LIMIT + 1)
    if len(data) > LOG_LIMIT:
        raise LintError(f"{path}: log larger than {LOG_LIMIT // (1024 * 1024)} MiB")
    return data.decode("utf-8", errors="replace")


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    # A process of one command: checking leaves no reference cycles (tests/test_memory.py), so the
    # cyclic collector would only traverse results that are alive anyway, again and again (0.1 s
    # of CPU on a 12 MB wrapper). Reference counting frees the rest.
    gc.disable()
    from ..core import interrupt

    # SIGINT and SIGTERM unwind the run as `Interrupted` (no `except Exception` stops it): workers
    # stopped, no report half written, exit 130 or 143, never 1 ("findings") after "Aborted!".
    interrupt.install()
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name=PROG)
    except interrupt.Interrupted as exc:
        click.echo(f"{PROG}: interrupted by {exc.name} (exit {exc.exit_code})", err=True)
        interrupt.exit_now(exc.exit_code)
    except SystemExit:
        if interrupt.received is not None:  # a signal that an exit raced (a worker killed by it first)
            interrupt.exit_now(128 + interrupt.received)
        raise



if __name__ == "__main__":  # pragma: no cover
    main()
