"""The library entry points: `load()` builds the linked model, `lint()` runs the rules.

Pipeline: `.pt2` -> archive.Package -> wrapper.parse + kernels.parse_* -> link.link_model ->
rules -> findings (app/pipeline.py); many packages go through app/many.py. Each member is read once and
parsed once.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..read import archive, layout
from ..core.findings import Finding, Location, PackageError
from ..core.model import Package
from . import many
from .pipeline import InternalError, Options, deadline, load_package

if TYPE_CHECKING:
    from ..explain.why import WhyResult

# The public API: what `import analyzer.app.api` users and the CLI call.
__all__ = ["InternalError", "Options", "Result", "find_text", "lint", "load", "text_hits"]


@dataclass
class Result:
    packages: list[Package]
    findings: list[Finding]
    errors: list[PackageError] = field(default_factory=list)  # packages that could not be read
    notes: list[str] = field(default_factory=list)  # arguments skipped on purpose (an exported program)


def load(path: str | os.PathLike[str], options: Options | None = None) -> Package:
    """Read and link every model in a package. Raises budget.ArchiveError (one line) when the
    package cannot be read at all; a part that cannot be parsed becomes a `Problem`. The exported
    program beside it (`X.ep.pt2`) is used when none is given and `options.pair`."""
    options = options or Options()
    if options.pair and not options.exported_program:
        ep = many.paired_exported_program(path)
        if ep is not None:
            options = dataclasses.replace(options, exported_program=ep, paired=True)
    return load_package(path, options, deadline(path, options))


def find_text(path: str | os.PathLike[str], needle: str, options: Options | None = None) -> list[Location]:
    """Every place in the package's text members holding `needle` (for `why` before it says "no match")."""
    options = options or Options()
    with archive.open_package(path, options.limits) as pkg:
        return layout.find_text(pkg, needle)


def text_hits(path: str | os.PathLike[str], explanation: "WhyResult", options: Options | None = None) -> "WhyResult":
    """`explanation` (a why.WhyResult) with `text_hits` filled when no candidate matched: `why` never
    says that nothing matches before every text member was searched for the failure's message."""
    if not dataclasses.is_dataclass(explanation) or getattr(explanation, "candidates", True):
        return explanation
    hits = [h for f in explanation.failures if f.message for h in find_text(path, f.message, options)]
    return dataclasses.replace(explanation, text_hits=tuple(hits)) if hits else explanation


def lint(paths, options: Options | None = None, *, jobs: int = 1,
         progress: Callable[[int, int], None] | None = None, keep_going: bool = False) -> Result:
    """Check packages: `.pt2` files, extracted package folders, and folders searched for both.

    A package that cannot be read raises its ArchiveError/OSError/ValueError; with `keep_going` it
    becomes a `PackageError` in `Result.errors` and the others go on. Each package is checked once
    however often it is named. With `jobs` > 1, packages are checked in that many worker
    processes (analyzer/app/many.py); findings come back in input order either way. `progress` is
    called with (packages done, packages in all).
    """
    options = options or Options()
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    from .. import rules

    rules.select_rules(options.select, options.ignore)  # an unknown selector fails before any read
    packages, findings, errors = [], [], []
    notes: list[str] = []
    targets = many.discover(paths, pair=options.pair and not options.exported_program, exclude=options.exclude,
                            notes=notes)
    for outcome in many.outcomes(targets, options, jobs, progress, keep_going):
        if outcome.error is not None:
            errors.append(outcome.error)
        elif outcome.package is not None:
            packages.append(outcome.package)
            findings.extend(outcome.findings)
    return Result(packages, findings, errors, notes)
