"""What every `aoti-lint` command shares: the click group, the reading options (limits, exported
program, input names), configuration resolution, output writing, and linting with [tool.aoti-lint]'s
accept entries applied. The commands live in cli.py and cli_*.py, which register on `cli`.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import os
import sys
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterator, Sequence

import click

from .. import __version__
from ..read import archive
from ..core import budget
from .config import Config, ConfigError, load_config, merge, parse_input_names
from ..core.findings import Finding, Severity
from ..core.untrusted import terminal

PROG = "aoti-lint"
LOG_LIMIT = 64 * 1024 * 1024  # a log bigger than this is not a log we should hold in memory


class LintError(click.ClickException):
    """Exit 2 with a single `aoti-lint: error: <message>` line."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        # A message names files and members: the terminal renderer keeps it one visible line.
        click.echo(f"{PROG}: error: {terminal(self.format_message())}", file=file or sys.stderr, err=True)


def expected_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean "bad input", reported as one line: ValueError, OSError, ArchiveError.
    Anything else is an internal error: one line, exit 2, a traceback only with `--debug`."""
    from ..core.budget import ArchiveError# lazy: `--help` and `rules` need no archive reader

    return (ArchiveError, ValueError, OSError)


def one_line_error(exc: BaseException) -> str:
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
        except ModuleNotFoundError as exc:
            if exc.name not in RUNTIME_DEPENDENCIES:
                raise InternalFailure(ctx, exc) from None
            # a broken install, not a bug: say which distribution brings the module back
            raise LintError(f"cannot import {exc.name}: reinstall aoti-lint or `pip install "
                            f"{RUNTIME_DEPENDENCIES[exc.name]}`") from None
        except expected_errors() as exc:
            if isinstance(exc, RecursionError):  # a RuntimeError, not an input error
                raise InternalFailure(ctx, exc) from None
            raise LintError(one_line_error(exc)) from None
        except Exception as exc:  # noqa: BLE001 - anything else is a bug: one line naming it, exit 2
            raise InternalFailure(ctx, exc) from None


# module -> the distribution that installs it, for `check`'s third-party imports
RUNTIME_DEPENDENCIES = {"tree_sitter": "tree-sitter", "tree_sitter_cpp": "tree-sitter-cpp"}


class InternalFailure(click.ClickException):
    """A bug, not a finding: exit 2 with one line asking for a report (a traceback with --debug)."""

    exit_code = 2

    def __init__(self, ctx: click.Context, exc: BaseException) -> None:
        ours: tuple[type[BaseException], ...] = ()
        try:
            from .api import InternalError

            ours = (InternalError,)
        except ImportError:  # the failure may be that import itself
            pass

        self.debug = bool(ctx.params.get("debug"))
        self.original = exc.__cause__ if isinstance(exc, ours) and exc.__cause__ else exc
        text = str(exc) if isinstance(exc, ours) else \
            f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        super().__init__(text)

    def show(self, file: IO[Any] | None = None) -> None:
        out = file or sys.stderr
        if self.debug:
            import traceback

            traceback.print_exception(self.original, file=out)
        click.echo(f"{PROG}: {terminal(self.format_message())}; please report it "
                   "(run with --debug for a traceback)", file=out, err=True)


def use_color(flag: bool | None, output: str | None) -> bool:
    """--color/--no-color win; otherwise colour only on a TTY stdout with NO_COLOR unset."""
    if flag is not None:
        return flag
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    return stdout_isatty()


def stdout_isatty() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def write_output(text: str, output: str | None) -> None:
    if output is None or output == "-":
        # color=True: the renderers emit ANSI only when asked to, so click must not strip it.
        click.echo(text, nl=False, color=True)
        return
    from ..core.atomic import write_atomic

    write_atomic(output, text)  # the old report stays whole if this fails or is interrupted


@contextlib.contextmanager
def render_limit(config: Config, packages: int) -> Iterator[None]:
    """Rendering is bounded too: at most `--timeout` per package read (the report's size grows with
    its findings, so a real report takes milliseconds); past it, exit 2 and nothing is written."""
    from ..core.interrupt import RenderTimeout, time_limit

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
DEFAULT_LIMITS = archive.Limits()


def size_option(n: int) -> str:
    """`256M`, `1G`: a byte count as the size options spell it."""
    for suffix, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


LIMIT_OPTIONS = ("max_members", "max_member_size", "max_total_size", "max_nesting", "timeout", "max_memory")
READING_OPTIONS = ("exported_program", "input_names", "pair", *LIMIT_OPTIONS)


def package_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the package-reading options to a command; it receives them as one `reading: Reading`.

    Values are taken as strings and validated by `config` so a bad one is a one-line exit 2.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        raw = {name: kwargs.pop(name) for name in READING_OPTIONS}
        try:
            names = parse_input_names(raw["input_names"])
        except ConfigError as exc:
            raise LintError(str(exc)) from None
        ep = raw["exported_program"]
        if ep is not None and not os.path.exists(ep):
            raise LintError(f"{ep}: No such file or directory (--exported-program)")
        reading = Reading(exported_program=ep, input_names=names, pair=raw["pair"],
                          limits={name: raw[name] for name in LIMIT_OPTIONS})
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
                     help=f"Most members read from one package (default {DEFAULT_LIMITS.max_members})."),
        click.option("--max-member-size", metavar="SIZE", default=None,
                     help="Most bytes inflated from one member: bytes or 512K, 64M, 1G "
                          f"(default {size_option(DEFAULT_LIMITS.max_member_bytes)})."),
        click.option("--max-total-size", metavar="SIZE", default=None,
                     help=f"Most bytes inflated from one package (default {size_option(DEFAULT_LIMITS.max_total_bytes)})."),
        click.option("--max-nesting", metavar="N", default=None,
                     help=f"Deepest bracket nesting parsed in C++/Triton source (default and most "
                          f"{DEFAULT_LIMITS.max_nesting})."),
        click.option("--timeout", metavar="SECONDS", default=None,
                     help=f"Wall-clock limit per package (default {DEFAULT_LIMITS.timeout_s:g}; 0 expires at once); "
                          "rendering the report gets as much again per package."),
        click.option("--max-memory", metavar="SIZE", default=None,
                     help="Most resident memory; a member whose parse needs more is reported unparsed "
                          f"(default {size_option(DEFAULT_LIMITS.max_memory)}, at least "
                          f"{size_option(budget.MIN_MEMORY)})."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def resolve_config(reading: Reading | None = None, package: str | None = None, **cli: Any) -> Config:
    """The command line over the configuration: the working directory's, and with `package` that
    package's nearest one over it (analyzer/app/settings.py)."""
    try:
        base = load_config()
        if package is not None:
            from . import settings

            base = settings.package_config(package, base)
        return merge(base, **cli, **((reading.limits or {}) if reading else {}))
    except ConfigError as exc:
        raise LintError(str(exc)) from None


def options_for(config: Config, reading: Reading | None = None, **extra: Any) -> Any:
    """api.Options from the merged configuration and the package-reading options."""
    from . import api

    reading = reading or Reading()
    try:
        limits = config.limits()
    except ValueError as exc:  # Limits rejected the combination
        raise LintError(one_line_error(exc)) from None
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


def lint_packages(packages: Sequence[str], config: Config, reading: Reading, lint_args: dict[str, Any] | None = None,
          **extra: Any) -> tuple[Any, list[Finding]]:
    """api.lint (with `lint_args`), then [tool.aoti-lint] per-package-ignores and accept entries."""
    from . import accept, api
    from ..rules import select_rules

    select_rules(*config.selection())  # an unknown selector fails before any package is read
    result = api.lint(list(packages), options_for(config, reading, **extra), **(lint_args or {}))
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
