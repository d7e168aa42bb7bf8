"""The `aoti-lint` command line: parse options, call the library, render, pick the exit code.

Exit codes: 0 nothing at or above `--fail-on`; 1 findings at or above it; 2 a usage error or a
package that could not be read (one `aoti-lint: error: ...` line on stderr, never a traceback).

Long module: the click commands with their options and help text (`report` and `merge` live in
cli_report.py and cli_merge.py); the work itself is in api.py, many.py and report/.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import gc
import os
import sys
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterator, Sequence

import click

from . import __version__, archive, baseline
from .config import FORMAT_NAMES, Config, ConfigError, load_config, merge, parse_input_names
from .findings import Finding, Severity
from .untrusted import terminal

PROG = "aoti-lint"
LOG_LIMIT = 64 * 1024 * 1024  # a log bigger than this is not a log we should hold in memory


class LintError(click.ClickException):
    """Exit 2 with a single `aoti-lint: error: <message>` line."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        # A message names files and members: the terminal renderer keeps it one visible line.
        click.echo(f"{PROG}: error: {terminal(self.format_message())}", file=file or sys.stderr, err=True)


def _expected_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean "bad input", reported as one line: ValueError, OSError, ArchiveError.
    Anything else is an internal error: one line, exit 2, a traceback only with `--debug`."""
    from .archive import ArchiveError  # lazy: `--help` and `rules` need no archive reader

    return (ArchiveError, ValueError, OSError)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    return " ".join(text.split())


class DefaultGroup(click.Group):
    """A group where `aoti-lint PKG...` means `aoti-lint check PKG...`.

    The rewrite happens before the group parses its own options, so `aoti-lint --select X PKG`
    reaches `check` too; `--help` and `--version` stay the group's.
    """

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `--debug` is the group's, wherever it is written (`aoti-lint check --debug PKG` too).
        end = args.index("--") if "--" in args else len(args)
        if "--debug" in args[:end]:
            args = ["--debug", *(a for i, a in enumerate(args) if not (a == "--debug" and i < end))]
        rest = args[1:] if args[:1] == ["--debug"] else args
        if rest and rest[0] not in self.commands and rest[0] not in self._own_options(ctx) \
                and self._means_package(rest[0]):
            args = args[: len(args) - len(rest)] + [self.default_command, *rest]
        return super().parse_args(ctx, args)

    def _means_package(self, word: str) -> bool:
        """An option, an existing path or a path-like word goes to `check`; any other unknown word
        (`insepct`) is left to click, which answers "No such command" with "Did you mean"."""
        if word.startswith("-") or os.path.exists(word):
            return True
        if difflib.get_close_matches(word, list(self.commands)):
            return False  # a typo of a command, not a missing file
        return any(sep in word for sep in ("/", os.sep, "."))

    def _own_options(self, ctx: click.Context) -> set[str]:
        names: set[str] = set(ctx.help_option_names)
        for param in self.get_params(ctx):
            names.update(getattr(param, "opts", ()))
            names.update(getattr(param, "secondary_opts", ()))
        return names

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except _expected_errors() as exc:
            if isinstance(exc, RecursionError):  # a RuntimeError, not an input error
                raise InternalFailure(ctx, exc) from None
            raise LintError(_one_line(exc)) from None
        except Exception as exc:  # noqa: BLE001 - anything else is a bug: one line naming it, exit 2
            raise InternalFailure(ctx, exc) from None


class InternalFailure(click.ClickException):
    """A bug, not a finding: exit 2 with one line asking for a report (a traceback with --debug)."""

    exit_code = 2

    def __init__(self, ctx: click.Context, exc: BaseException) -> None:
        from .api import InternalError

        self.debug = bool(ctx.params.get("debug"))
        self.original = exc.__cause__ if isinstance(exc, InternalError) and exc.__cause__ else exc
        text = str(exc) if isinstance(exc, InternalError) else \
            f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        super().__init__(text)

    def show(self, file: IO[Any] | None = None) -> None:
        out = file or sys.stderr
        if self.debug:
            import traceback

            traceback.print_exception(self.original, file=out)
        click.echo(f"{PROG}: {terminal(self.format_message())}; please report it "
                   "(run with --debug for a traceback)", file=out, err=True)


def _use_color(flag: bool | None, output: str | None) -> bool:
    """--color/--no-color win; otherwise colour only on a TTY stdout with NO_COLOR unset."""
    if flag is not None:
        return flag
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    return _stdout_isatty()


def _stdout_isatty() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def _emit(text: str, output: str | None) -> None:
    if output is None or output == "-":
        # color=True: the renderers emit ANSI only when asked to, so click must not strip it.
        click.echo(text, nl=False, color=True)
        return
    from .atomic import write_atomic

    write_atomic(output, text)  # the old report stays whole if this fails or is interrupted


@contextlib.contextmanager
def _render_limit(config: Config, packages: int) -> Iterator[None]:
    """Rendering is bounded too: at most `--timeout` per package read (the report's size grows with
    its findings, so a real report takes milliseconds); past it, exit 2 and nothing is written."""
    from .interrupt import RenderTimeout, time_limit

    try:
        timeout = config.limits().timeout_s
    except ValueError:
        timeout = archive.Limits().timeout_s
    try:
        with time_limit(timeout * max(1, packages)):
            yield
    except RenderTimeout:
        raise LintError(f"rendering the report exceeded the {timeout:g} s time limit per package "
                        "(--timeout); nothing written") from None


@dataclass(frozen=True)
class Reading:
    """How to read a package, from the options `package_options` adds: the exported program and
    the input names (command line only) and the limits (command line over [tool.aoti-lint])."""

    exported_program: str | None = None
    input_names: tuple[str, ...] = ()
    limits: dict[str, str | None] | None = None  # raw option values, keyed like `merge`'s arguments
    pair: bool = True   # use the `X.ep.pt2` beside `X.pt2` (`--no-pair` turns it off)


# The limits' defaults have one home, archive.Limits; the help texts read them from there.
_DEFAULT_LIMITS = archive.Limits()


def _size_option(n: int) -> str:
    """`256M`, `1G`: a byte count as the size options spell it."""
    for suffix, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


_LIMIT_OPTIONS = ("max_members", "max_member_size", "max_total_size", "max_nesting", "timeout", "max_memory")
_READING_OPTIONS = ("exported_program", "input_names", "pair", *_LIMIT_OPTIONS)


def package_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the package-reading options to a command; it receives them as one `reading: Reading`.

    Values are taken as strings and validated by `config` so a bad one is a one-line exit 2.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        raw = {name: kwargs.pop(name) for name in _READING_OPTIONS}
        try:
            names = parse_input_names(raw["input_names"])
        except ConfigError as exc:
            raise LintError(str(exc)) from None
        ep = raw["exported_program"]
        if ep is not None and not os.path.exists(ep):
            raise LintError(f"{ep}: No such file or directory (--exported-program)")
        reading = Reading(exported_program=ep, input_names=names, pair=raw["pair"],
                          limits={name: raw[name] for name in _LIMIT_OPTIONS})
        return command(*args, reading=reading, **kwargs)

    options = [
        click.option("--exported-program", metavar="EP.pt2", default=None,
                     help="The torch.export.save archive the package was compiled from "
                          "(input names and dimension ranges)."),
        click.option("--input-names", multiple=True, metavar="NAMES",
                     help="The model's input names, in order (comma-separated, repeatable)."),
        click.option("--pair/--no-pair", "pair", default=True,
                     help="Read X.pt2 with the exported program X.ep.pt2 beside it, when there is one and "
                          "--exported-program is not given (default: pair)."),
        click.option("--max-members", metavar="N", default=None,
                     help=f"Most members read from one package (default {_DEFAULT_LIMITS.max_members})."),
        click.option("--max-member-size", metavar="SIZE", default=None,
                     help="Most bytes inflated from one member: bytes or 512K, 64M, 1G "
                          f"(default {_size_option(_DEFAULT_LIMITS.max_member_bytes)})."),
        click.option("--max-total-size", metavar="SIZE", default=None,
                     help=f"Most bytes inflated from one package (default {_size_option(_DEFAULT_LIMITS.max_total_bytes)})."),
        click.option("--max-nesting", metavar="N", default=None,
                     help=f"Deepest bracket nesting parsed in C++/Triton source (default and most "
                          f"{_DEFAULT_LIMITS.max_nesting})."),
        click.option("--timeout", metavar="SECONDS", default=None,
                     help=f"Wall-clock limit per package (default {_DEFAULT_LIMITS.timeout_s:g}; 0 expires at once); "
                          "rendering the report gets as much again per package."),
        click.option("--max-memory", metavar="SIZE", default=None,
                     help="Most resident memory; a member whose parse needs more is reported unparsed "
                          f"(default {_size_option(_DEFAULT_LIMITS.max_memory)}, at least "
                          f"{_size_option(archive.MIN_MEMORY)})."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _config(reading: Reading | None = None, package: str | None = None, **cli: Any) -> Config:
    """The command line over the configuration: the working directory's, and with `package` that
    package's nearest one over it (analyzer/settings.py)."""
    try:
        base = load_config()
        if package is not None:
            from . import settings

            base = settings.package_config(package, base)
        return merge(base, **cli, **((reading.limits or {}) if reading else {}))
    except ConfigError as exc:
        raise LintError(str(exc)) from None


def _options(config: Config, reading: Reading | None = None, **extra: Any) -> Any:
    """api.Options from the merged configuration and the package-reading options."""
    from . import api

    reading = reading or Reading()
    try:
        limits = config.limits()
    except ValueError as exc:  # Limits rejected the combination
        raise LintError(_one_line(exc)) from None
    return api.Options(
        limits=limits,
        select=config.selection()[0],
        ignore=config.selection()[1],
        exclude=config.exclude,
        target_device=config.target_device,
        target_sm=config.target_sm,
        runtime_checks=config.runtime_checks,
        exported_program=reading.exported_program,
        input_names=reading.input_names,
        pair=reading.pair,
        **extra,
    )


def exit_code(findings: Sequence[Finding], fail_on: Severity, exit_zero: bool = False) -> int:
    """1 when a finding is at or above `fail_on` (and not `--exit-zero`), else 0."""
    if exit_zero:
        return 0
    return 1 if any(f.severity >= fail_on and not f.accepted for f in findings) else 0


output_option = click.option(
    "-o", "--output", metavar="FILE", default=None, help="Write the report to FILE instead of stdout."
)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name=PROG, message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="On an internal error, print its traceback too.")
def cli(debug: bool) -> None:
    """Static analyzer for PyTorch AOTInductor (.pt2) packages.

    `aoti-lint PKG...` is short for `aoti-lint check PKG...`.

    \b
    Exit codes:
      0  no finding at or above --fail-on (default: error)
      1  findings at or above --fail-on (`why`: the failure matches nothing in the package)
      2  usage error, or a package or file that could not be read
      130, 143  interrupted by SIGINT, SIGTERM (nothing written)
    """


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
    from .report import render, render_statistics
    from .rules import all_rules

    cli_values: dict[str, Any] = {
        "select": select, "ignore": ignore, "fail_on": fail_on, "target_device": target_device,
        "target_sm": target_sm, "format": fmt, "extend_select": extend_select, "extend_ignore": extend_ignore,
        "exclude": exclude, "runtime_checks": runtime_checks}
    config = _config(reading, **cli_values)
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
    for note in getattr(result, "notes", []) if not quiet else []:
        click.echo(f"{PROG}: note: {terminal(note)}", err=True)
    for error in (errors := getattr(result, "errors", [])):
        click.echo(f"{PROG}: error: {terminal(error.message)}", err=True)
    if not result.packages and not errors:  # e.g. a folder of exported programs: nothing was checked
        named = ", ".join(packages[:3]) + (f" and {len(packages) - 3} more" if len(packages) > 3 else "")
        raise LintError(f"no package found in {named} (exported programs, *.ep.pt2, are not packages)")
    checked = [p.path for p in result.packages]  # folders expanded, duplicates dropped
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
    with _render_limit(config, len(result.packages)):
        text = render_statistics(config.format, findings, errors=errors) if statistics else render(
            config.format, findings, packages=result.packages, color=_use_color(color, output), rules=all_rules(),
            errors=errors, runtime_checks=config.runtime_checks)
        extra = [(path, render(fmt, findings, packages=result.packages, rules=all_rules(), errors=errors,
                               runtime_checks=config.runtime_checks)) for fmt, path in extra_outputs]
    if quiet and not statistics and config.format in ("text", "full", "concise"):
        text = _without_summary(text)
    if result.packages or not errors:  # nothing read: no report a later CI step could take for a clean run
        _emit(text, output)
        for path, other in extra:
            _emit(other, path)
    click.get_current_context().exit(2 if errors else exit_code(failing(findings), Severity.INFO, exit_zero))


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
    their indices grouped by the configuration that applies to each (analyzer/settings.py); one
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
        raise LintError(_one_line(exc)) from None
    _emit("\n".join(shown), None)


def _lint_groups(packages: Sequence[Any], groups: list[tuple[Config, list[int]]], reading: Reading,
                 lint_args: dict[str, Any], **extra: Any) -> tuple[Any, list[Finding], Callable[[list[Finding]], list[Finding]]]:
    """`_lint` once per configuration group, merged in the order the packages were given; and a
    filter of the findings whose own group's `fail-on` they reach (for the exit code)."""
    if len(groups) <= 1:
        config = groups[0][0] if groups else _config(reading)
        result, findings = _lint(packages, config, reading, lint_args=lint_args, **extra)
        return result, findings, lambda found: [f for f in found if f.severity >= config.fail_on]
    from . import api

    results = [(cfg, _lint([packages[i] for i in indices], cfg, reading, lint_args=lint_args, **extra))
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


def _lint(packages: Sequence[str], config: Config, reading: Reading, lint_args: dict[str, Any] | None = None,
          **extra: Any) -> tuple[Any, list[Finding]]:
    """api.lint (with `lint_args`), then [tool.aoti-lint] per-package-ignores and accept entries."""
    from . import accept, api
    from .rules import select_rules

    select_rules(*config.selection())  # an unknown selector fails before any package is read
    result = api.lint(list(packages), _options(config, reading, **extra), **(lint_args or {}))
    if not (config.accept or config.per_package_ignores):
        return result, list(result.findings)
    try:
        checked = [p.path for p in result.packages]  # folders expanded, duplicates dropped
        findings, notes = accept.apply_config(config, result.findings, checked)
    except accept.AcceptError as exc:
        raise LintError(f"{config.source}: [tool.aoti-lint] {exc}") from None
    for note in notes:
        click.echo(f"{PROG}: {terminal(note)}", err=True)
    return result, findings


@cli.command()
@click.argument("package", metavar="PKG")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot"]), default="text",
              help="Output format (dot: the package's graph for Graphviz).")
@output_option
@package_options
def inspect(package: str, fmt: str, output: str | None, reading: Reading) -> None:
    """Show what the analyzer sees in a package: models, inputs, symbols, kernels, assertions."""
    from . import api
    from .report import inspect as inspect_report

    config = _config(reading, package)
    pkg = api.load(package, _options(config, reading))
    with _render_limit(config, 1):
        if fmt == "dot":
            from .report.dot import render_dot

            text = render_dot(pkg)
        else:
            text = inspect_report.render_json(pkg) if fmt == "json" else inspect_report.render_text(pkg)
    _emit(text if text.endswith("\n") else text + "\n", output)


@cli.command(name="rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="Output format.")
def rules_command(fmt: str) -> None:
    """List every rule: code, name, default severity, summary."""
    from .report.ruledoc import render_table, render_table_json
    from .rules import all_rules

    rules = all_rules()
    click.echo(render_table_json(rules) if fmt == "json" else render_table(rules), nl=False)


@cli.command()
@click.argument("rule", metavar="RULE")
def explain(rule: str) -> None:
    """Explain a rule, by name (empty-index-bound) or code (AOTI001)."""
    from .report.ruledoc import render_explain
    from .rules import find_rule

    found = find_rule(rule)
    if found is None:
        raise LintError(f"unknown rule {rule!r} (see `{PROG} rules`)")
    click.echo(render_explain(found, color=_use_color(None, None)), nl=False, color=True)


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

    from . import api, why as why_module
    from .report import why as why_report

    options = _options(_config(reading, package, runtime_checks=runtime_checks), reading)
    pkg = api.load(package, options)
    # The log is untrusted text too: it gets its own --timeout (and --max-memory) budget.
    label = "MESSAGE" if message is not None else ("<stdin>" if log == "-" else str(log))
    deadline = archive.Deadline(options.limits.timeout_s, label, options.limits.max_memory)
    explanation = api.text_hits(package, why_module.explain_failure(pkg, text, deadline), options)
    rendered = why_report.render_json(explanation) if fmt == "json" else why_report.render_text(explanation)
    _emit(rendered if rendered.endswith("\n") else rendered + "\n", output)
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
    from . import api, contract as contract_module

    config = _config(reading, package, runtime_checks=runtime_checks)
    result = api.lint([package], _options(config, reading))
    contracts = [contract_module.build(package, model, result.findings)
                 for pkg in result.packages for model in pkg.models]
    with _render_limit(config, len(result.packages)):
        if emit == "python":
            text = contract_module.render_python(contracts)
        elif fmt == "json":
            text = contract_module.render_json(contracts)
        else:
            text = contract_module.render_text(contracts)
    _emit(text, output)


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
    from . import interrupt

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


from . import cli_report  # noqa: E402,F401  (registers `report`; it imports this module's helpers)
from . import cli_merge  # noqa: E402,F401  (registers `merge`, the same way)

if __name__ == "__main__":  # pragma: no cover
    main()
from . import cli_diff  # noqa: E402,F401  (registers `diff`, the same way)
from . import cli_confirm  # noqa: E402,F401  (registers `confirm`, the same way)
