"""The harness of the stranger rounds that pin findings next to committed run-time records
(tests/test_stranger4.py, tests/test_stranger5.py).

A round's fixture folder holds, per model, `{name}.cpu.stripped.pt2` and `{name}.ep.pt2`, its
`models.py` (each model's dims) and `runtime.json` (fixtures/real/probe.py's records: each package
through `aoti_load_package` in a child process against eager). Nothing here compiles; each file is
read once a session."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from analyzer.app import api
from analyzer.core.model import DimRef
from analyzer.explain import contract
from analyzer.expr import intervals
from analyzer.query import guards as G, relations
from analyzer.query import witness as W
from conftest import FIXTURES, finding_refs


def outcome(record: dict) -> str:
    """`ran` (like eager), `rejected` (an exception where eager raises too: not a package bug),
    `checked` (AOTI_RUNTIME_CHECK_INPUTS rejected it), or a failure: `crash` (the process died),
    `raised` (an exception where eager returns), `silent` (a result where eager raises), `wrong`
    (values or shape unlike eager's)."""
    aoti, eager = record["aoti"], record.get("eager", {})
    if aoti.get("ok"):
        if not eager.get("ok", True):
            return "silent"
        return "ran" if aoti.get("matches_eager", True) else "wrong"
    if "error" in aoti and aoti["error"].startswith("process ended"):
        return "crash"
    if "dim value is too" in aoti.get("error", ""):
        return "checked"
    return "rejected" if eager and not eager.get("ok") else "raised"


FAILURES = {"crash", "raised", "silent", "wrong"}
_VALUE_KEYS = ("index-exceeds-constant-bound.input-values", "index-exceeds-constant-bound.values",
               "index-exceeds-constant-bound.cast-values", "index-exceeds-dynamic-bound.position",
               "index-exceeds-constant-bound.op-values")


# Cached by folder, not on Round's methods: lru_cache on a method keeps its instance alive (B019).
@lru_cache(maxsize=None)
def _dims(folder: Path) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """Each model's dim names -> the (input, axis) positions they set, from models.py (no torch: the
    helpers it gets from fixtures/real/generate.py import torch only when a model is built)."""
    spec = importlib.util.spec_from_file_location(f"{folder.name}_generate", FIXTURES / "real" / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(f"{folder.name}_generate", generate)  # dataclasses look their module up
    spec.loader.exec_module(generate)
    spec = importlib.util.spec_from_file_location(f"{folder.name}_models", folder / "models.py")
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    return {fix.name: {d.name: list(d.at) for d in fix.dims} for fix in models.models(generate)}


@lru_cache(maxsize=None)
def _lint(folder: Path, name: str, device: str = "cpu") -> tuple:
    package = folder / (f"{name}.cpu.stripped.pt2" if device == "cpu" else f"cuda/{name}.cuda.stripped.pt2")
    return tuple(api.lint(str(package),
                          api.Options(select=("ALL",), exported_program=str(folder / f"{name}.ep.pt2"))).findings)


@lru_cache(maxsize=None)
def _package(folder: Path, name: str):
    return api.load(str(folder / f"{name}.cpu.stripped.pt2"),
                    api.Options(exported_program=str(folder / f"{name}.ep.pt2")))


@lru_cache(maxsize=None)
def _contract(folder: Path, name: str):
    (model,) = _package(folder, name).models
    return contract.build(name, model, _lint(folder, name))


def _check(error: str) -> str:
    """`Expected u2 <= 1024` of `RuntimeError: Expected u2 <= 1024 but received 1025`."""
    return error[error.index("Expected "):].split(" but received")[0]


@lru_cache(maxsize=None)
def _records(folder: Path) -> tuple[dict, ...]:
    return tuple(json.loads((folder / "runtime.json").read_text()))


# Rules whose failure at a size holds at every larger one (a table, a range): a witness explains the
# probes at and above it.
_ONWARD = frozenset({"index-exceeds-constant-bound", "read-past-constant", "compiled-range-narrower-than-declared",
                     "index-exceeds-dynamic-bound"})


def _witness_sizes(finding, ref: tuple[int, int]) -> set[int]:
    """The sizes at `ref` (input, axis) of a finding's witnesses and of its dim's own."""
    sizes = set()
    texts = list(finding.witnesses or ((finding.witness,) if finding.witness else ()))
    texts += [d.witness for d in finding.dims if (d.input, d.dim) == ref and d.witness]
    for text in texts:
        if "`" in text:
            continue
        shapes = [shape for _, shape in W.parse_witness(text)]
        if ref[0] < len(shapes) and ref[1] < len(shapes[ref[0]]):
            sizes.add(shapes[ref[0]][ref[1]])
    return sizes


@dataclass(frozen=True)
class Round:
    """One stranger round's fixture folder and what its tests read from it."""

    folder: Path

    def dims(self) -> dict[str, dict[str, list[tuple[int, int]]]]:
        return _dims(self.folder)

    def lint(self, name: str) -> tuple:
        """`name`'s findings, every rule, with its exported program."""
        return _lint(self.folder, name)

    def lint_cuda(self, name: str) -> tuple:
        """The same of its CUDA build (`cuda/{name}.cuda.stripped.pt2`), with the CPU build's exported
        program (the same model and dims)."""
        return _lint(self.folder, name, "cuda")

    def records(self) -> tuple[dict, ...]:
        return _records(self.folder)

    def package(self, name: str):
        """`name`'s loaded package, with its exported program."""
        return _package(self.folder, name)

    def record(self, name: str, label: str) -> dict:
        """The one record of `name`'s probe `label`."""
        (rec,) = [r for r in self.records() if r["name"] == name and r["label"] == label]
        return rec

    def _probed(self, name: str, record: dict) -> list[tuple[int, int, int]]:
        """(input, axis, size) for each position of the dim an edge probe sets (its label names it)."""
        label = record["label"]
        if label == "normal" or label.startswith("witness:"):
            return []
        dim = label.split("=", 1)[0].split(":", 1)[0]
        return [(i, axis, record["sizes"][dim]) for i, axis in self.dims()[name][dim]]

    def explained_by(self, name: str, record: dict) -> list:
        """The findings that explain a failed probe: its own finding (a witness probe), or a finding
        about the probed dim with a witness at that size, or below the largest witness of a lower-bound
        finding (`< 3 runs unchecked` covers 0, 1 and 2), or at or above a witness above 1 of a rule
        whose failure grows with the size (a table bound or a range: every larger size too), or an
        export guard's finding whose guard the probe's shapes break."""
        probed = self._probed(name, record)
        if record["label"].startswith("witness:"):
            summary = record["finding"]
            own = [f for f in self.lint(name)
                   if (f.code, f.input, f.dim) == (summary["code"], summary["input"], summary["dim"])]
            if own:
                return own
            # Its finding is gone since (a later stop's fix): any finding about the sizes it sent.
            probed = [(i, axis, size) for dim, size in record["sizes"].items() for i, axis in self.dims()[name][dim]]
        found = []
        for f in self.lint(name):
            # A finding whose witness is a value (positions from an input's values, an unbacked size the
            # values set): the probe failed at the very check it names.
            if f.message_key in _VALUE_KEYS and self._fired(record, f):
                found.append(f)
                continue
            # A guard's finding names the dims of its smallest witnesses; the probe breaks the guard
            # or not, whichever of its dims it moved (the normal sizes keep every guard).
            if probed and f.rule == "unchecked-export-guard" and self._breaks_guard(name, record, f):
                found.append(f)
                continue
            # A pooling compiled for the traced map: every size that gives the map another size.
            if probed and f.rule == "adaptive-pool-traced-size" and self._untraced_map(name, probed, f):
                found.append(f)
                continue
            # A ceil-mode pooling rounded as at the traced size: every size where its count is not eager's.
            if probed and f.rule == "ceil-mode-pool-traced-rounding" and self._rounding_differs(name, probed, f):
                found.append(f)
                continue
            # A stride simplified for the traced size: every size where the two strides differ.
            if probed and f.rule == "stride-from-traced-size" and self._strides_differ(name, probed, f):
                found.append(f)
                continue
            for i, axis, size in probed:
                if (i, axis) in finding_refs(f):
                    sizes = _witness_sizes(f, (i, axis))
                    lower = f.rule == "unenforced-lower-bound"
                    # Its witnesses below the compiled minimum (it also gives max + 1 of a declared
                    # range above the compiled one, which covers no size below it).
                    below = [s for s in sizes if s < self._compiled_min(name, i, axis)]
                    if size in sizes or (lower and size <= max(below, default=-1)) or \
                            (f.rule == "unenforced-divisibility" and self._breaks_multiple(name, i, axis, size)) or \
                            (f.rule in _ONWARD and any(1 < s <= size for s in sizes)):
                        found.append(f)
        return found

    def _untraced_map(self, name: str, probed: list[tuple[int, int, int]], finding) -> bool:
        """Whether a probed size gives the pooled map a size its kernel was not lowered for (not its
        bins' numerator; where they divided, a size no multiple of the bins)."""
        model = self.package(name).models[0]
        for d in finding.subject.dims:
            symbol = model.known_dim(d.ref).declared_expr
            for i, axis, size in probed:
                if (i, axis) == (d.ref.input, d.ref.dim):
                    at = intervals.evaluate(d.expr, {symbol: size})
                    if at >= 1 and (at not in d.traced if d.traced else at % d.bins != 0):
                        return True
        return False

    def _rounding_differs(self, name: str, probed: list[tuple[int, int, int]], finding) -> bool:
        """Whether a probed size gives the pooled map a size the package pools into another count than eager."""
        model = self.package(name).models[0]
        for d in finding.subject.dims:
            symbol = model.known_dim(d.ref).declared_expr
            for i, axis, size in probed:
                if (i, axis) == (d.ref.input, d.ref.dim):
                    at = int(intervals.evaluate(d.expr, {symbol: size}))
                    if d.rounding.ceil(at, True) >= 1 and d.rounding.compiled(at, d.traced)[0] != d.rounding.ceil(at, True):
                        return True
        return False

    def _strides_differ(self, name: str, probed: list[tuple[int, int, int]], finding) -> bool:
        """Whether a probed size makes the finding's two strides differ (both at least 1)."""
        model = self.package(name).models[0]
        read = finding.subject
        for i, axis, size in probed:
            if DimRef(i, axis) in read.sources:
                values = {W.symbol_of(model, DimRef(i, axis)): size}
                a, b = (intervals.evaluate(e, values) for e in (read.first, read.second))
                if a != b and min(a, b) >= 1:
                    return True
        return False

    def _breaks_multiple(self, name: str, i: int, axis: int, size: int) -> bool:
        """Whether `size` is no multiple the package requires of the dim (any such size, not only
        the witness, runs the arithmetic compiled for multiples)."""
        rel = relations.relation(self.package(name).models[0], DimRef(i, axis))
        return rel is not None and not rel.fits(size)

    def _compiled_min(self, name: str, i: int, axis: int) -> float:
        dim = self.package(name).models[0].dim(DimRef(i, axis))
        return float("inf") if dim is None or dim.min is None else dim.min

    def _fired(self, record: dict, finding) -> bool:
        """Whether a probe whose input values eager rejects (it raised) failed at the very check a
        finding about those values names: its log holds the check's message. Such a finding's witness
        is a value, not a size; the probe's own values (lengths up to the sequence) were one."""
        log = record.get("log")
        if record.get("eager", {}).get("ok", True) or not log:
            return False
        text = (self.folder / "logs" / log).read_text(errors="replace")
        return f"what():  {finding.subject.message}" in text

    def _breaks_guard(self, name: str, record: dict, finding) -> bool:
        """Whether the probe's shapes make the finding's guard (or one it lists) false while the
        model's normal sizes keep it: a guard is no threshold (`h % 4 == 0`, `(h // 8) == 4`), so a
        larger size than the witness need not break it."""
        return self._guard_false(name, record, finding) and not self._guard_false(name, self.record(name, "normal"), finding)

    def _guard_false(self, name: str, record: dict, finding) -> bool:
        (model,) = _package(self.folder, name).models
        guards = G.compile_guards([finding.subject.guard, *finding.subject.also])
        dims = self.dims()[name]
        shapes = {}
        for inp in model.inputs:
            shape = []
            for d in inp.dims:
                named = [dim for dim, at in dims.items() if (inp.index, d.dim) in at]
                shape.append(d.value if d.value is not None else record["sizes"][named[0]] if named else None)
            if None in shape:
                return False
            shapes[inp.user_name or inp.name] = tuple(shape)
        values = guards.evaluate(shapes)
        return any(G.holds(values, g) is False for g in guards.guards)

    def unexplained(self, name: str) -> dict[str, str]:
        """Each failed probe of `name` that no finding explains: its label -> its outcome."""
        records = [r for r in self.records() if r["name"] == name]
        assert records, name
        return {r["label"]: outcome(r) for r in records if outcome(r) in FAILURES
                and not self.explained_by(name, r) and not self.rejected_by_contract(name, r)}

    def rejected_by_contract(self, name: str, record: dict) -> bool:
        """A probe outside the declared range that raised the error `aoti-lint contract` says the
        package gives there at every call: run_impl's check of a size tied to the dim (`Expected u2 <=
        1024`, u2 = bincount's size, which must equal nodes). The contract enforced, not a failure;
        `contract`'s own words are what is compared, so a contract that says otherwise fails it."""
        error = record["aoti"].get("error", "")
        if outcome(record) != "raised" or "Expected " not in error:
            return False
        (model,) = _package(self.folder, name).models
        conditions = _contract(self.folder, name).conditions
        for i, axis, size in self._probed(name, record):
            dim = model.dim(DimRef(i, axis))
            if dim is None or not (dim.declared_max is not None and size > dim.declared_max
                                   or dim.declared_min is not None and size < dim.declared_min):
                return False
            said = [c.reason for c in conditions if c.ref == DimRef(i, axis) and "rejected at every call" in c.reason]
            if not any(f"`{_check(error)}`" in reason for reason in said):
                return False
        return bool(self._probed(name, record))

    def witness_runs(self, name: str, finding) -> list[dict]:
        """The probes of `name` at a finding's witness: its own witness probe, an edge probe whose
        sizes are the witness's shapes, or for a value witness a probe that failed at its check."""
        return [r for r in self.records() if r["name"] == name and (
            (r["label"].startswith("witness:") and r["finding"]["witness"] == finding.witness)
            or self.at_witness(name, r, finding.witness)
            # a witness that is a value: any probe whose values failed at the very check it names
            or (finding.message_key in _VALUE_KEYS and self._fired(r, finding)))]

    def at_witness(self, name: str, record: dict, witness: str | None) -> bool:
        """An edge probe whose sizes are the witness's shapes (`seq=65` for `ids.shape = (2, 65)`)."""
        if not witness or record["label"].startswith("witness:") or "`" in witness:
            return False
        shapes = [shape for _, shape in W.parse_witness(witness)]
        dims = self.dims()[name]
        return bool(record["sizes"]) and all(
            i < len(shapes) and axis < len(shapes[i]) and shapes[i][axis] == size
            for dim, size in record["sizes"].items() for i, axis in dims.get(dim, ()))

    # -- the checks every round makes (tests/test_stranger7.py on) ---------------------------------

    def check_explained(self, name: str, known_gaps: dict[tuple[str, str], tuple[str, str]]) -> None:
        """Every failing probe of `name` is explained by a finding or is in `known_gaps` ((model,
        label) -> (its outcome, why)) with that outcome, and no known gap is explained."""
        unexplained = self.unexplained(name)
        gaps = {label for model, label in known_gaps if model == name}
        assert set(unexplained) == gaps, unexplained
        assert all(unexplained[label] == known_gaps[name, label][0] for label in gaps)

    def check_normal_sizes_ran(self, names: list[str]) -> None:
        for name in names:
            assert outcome(self.record(name, "normal")) == "ran", name

    def check_edges_probed(self, names: list[str]) -> None:
        """Every dynamic dim of every model was probed at 0, 1 and past its max."""
        for name in names:
            labels = {r["label"] for r in self.records() if r["name"] == name}
            for dim in self.dims()[name]:
                # A dim declared as a multiple (`8 * Dim("hp")`) is probed by its size: `hp:size=0`, ...
                sized = {f"{dim}:size=0", f"{dim}:size=1"} <= labels and any(
                    label.startswith(f"{dim}:size=") and label.endswith("(max+1)") for label in labels)
                assert sized or {f"{dim}=0", f"{dim}=1", f"{dim}=max+1"} <= labels, (name, dim)

    def check_witnesses_fail(self, name: str, not_reproduced: dict[tuple[str, str, str], str]) -> None:
        """Every finding of `name` at warning or above with a witness was probed there and failed,
        unless `not_reproduced` ((model, code, witness) -> why) lists it; a listed one did not fail."""
        for f in self.lint(name):
            if str(f.severity) not in ("error", "warning") or not f.witness:
                continue
            runs = self.witness_runs(name, f)
            failed = any(outcome(r) in FAILURES for r in runs)
            assert runs, (name, f.code, f.witness)
            assert failed != ((name, f.code, f.witness) in not_reproduced), (name, f.code, f.witness,
                                                                               [outcome(r) for r in runs])
