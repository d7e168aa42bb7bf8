"""Headlines: each finding's short message (under ~100 characters, effect first, in the user's
names), from the rule's HEADLINES templates (handed in by `rules.run_rules`), the fields its long message (`detail`) was filled with,
and what the model and the finding's `source` say: the input's user name, the module and line of the
user's code, what a failed check does on the device.

Reads only the linked model and the findings (like the rules); run by `rules.run_rules` after source
attribution.
"""

from __future__ import annotations

import functools
from itertools import repeat
from typing import Iterable, Iterator, Mapping

from ..core.findings import Finding, changed
from ..core import messages
from ..core.messages import AT_ZERO, EAGER_REJECTS, OUTSIDE_CONTRACT, SHORT_IDENTITIES, VERBS, Template, Text
from ..core.model import Model, input_position, shape_text, shim_op
from .source import DIVISION_OPS, INDEX_OPS, REDUCTION_OPS, kernel_ops, short_op

LIMIT = 100        # a headline's length
NAME_LIMIT = 40    # a user name (input, module path) inside it
ELLIPSIS = "…"



def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with an ellipsis, never inside a code span (`...`)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if cut.count("`") % 2:  # an open code span: end before it
        cut = cut[: cut.rfind("`")]
    return cut.rstrip(" ,;:(") + ELLIPSIS


def _name(text: str) -> str:
    """A user name kept readable: a huge one keeps its head and its tail."""
    if len(text) <= NAME_LIMIT:
        return text
    half = (NAME_LIMIT - 1) // 2
    return text[:half] + ELLIPSIS + text[-half:]


def dim_name(model: Model | None, f: Finding) -> str:
    """`` `x.shape[1]` `` (the exported program's name), else `input 0 dim 1`; the input alone
    when the finding is about a whole input."""
    if f.input is None:
        return "an input"
    inp = model.inputs[f.input] if model is not None and 0 <= f.input < len(model.inputs) else None
    if inp is not None and inp.user_name:
        name = _name(inp.user_name)
        return f"`{shape_text(name, f.dim)}`" if f.dim is not None else f"`{name}`"
    return input_position(f.input, f.dim)


def input_name(model: Model | None, f: Finding) -> str:
    if f.input is None:
        return "an input"
    inp = model.inputs[f.input] if model is not None and 0 <= f.input < len(model.inputs) else None
    if inp is not None and inp.user_name:
        return f"`{_name(inp.user_name)}`"
    return input_position(f.input)


def sites(f: Finding) -> list[str]:
    """Where in the user's code, longest first: ` in `transformer.wpe` (Embedding)`, ` in
    `transformer.wpe``, then nothing; ` at modeling_gpt2.py:576` for the root module."""
    src = f.source
    if src is None:
        return [""]
    cls = getattr(src, "class_name", None)
    if src.module:
        name = f" in `{_name(src.module)}`"
        return [f"{name} ({cls})", name, ""] if cls else [name, ""]
    if src.file:
        base = src.file.replace("\\", "/").rsplit("/", 1)[-1]
        return [f" at {_name(base)}:{src.line}", ""]
    if cls:
        return [f" in `{_name(cls)}.forward`", ""]
    return [""]


def user_op(f: Finding) -> str:
    """The user's op (`embedding`, `mean`) behind the finding; without an exported program, the
    first op of the kernel's name that can raise it (`index` of `triton_poi_fused_index_mul_0`; the
    finding's `user_ops`, from its rule), else `kernel`."""
    src = f.source
    if src is not None and src.op:
        return short_op(src.op)
    known = _ALL_OPS if f.user_ops is None else f.user_ops
    return next((op for op in kernel_ops(f.kernel) if op in known), "kernel") if f.kernel else "kernel"


# The ops a headline can name from a kernel's name when the finding's rule says any op may raise it.
_ALL_OPS = INDEX_OPS | DIVISION_OPS | frozenset().union(*REDUCTION_OPS.values())


def fields(model: Model | None, f: Finding) -> dict[str, object]:
    """The message's own fields plus the user-facing ones every headline may use."""
    given = dict(f.message_fields or {})
    more = int(given.get("more_dims", 0) or 0)  # a finding about several dims of one input
    dim = dim_name(model, f) + (f" (and {more} more dim{'s' if more > 1 else ''})" if more else "")
    device = str(getattr(model, "device", None) or "").split(":")[0].lower()
    table = str(given.get("table", "") or "")
    given.update(
        dim_name=dim,
        input_name=input_name(model, f),
        user_op=user_op(f),
        # A failed index check's outcome where the rule knew it (OpenMP region or not), else the device's.
        verb=VERBS.get(str(given.get("outcome") or device), VERBS["unknown"]),
        table_name=f"`{_name(table.split(' (')[0])}`" if table else "a constant",
        aten_op=shim_op(str(given.get("call") or f.kernel or "")) or "ATen",
        model=given.get("model", f.model),
    )
    if "calls" in given:  # extern calls that receive an empty tensor at size 0
        given["at_zero"] = AT_ZERO["rnn" if given.get("rnn") else "sdpa" if given.get("sdpa") else "conv" if given.get("conv_rejects")
                                     else "check" if given.get("zero_check") else "calls"]
    if "op" in given:  # a reduction's identity, short
        given["identity"] = SHORT_IDENTITIES.get(str(given["op"]), "its identity")
    return given


def _fallback(f: Finding) -> str:
    """The detail cut short: the headline of a finding without one."""
    return shorten(" ".join(f.detail.split()) or f.message, LIMIT)


def headline(model: Model | None, f: Finding, headlines: Mapping[str, Template]) -> str:
    """The finding's headline from `headlines` (the rules' HEADLINES); its detail cut short when
    there is none for its key. A headline filled whole stays a `Text` (its key and fields)."""
    template = headlines.get(f.message_key)
    if template is None:
        return _fallback(f)
    values = fields(model, f)
    others = _other_minimums(model, f, values)
    if others is not None:
        values["dim_name"] = dim_name(model, f)  # the first dim alone: the others follow its comparison
    # Witnesses the exported program's contract excludes (the severity dropped): said where it fits.
    note = (OUTSIDE_CONTRACT if values.get("outside_contract") else "") + \
        (EAGER_REJECTS if values.get("eager_rejects") else "")
    text: str = ""
    for site in sites(f):  # drop the class, then the place, before cutting the text
        try:
            text = template.format(**{**values, "site": site})
        except (KeyError, IndexError):  # a message built without its fields: never fail a report
            return _fallback(f)
        if others is not None:
            text = text.replace(others[0], others[0] + others[1], 1)
        if len(text) + len(note) <= LIMIT:
            return text + note
        if len(text) <= LIMIT and site == "":
            return text
    return shorten(text, LIMIT)


def _other_minimums(model: Model | None, f: Finding, values: dict[str, object]) -> tuple[str, str] | None:
    """For a finding about several dims of one input whose minimums differ: the first dim's
    comparison and what follows it (`x.shape[0]` < 2, ` (and 2 more dims below theirs)`), so that
    "< 2" is not said of dims compiled for >= 33."""
    if values.get("more_same_min") is not False:
        return None
    raw_more = values.get("more_dims") or 0
    more = int(raw_more) if isinstance(raw_more, (int, str)) else 0
    first = dim_name(model, f)
    lead = f"{first} < {values.get('min')}" if f.message_key != "unenforced-lower-bound.rejected" \
        else f"{first} = {values.get('below')}"
    return lead, f" (and {more} more dim{'s' if more > 1 else ''} below {'theirs' if more > 1 else 'its own'})"


def fill(models: Iterable[Model], findings: Iterable[Finding], headlines: Mapping[str, Template]) -> Iterator[Finding]:
    """Findings with `message` set to their headline (the long text stays in `detail`), one at a
    time: a package's findings are not held twice. A check copied into many kernels is worded
    once: a headline filled whole is kept for what it was made of (`_made_of`)."""
    by_name = {m.name: m for m in models}
    made: dict[tuple, str] = {}
    for f in findings:
        if f.detail:
            model = by_name.get(f.model)
            key = _made_of(model, f, headlines.get(f.message_key))
            try:
                text = made.get(key) if key is not None else None
            except TypeError:  # a field that is not hashable: made for this finding alone
                key = text = None
            if text is None:
                text = headline(model, f, headlines)
                if key is not None and isinstance(text, Text):  # not cut short nor the detail's
                    made[key] = text
            f = changed(f, message=text)
        yield f


# The message fields a headline reads besides its template's own (`headline`, `fields`,
# `_other_minimums`): the notes, the comparison of several dims, the effect and the op's words.
_READ_FIELDS = ("outside_contract", "eager_rejects", "more_same_min", "more_dims", "min", "below", "outcome",
                "table", "call", "calls", "rnn", "sdpa", "conv_rejects", "zero_check", "op", "model")


def _made_of(model: Model | None, f: Finding, template: Template | None) -> tuple | None:
    """What `headline` reads of `f` and its model, as a key (which may hold a value that is not
    hashable); None where there is none (no template, or templates being traced)."""
    if template is None or messages.TRACE:  # a trace records each use
        return None
    given = f.message_fields or {}
    aten = shim_op(str(given.get("call") or f.kernel or "")) if "aten_op" in template_names(template) else None
    return (id(model), f.message_key, f.model, f.input, f.dim, f.source, user_op(f), aten,
            *template_values(template, given), *map(given.get, _READ_FIELDS, repeat(_ABSENT)))


_ABSENT = object()  # a field not given (a template missing one is filled afresh: it falls back)


def template_values(template: Template, fields: Mapping[str, object]) -> tuple[object, ...]:
    """What `fields` gives each of the template's fields, in name order, one not given read apart
    from one given as None: the key of a text filled once for its values."""
    return tuple(map(fields.get, template_names(template), repeat(_ABSENT)))


@functools.lru_cache(maxsize=None)
def template_names(template: Template) -> tuple[str, ...]:
    """A template's field names, sorted, read once (a check copied into many kernels asks each
    time; the catalog's templates are a few hundred)."""
    return tuple(sorted(template.fields))
