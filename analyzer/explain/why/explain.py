"""Match recognised failures against a linked package and rank candidate causes, best first.

The cause and fix of each candidate come from the message catalog (`analyzer/core/messages.py`, `WHY` and
the rules' `FIXES`); `Candidate.key` names the catalog entry of its cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ...parse import proxy
from ...query import externs, relations, sizes, valueindex as VI
from ...query import witness as W
from ...core.findings import Location
from ...core.model import Assertion, Dim, DimRef, Input, Model, Package, Relation
from ...core.dimtext import compiled_span, declared_span, has_declared
from ...core.messages import FIXES, WHY
from ...rules.bounds import EmptyIndexBound, IndexExceedsConstantBound
from ...rules.package import UncheckedExternCall
from .evidence import LogEvidence, observe, read_evidence
from .parse import KERNEL_NAME, CheckKind, Deadline, Failure, FailureKind, normalize, parse_failure


@dataclass(frozen=True)
class Candidate:
    """One candidate cause, as it appears in the output (best first). `key`: the catalog entry of
    the cause (`why.index.zero`, `why.check.too-small`, ...)."""

    kind: FailureKind
    model: str
    message: str
    cause: str
    fix: str
    kernel: str | None = None
    location: Location | None = None
    bound_sources: tuple[DimRef, ...] = ()
    index_sources: tuple[int, ...] = ()
    chain: tuple[str, ...] = ()
    key: str = ""
    failure: Failure | None = field(default=None, compare=False)
    # What the log's own shapes and values say about this cause (quoted at the end of `cause`):
    # `ruled_out` when they exclude it (it is then ranked last).
    evidence: str = field(default="", compare=False)
    ruled_out: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class WhyResult:
    package: str
    failures: tuple[Failure, ...]
    candidates: tuple[Candidate, ...]
    # Where the failure's message occurs in the package's text members when no candidate matched
    # (searched before saying that nothing in the package produces it).
    text_hits: tuple[Location, ...] = ()
    evidence: LogEvidence = field(default_factory=LogEvidence)

    @property
    def matched(self) -> bool:
        return bool(self.candidates)

    def __bool__(self) -> bool:
        return self.matched


def explain_failure(package: Package, text: str, deadline: Deadline | None = None) -> WhyResult:
    """Parse `text` and rank the package's candidate causes for each failure, best first."""
    failures = parse_failure(text, deadline)
    mentioned = set(KERNEL_NAME.findall(text))
    evidence = read_evidence(text) if any(f.kind == FailureKind.INDEX_ASSERT for f in failures) else LogEvidence()
    candidates: list[Candidate] = []
    seen: set[tuple] = set()
    finders = {FailureKind.INDEX_ASSERT: lambda f: _index_candidates(package, f, mentioned, evidence),
               FailureKind.INPUT_CHECK: lambda f: _check_candidates(package, f),
               FailureKind.EXTERN_CALL: lambda f: _extern_candidates(package, f),
               FailureKind.DEVICE_MISMATCH: lambda f: _device_candidates(package, f),
               FailureKind.SYMBOL_ASSERT: lambda f: _symbol_candidates(package, f)}
    found = [c for failure in failures for c in finders[failure.kind](failure)]
    for cand in found + _kernel_message_candidates(package, text) + _zero_check_candidates(package, text):
        # The cause too: one check linked at several launches (a kernel reused for an encoder's and a
        # decoder's lengths) has a cause per launch, and the log cannot tell which launch failed.
        key = (cand.kind, cand.model, cand.kernel, cand.message, cand.location, cand.cause)
        if key not in seen:
            seen.add(key)
            candidates.append(cand)
    return WhyResult(package=package.path, failures=tuple(failures), candidates=tuple(candidates),
                     evidence=evidence)


def _kernel_message_candidates(package: Package, text: str) -> list[Candidate]:
    """Kernels' own literal checks (`throw std::runtime_error("one_hot: Class values must be smaller
    than num_classes.")`) whose message appears in the log."""
    out = []
    for model in package.models:
        for kernel, message, location in model.kernel_messages:
            if message and message in text:
                out.append(Candidate(
                    kind=FailureKind.KERNEL_CHECK, model=model.name, message=message, kernel=kernel,
                    location=location, key="why.kernel-check",
                    cause=WHY["why.kernel-check"].format(kernel=kernel, message=message),
                    fix=WHY["why.kernel-check.fix"]))
    return out


def _zero_check_candidates(package: Package, text: str) -> list[Candidate]:
    """run_impl's `AOTI_TORCH_CHECK(s27 != 0, "Integer floor division by zero")` whose message is in
    the log: the input dims behind the size were 0 (one candidate per size, at its first check)."""
    out = []
    for model in package.models:
        seen: set[str] = set()
        for symbol, message, location in model.zero_checks:
            # A size expression is kept only where no size makes it 0 (pipeline): it never failed.
            if symbol in seen or message not in text or symbol not in model.symbols:
                continue
            seen.add(symbol)
            dims = [DimRef(inp.index, d.dim) for inp in model.inputs for d in inp.dims if d.symbol == symbol]
            who = " or ".join(model.describe(ref) for ref in dims) or symbol
            out.append(Candidate(
                kind=FailureKind.KERNEL_CHECK, model=model.name, message=message, kernel="run_impl",
                location=location, index_sources=tuple(sorted({ref.input for ref in dims})), key="why.zero-check",
                cause=WHY["why.zero-check"].format(symbol=symbol, who=who, message=message),
                fix=WHY["why.zero-check.fix"].format(who=who)))
    return out


# -- index asserts ------------------------------------------------------------------------------

def _index_candidates(package: Package, failure: Failure, mentioned: set[str],
                      evidence: LogEvidence | None = None) -> list[Candidate]:
    evidence = evidence if evidence is not None else LogEvidence()
    scored: list[tuple[tuple, Candidate]] = []
    for model in package.models:
        lost_on = "cpu" if failure.lost_on_cpu else "cuda"
        if failure.lost and (model.device or "").split(":")[0] != lost_on:
            continue
        pool = [a for a in model.assertions
                if failure.lost or normalize(a.message) == normalize(failure.message)]
        if failure.kernel and any(a.kernel == failure.kernel for a in pool):
            # A kernel named by the failure itself (`Exception raised from <kernel>`) narrows for sure.
            pool = [a for a in pool if a.kernel == failure.kernel]
        for order, a in enumerate(pool):
            zero = _bound_can_be_zero(model, a)
            exact = a.message == failure.message
            same_file = failure.file is not None and bool(failure.file) \
                and _basename(failure.file) == _basename(a.location.path)
            same_line = same_file and failure.line == a.location.line
            seen = observe(model, a, evidence, _bound_text(model, a))
            # What the log shows about the call comes first: a cause its shapes and values rule
            # out goes last, whatever else points at it; an empty bound they show is not the cause.
            empty_shown = zero and seen.bound is not None and seen.bound <= (a.lower or 0)
            rank = (seen.ruled_out, not same_line, not same_file, a.kernel not in mentioned,
                    not (zero if seen.bound is None else empty_shown),
                    a.bound_value is not None, not exact, not a.linked, order)
            key, cause, fix = _index_cause(model, a, zero and (seen.bound is None or empty_shown),
                                           otherwise=not empty_shown)
            cause += seen.text
            scored.append((rank, Candidate(
                kind=FailureKind.INDEX_ASSERT, model=model.name, message=a.message, cause=cause, fix=fix,
                kernel=a.kernel, location=a.location, bound_sources=a.bound_sources,
                index_sources=a.index_sources, chain=a.chain, key=key, failure=failure,
                evidence=seen.facts, ruled_out=seen.ruled_out)))
    scored.sort(key=lambda pair: pair[0])
    exact_lines = {(c.model, c.kernel, c.message) for rank, c in scored if not rank[1]}
    # The codegen repeats one check in a kernel (vectorized body and tail loop); when the log
    # names the line, the other copies are the same cause and only add noise.
    return [c for rank, c in scored if not rank[1] or (c.model, c.kernel, c.message) not in exact_lines]


def _bound_can_be_zero(model: Model, a: Assertion) -> bool:
    """The bound can reach 0 at run time: a constant 0, or sizes the package accepts make it <= 0."""
    if a.bound_value is not None:
        return a.bound_value == 0
    return W.empty_bound_choice(model, a) is not None


def _who(model: Model, indices: tuple[int, ...], joiner: str = " and ") -> str:
    return joiner.join(model.input_text(i) for i in indices)


def _bound_text(model: Model, a: Assertion) -> str:
    """The bound as the user sees it: `x.shape[0]` rather than `s77` where it is one dim."""
    if a.bound_value is not None:
        return str(a.bound_value)
    if a.bound_expr:
        return W.display_expr(model, a.bound_expr)
    return a.bound or "?"


def _value_key(a: Assertion) -> str:
    return "why.index.value" if len(a.index_sources) == 1 else "why.index.values"


def _values_text(model: Model, a: Assertion, span_text: str) -> str | None:
    if not a.index_sources:
        return None
    return WHY[_value_key(a)].format(who=_who(model, a.index_sources), span=span_text)


def _extent_key(model: Model, a: Assertion) -> str:
    refs = a.index_extent_sources
    one = len(refs) == 1 and W.display_expr(model, a.index_extent) == W.dim_display(model, refs[0])
    return "why.index.extent-dim" if one else "why.index.extent-expr"


def _extent_text(model: Model, a: Assertion, bound: str) -> str | None:
    """For an index over an iteration range (`arange(seq)`): which size pushed it past the bound."""
    # Values of inputs that reach the index through buffers of known range (a cumsum of a mask)
    # still leave the size as what pushes it past the bound.
    if not a.index_extent or a.index_sources and not a.index_extent_sources:
        return None
    extent = W.display_expr(model, a.index_extent)
    var = a.index_var or "the index"
    refs = a.index_extent_sources
    if _extent_key(model, a) == "why.index.extent-dim":
        dim = model.dim(refs[0])
        allowed = ""
        if dim is not None and dim.declared_max is not None and a.bound_value is not None \
                and dim.declared_max > a.bound_value:
            allowed = WHY["why.index.extent-allowed"].format(declared_max=dim.declared_max)
        return WHY["why.index.extent-dim"].format(describe=model.describe(refs[0]), bound=bound, allowed=allowed,
                                                  index_var=var, extent=extent)
    who = " or ".join(model.describe(r) for r in refs) or "an input size"
    return WHY["why.index.extent-expr"].format(who=who, extent=extent, bound=bound, index_var=var)


def _index_cause(model: Model, a: Assertion, zero: bool, otherwise: bool = True) -> tuple[str, str, str]:
    """(catalog key, cause, fix) of a failed index assertion; `otherwise=False` when the log shows
    the bound empty, so that the values cannot be the cause."""
    bound = _bound_text(model, a)
    span_text = f"[{a.lower if a.lower is not None else 0}, {bound})"
    values = _values_text(model, a, span_text)
    extent = _extent_text(model, a, bound)
    who = _who(model, a.index_sources)
    if a.bound_value is None and a.bound_sources:
        other = values or extent
        if zero:
            dims = [r for r in a.bound_sources if sizes.can_be_zero(model.dim(r))] or list(a.bound_sources)
            empty = " or ".join(WHY["why.index.empty"].format(describe=model.describe(r)) for r in dims)
            cause: str = WHY["why.index.zero"].format(
                empty=empty, lower=f"{a.lower} <= " if a.lower is not None else "", index_var=a.index_var or "idx",
                otherwise=WHY["why.index.otherwise"].format(other=other) if other and otherwise else "")
            env = any(sizes.env_check_rejects_zero(model.dim(r)) for r in dims)
            fix: str = EmptyIndexBound.FIXES["empty-index-bound"].format(
                empty_test=" or ".join(f"{W.check_expr(model, r)} == 0" for r in dims),
                env=FIXES["env"] if env else "")
            if a.index_sources:
                fix += WHY["why.index.keep"].format(who=who, span=span_text)
            return "why.index.zero", cause, fix
        cause = other or WHY["why.index.left"].format(index_var=a.index_var or "", span=span_text).replace("  ", " ")
        fix = WHY["why.index.keep-values"].format(who=who, span=span_text) if a.index_sources else \
            WHY["why.index.keep-bound"].format(bound=bound)
        return (_value_key(a) if values else _extent_key(model, a) if extent else "why.index.left"), cause, fix
    if a.bound_value is not None:
        if extent:
            return _extent_key(model, a), extent, _extent_fix(model, a)
        value = VI.smallest_value(model, a)
        if value is not None:  # a position computed from the values: past the table from `value`
            return "why.index.position", WHY["why.index.position"].format(
                who=who, value=value, index_var=a.index_var or "the index", bound=bound, upper=VI.shown(model, a)), \
                WHY["why.index.position-fix"].format(who=who, value=value, name=model.inputs[a.index_sources[0]].display)
        if values:
            return _value_key(a), values, _values_fix(model, a, who, span_text)
        return ("why.index.constant-unlinked", WHY["why.index.constant-unlinked"].format(
            index_var=a.index_var, span=span_text), WHY["why.index.constant-unlinked-fix"])
    reason = a.unlinked_reason or WHY["why.index.unlinked-reason"]
    return "why.index.unlinked", WHY["why.index.unlinked"].format(reason=reason), WHY["why.index.unlinked-fix"]


def _extent_fix(model: Model, a: Assertion) -> str:
    """The rule's fix (`index-exceeds-constant-bound`), with the largest size that stays in bounds."""
    refs = a.index_extent_sources
    check = " and ".join(W.check_expr(model, r) for r in refs) or "the size"
    limit = a.bound_value
    if len(refs) == 1 and a.index_extent and limit is not None:
        size = W.smallest_exceeding(model, a.index_extent, refs[0], limit)
        if size is None:  # past a max that only the variable checks (the failure happened)
            size = W.smallest_exceeding(model, a.index_extent, refs[0], limit, beyond_max=True)
        if size is not None:
            limit = size - 1
    return IndexExceedsConstantBound.FIXES["index-exceeds-constant-bound"].format(bound_value=limit, check_expr=check, limit=limit)


def _values_fix(model: Model, a: Assertion, who: str, span_text: str) -> str:
    name = model.inputs[a.index_sources[0]].display \
        if len(a.index_sources) == 1 and a.index_sources[0] < len(model.inputs) else None
    example = ""
    if name:
        key = "why.index.value-example-both" if a.lower is not None else "why.index.value-example-max"
        example = WHY[key].format(name=name, bound_value=a.bound_value)
    return WHY["why.index.value-fix"].format(who=who, span=span_text, example=example)


# -- failed ATen shim calls ---------------------------------------------------------------------

def _extern_candidates(package: Package, failure: Failure) -> list[Candidate]:
    """An ATen shim that failed inside the wrapper: the launch at the logged wrapper line (the
    packaged wrapper is the file that was compiled, so its lines match), else every call of it."""
    out: list[tuple[tuple, Candidate]] = []
    for model in package.models:
        for launch in model.launches:
            exact = launch.location.line == failure.line
            # A custom op's launch is named after the op (analyzer/parse/proxy.py); the log names the
            # proxy executor's call at the same wrapper line.
            proxied = failure.kernel == proxy.CALL and launch.extern and exact
            if launch.kernel != failure.kernel and not proxied:
                continue
            inputs = tuple(sorted({inp.index for inp in model.inputs if inp.name in launch.args}))
            who = ", ".join(model.input_text(i) for i in inputs) or UncheckedExternCall.MESSAGES["unchecked-extern-call.inputs"]
            cause = WHY["why.extern-call"].format(call=launch.kernel, who=who)
            fix = WHY["why.extern-call.fix"].format(who=who, op=launch.kernel.replace("aoti_torch_", ""))
            chain = tuple(c for c in (launch.comment,) if c)
            out.append(((not exact,), Candidate(kind=FailureKind.EXTERN_CALL, model=model.name,
                                                message=failure.message, cause=cause, fix=fix, kernel=launch.kernel,
                                                location=launch.location, index_sources=inputs, chain=chain,
                                                key="why.extern-call", failure=failure)))
    out.sort(key=lambda pair: pair[0])
    return [cand for _, cand in out]


# -- run_impl's checks of data-dependent sizes ----------------------------------------------------

def _symbol_candidates(package: Package, failure: Failure) -> list[Candidate]:
    """`Expected u0 >= 2 but received 1`: u0 is a size the data decides (the count nms or nonzero
    returns, a `.item()`), which the package was compiled to assume in a range; the call that
    produced it and the inputs it read are the cause."""
    out = []
    for model in package.models:
        sym = model.symbols.get(failure.symbol or "")
        if sym is None or not sym.unbacked:
            continue
        producer = next((launch for launch in model.launches if launch.extern and sym.expr in launch.outputs), None)
        inputs = tuple(sorted({inp.index for inp in model.inputs
                               if producer is not None and inp.name in producer.args} | set(sym.value_inputs)))
        who = ", ".join(model.input_text(i) for i in inputs) or UncheckedExternCall.MESSAGES["unchecked-extern-call.inputs"]
        # `.item()` (aoti_torch_item_int64 into u0_raw) reads a value; nms, nonzero return a tensor.
        origin = WHY["why.symbol.call"].format(call=producer.kernel, who=who) \
            if producer is not None and "item" not in producer.kernel else WHY["why.symbol.values"].format(who=who)
        fields = dict(symbol=sym.name, expected=failure.expected, got=failure.got, origin=origin, who=who)
        key = "why.symbol"
        refs: tuple[DimRef, ...] = ()
        # `Expected Eq(s77, u2)`: the size must equal an input dim, so the dim is what was out of range.
        tied = W.symbol_dims(model).get(sym.tied or "")
        if tied is not None:
            dim = model.dim(tied)
            key, refs = "why.symbol.tied", (tied,)
            fields.update(call=externs.size_call(producer), where=model.describe(tied),
                          dim=model.inputs[tied.input].dim_display(tied.dim),
                          declared=f"; the exported program declares {declared_span(dim)}"
                          if dim is not None and has_declared(dim) else "")
        out.append(Candidate(kind=FailureKind.SYMBOL_ASSERT, model=model.name, message=failure.message,
                             cause=WHY[key].format(**fields), fix=WHY[f"{key}.fix"].format(**fields),
                             kernel=producer.kernel if producer is not None else None,
                             location=producer.location if producer is not None else sym.location,
                             bound_sources=refs, index_sources=inputs,
                             chain=tuple(c for c in (producer and producer.comment,) if c),
                             key=key, failure=failure))
    return out


# -- input checks -------------------------------------------------------------------------------

_DIM_CHECKS = (CheckKind.TOO_SMALL, CheckKind.TOO_LARGE, CheckKind.DIM, CheckKind.STRIDE)


def _check_candidates(package: Package, failure: Failure) -> list[Candidate]:
    out: list[tuple[tuple, Candidate]] = []
    for model in package.models:
        if failure.input is not None and not (0 <= failure.input < len(model.inputs)):
            continue
        inp = model.inputs[failure.input] if failure.input is not None else None
        dim = None
        if inp is not None and failure.dim is not None and failure.dim < len(inp.dims):
            dim = inp.dims[failure.dim]
        consistent = _check_consistent(failure, inp, dim)
        key, cause, fix = _check_cause(model, failure, inp, dim)
        refs = (DimRef(failure.input, failure.dim),) if failure.input is not None and failure.dim is not None \
            and failure.check in _DIM_CHECKS else ()
        # The failing check itself (`if (arg1_1_size[0] < 2)` in check_input_N) when it was located.
        location = (dim.check_location if dim is not None and dim.check_location is not None
                    else Location(model.wrapper_path) if model.wrapper_path else None)
        rel = _broken_relation(model, failure)
        if rel is not None:   # assert_size_stride of a derived dim: `801==800` is 801 read as 20*40
            key, cause, fix = _multiple_cause(model, failure, rel)
            refs, location = (rel.ref,), rel.location or location
        out.append(((not consistent,), Candidate(kind=FailureKind.INPUT_CHECK, model=model.name,
                                                 message=failure.message, cause=cause, fix=fix, location=location,
                                                 bound_sources=refs, key=key, failure=failure)))
    out.sort(key=lambda pair: pair[0])
    return [cand for _, cand in out]


def _check_consistent(failure: Failure, inp: Input | None, dim: Dim | None) -> bool:
    """Does this model's compiled input agree with what the check printed?"""
    if inp is None:
        return True
    try:
        if failure.check == CheckKind.TOO_SMALL and dim is not None:
            return dim.min is None or dim.min == int(failure.expected or 0)
        if failure.check == CheckKind.TOO_LARGE and dim is not None:
            return dim.max is None or dim.max == int(failure.expected or 0)
        if failure.check == CheckKind.DIM and dim is not None:
            return dim.value is None or dim.value == int(failure.expected or 0)
    except ValueError:
        return True
    if failure.check == CheckKind.DTYPE and inp.dtype:
        return inp.dtype == failure.expected
    if failure.check == CheckKind.DEVICE and inp.device:
        return inp.device.split(":")[0] == (failure.expected or "").split(":")[0]
    return True


def _compiled(dim: Dim | None) -> str:
    if dim is None:
        return "unknown"
    if dim.value is not None:
        return f"static {dim.value}"
    return compiled_span(dim)


def _check_cause(model: Model, f: Failure, inp: Input | None, dim: Dim | None) -> tuple[str, str, str]:
    """(catalog key, cause, fix) of a failed input check."""
    who = model.input_text(f.input) if f.input is not None else "an input"
    where = model.describe(DimRef(f.input, f.dim)) if f.input is not None and f.dim is not None \
        else f"{who} dim {f.dim}"
    declared = ""
    if dim is not None and has_declared(dim):
        declared = WHY["why.check.declared"].format(declared=declared_span(dim))
    fields = dict(
        who=who, where=where, got=f.got, expected=f.expected, dim=f.dim,
        expr=inp.dim_display(f.dim) if inp is not None and f.dim is not None else f"dim {f.dim}",
        compiled=_compiled(dim), declared=declared, name=inp.display if inp else "x",
        key=model.metadata.get("AOTI_DEVICE_KEY", model.device or f.expected),
        special=WHY["why.check.too-small.special"] if str(f.expected) == "2" else "")
    key = f"why.check.{f.check}"   # one template per CheckKind (tests/test_catalog.py)
    return key, WHY[key].format(**fields), WHY[f"{key}.fix"].format(**fields)


def _broken_relation(model: Model, f: Failure) -> Relation | None:
    """The derived dim (analyzer.query.relations) an `expected size 801==800 at dim=1` failure is about:
    the expected size keeps the relation and is the failing size rounded down to it."""
    if f.check != CheckKind.SIZE:
        return None
    try:
        got, expected = int(f.got or ""), int(f.expected or "")
    except ValueError:
        return None
    for rel in model.relations:
        if rel.ref.dim == f.dim and not rel.fits(got) and (got - rel.offset) // rel.n * rel.n + rel.offset == expected:
            return rel
    return None


def _multiple_cause(model: Model, f: Failure, rel: Relation) -> tuple[str, str, str]:
    inp = model.inputs[rel.ref.input]
    fields = dict(where=model.describe(rel.ref), got=f.got, expected=f.expected, n=rel.n,
                  assumed=relations.multiple_text(rel),
                  relation=f"{rel.n}*{rel.symbol}" + (f"{rel.offset:+d}" if rel.offset else ""),
                  expr=inp.dim_display(rel.ref.dim), remainder=rel.offset % rel.n)
    return ("why.check.multiple", WHY["why.check.multiple"].format(**fields),
            WHY["why.check.multiple.fix"].format(**fields))


# -- device mismatches --------------------------------------------------------------------------

def _device_candidates(package: Package, failure: Failure) -> list[Candidate]:
    out = []
    for model in package.models:
        compiled = model.device or "unknown"
        key = model.metadata.get("AOTI_DEVICE_KEY")
        others = [d for d in failure.devices if d.split(":")[0] != compiled.split(":")[0]]
        per_input = ", ".join(WHY["why.device.input"].format(input=model.input_text(i.index), device=i.device)
                              for i in model.inputs if i.device)
        cause = WHY["why.device"].format(
            model=model.name, compiled=compiled, on=others[0] if others else WHY["why.device.another"],
            key=WHY["why.device.key"].format(key=key) if key else "",
            expects=WHY["why.device.expects"].format(inputs=per_input) if per_input else "")
        fix = WHY["why.device.fix"].format(compiled=compiled, key=key or compiled)
        location = Location(model.wrapper_path) if model.wrapper_path else None
        out.append(Candidate(kind=FailureKind.DEVICE_MISMATCH, model=model.name, message=failure.message,
                             cause=cause, fix=fix, location=location, key="why.device", failure=failure))
    return out


def _basename(path: str) -> str:
    return PurePosixPath(path.replace("\\", "/")).name
