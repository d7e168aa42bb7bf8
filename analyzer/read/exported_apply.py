"""An exported program applied to the linked model: the user's input names, the declared ranges and
expressions of each dim, the graph and the guards, when the program fits the package.
"""

from __future__ import annotations

from collections.abc import Sequence

from typing import TYPE_CHECKING

from ..core import budget
from ..core.model import Enforcement, Model, Package, Problem, ProblemKind, input_position
from .exported import ExportedProgram, read_exported_program, read_exported_programs

if TYPE_CHECKING:  # for the annotations
    from . import archive


class MismatchError(ValueError):
    """The exported program or the input names the user gave do not fit the package; `option`
    names the command-line option it came from."""

    def __init__(self, option: str, reason: str) -> None:
        super().__init__(reason)
        self.option = option


def apply(model: Model, ep: ExportedProgram | None, input_names: Sequence[str] = (), strict: bool = False) -> None:
    """Set `Input.user_name`, `Dim.declared_min/declared_max/declared_expr` and the model's
    `declared_ranges` (range_constraints) from an exported program.

    Inputs are matched by position (`inputs_info_` order == the exported program's user inputs).
    When the exported program does not fit the package (input count, rank or a static size
    differ), nothing of it is applied and a Problem says why: a wrong mapping would put the
    user's names on the wrong tensors. `input_names` (e.g. from the command line) override the
    exported program's names; empty entries keep them. Names that cannot fit, and with `strict`
    (an exported program the user named) a mismatch, raise MismatchError instead.
    """
    names = list(input_names)
    if len(names) > len(model.inputs) and model.inputs:
        raise MismatchError("--input-names", f"{len(names)} names given but model {model.name!r} has "
                            f"{len(model.inputs)} input{'s' if len(model.inputs) != 1 else ''}")
    if ep is not None:
        mismatch = _mismatch(model, ep)
        if mismatch and strict:
            raise MismatchError("--exported-program", f"model {model.name!r}: {mismatch}")
        if mismatch:
            model.problems.append(Problem(
                message=f"exported program {ep.path} does not match the package: {mismatch}; "
                        "its input names and declared ranges were not used",
                kind=ProblemKind.PARSE))
        else:
            model.graph = list(ep.nodes)
            model.declared_ranges = dict(ep.range_constraints)
            model.guards = list(ep.guards)
            shared: dict[str, list] = {}
            for inp, declared in zip(model.inputs, ep.inputs):
                inp.user_name = declared.name
                by_dim = {d.dim: d for d in declared.dims}
                for dim in inp.dims:
                    decl = by_dim.get(dim.dim)
                    if decl is not None:
                        dim.declared_min, dim.declared_max = decl.min, decl.max
                        dim.declared_expr = decl.symbol if decl.value is None else None
                        if decl.symbol and decl.value is None:
                            shared.setdefault(decl.symbol, []).append(dim)
            # Dims the export declared with one Dim are equal by contract. Where the package kept no
            # symbol for one of them (torch 2.11 CUDA wrappers emit no assert_size_stride), give it
            # the symbol of its twin, so witnesses keep them equal: the package never reads that dim
            # and checks the equality nowhere (a tie enforced by nothing, unenforced-dim-equality's).
            for dims in shared.values():
                symbols = [d.symbol for d in dims if d.symbol]
                if symbols:
                    for dim in dims:
                        if dim.symbol is None:
                            dim.symbol = symbols[0]
                            if not dim.tied_expr:
                                dim.tied_expr, dim.tie_enforced = symbols[0], Enforcement.NONE
    for inp, name in zip(model.inputs, names):
        if name:
            inp.user_name = name


def _mismatch(model: Model, ep: ExportedProgram) -> str | None:
    if len(model.inputs) != len(ep.inputs):
        return (f"{len(ep.inputs)} user inputs ({', '.join(i.name for i in ep.inputs) or 'none'}) "
                f"but the package has {len(model.inputs)}")
    for inp, declared in zip(model.inputs, ep.inputs):
        if not inp.dims or declared.kind != "tensor":
            continue
        # Unchecked inputs (torch 2.6) show only the dims their code reads: at least that rank.
        if len(inp.dims) != len(declared.dims) and (inp.rank_known or len(inp.dims) > len(declared.dims)):
            return (f"{input_position(inp.index)} ({declared.name}) has rank {len(declared.dims)} in the "
                    f"exported program but {len(inp.dims)} in the package")
        for dim, decl in zip(inp.dims, declared.dims):
            if dim.value is not None and decl.value is not None and dim.value != decl.value:
                return (f"{input_position(inp.index)} ({declared.name}) dim {dim.dim} is {decl.value} in the "
                        f"exported program but {dim.value} in the package")
    return None


def annotation(result: Package, pkg: "archive.Package", exported_program: str | None, input_names: Sequence[str],
               limits: "archive.Limits | None", *, paired: bool = False):
    """A callback that names inputs and sets declared ranges from the exported program (given,
    or inside the package) and `input_names` (`--input-names`). It runs inside linking, once the
    inputs exist and before the chains are written, so every report uses the user's names."""
    if not (exported_program or input_names or pkg.exported_programs):
        return None
    given = None
    inside: dict = {}
    if exported_program:
        try:
            given = read_exported_program(exported_program, limits=limits, deadline=pkg.deadline)
        except ValueError as exc:  # the user's file, not this package nor the analyzer: one line
            raise budget.ArchiveError(str(exc)) from None
    elif pkg.exported_programs:
        try:
            inside = read_exported_programs(pkg)
        except ValueError as exc:
            result.problems.append(Problem(f"exported program in the package cannot be read: {exc}",
                                           kind=ProblemKind.UNREADABLE))

    def annotate(model: Model) -> None:
        # models/<name>.json belongs to data/aotinductor/<name>/; a lone one to every model.
        ep = given or inside.get(model.name) or (next(iter(inside.values())) if len(inside) == 1 else None)
        try:
            apply(model, ep, input_names, strict=given is not None)
        except MismatchError as exc:
            # The user's arguments, not the package: a usage error naming the option.
            what = exc.option
            if exc.option == "--exported-program" and paired:
                what = f"the exported program {exported_program} beside the package (--no-pair: not used)"
            elif exc.option == "--exported-program":
                what = f"--exported-program {exported_program}"
            raise budget.ArchiveError(f"{what} does not match {pkg.label}: {exc}") from None

    return annotate
