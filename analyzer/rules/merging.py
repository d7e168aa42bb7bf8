"""One finding for the same problem in several kernels (`merged`, `merge_repeats`): Inductor fuses
one op of the user's code (a position embedding) into several kernels, each with its own copy of
the check. Same rule, headline, witnesses and fix: the first in `sort_key` order is kept and lists
the others in `also`; its key stays, so a baseline that holds it still matches.

The same holds for a finding about a place in the wrapper outside any kernel (run_impl computes one
division for each launch that needs it). `merged` reads the findings one at a time and keeps whole
only the first of each group (and the findings about no place); of the others it keeps where they
are. A package that repeats one check in 26,000 kernels is held as a few findings and 26,000
locations, not as 26,000 findings."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from ..core import messages
from ..core.budget import poll
from ..core.findings import Finding, Location
from ..core.model import Assertion, Model


def _group(f: Finding) -> tuple:
    return (f.package, f.model, f.code, f.severity, f.message, f.witnesses or (f.witness,), f.fix, f.input, f.dim,
            f.accepted)


def _mergeable(f: Finding) -> bool:
    """A finding about a kernel, or about a place in the wrapper (run_impl's size arithmetic, which
    repeats one division for every launch that needs it); one about the package as a whole stays."""
    return f.kernel is not None or f.location.line > 0


@dataclass
class _Repeats:
    first: Finding
    first_at: tuple
    # (sort key, kernel, location, hash) of each finding of the group -> its place in the input:
    # equal findings are one (the caller's dict.fromkeys), whatever else they hold.
    members: dict[tuple, int] = field(default_factory=dict)


def merged(findings: Iterable[Finding], sort_key: Callable[[Finding], tuple]) -> list[Finding]:
    """`findings` without duplicates, sorted by `sort_key` (ties in input order), repeats merged:
    `merge_repeats(sorted(dict.fromkeys(findings), key=sort_key))`, without holding them all."""
    singles: dict[Finding, tuple] = {}
    groups: dict[tuple, _Repeats] = {}
    # A member's sort key holds its finding's message, whose fields hold most of what the finding
    # built: the message (the key's last part) is kept as the first equal one seen, so that a repeat
    # is released once merged (the key's other strings are the package's, its members' and the
    # rule's own).
    shared: dict[str, str] = {}
    for n, f in enumerate(findings):
        poll("merging repeated findings")
        at = (sort_key(f), n)
        if not _mergeable(f):
            singles.setdefault(f, at)
            continue
        key_of = at[0]  # `sort_key`'s: the message last
        message = shared.setdefault(key_of[-1], key_of[-1])
        member = (key_of if message is key_of[-1] else (*key_of[:-1], message), f.kernel, f.location, hash(f))
        group = groups.get(key := _group(f))
        if group is None:
            group = groups[key] = _Repeats(f, at)
        elif member not in group.members and at < group.first_at:
            group.first, group.first_at = f, at
        group.members.setdefault(member, n)
    rows: list[tuple[tuple, Finding, _Repeats | None]] = [(at, f, None) for f, at in singles.items()]
    rows.extend((g.first_at, g.first, g) for g in groups.values())
    rows.sort(key=lambda row: row[0])
    return [f if g is None else _with_also(f, g) for _, f, g in rows]


def _with_also(first: Finding, group: _Repeats) -> Finding:
    ordered = sorted(((member[0], n), member[1], member[2]) for member, n in group.members.items())
    others: list[tuple[str | None, Location]] = [(kernel, loc) for at, kernel, loc in ordered if at != group.first_at]
    return _listed(first, others)


def _listed(first: Finding, others: list[tuple[str | None, Location]]) -> Finding:
    # The first LIST_LIMIT repeats are listed, the rest counted (a package may repeat one check in
    # 50,000 kernels; the report grows with the findings, not with them).
    if not others:
        return first
    limit = messages.LIST_LIMIT
    kept = first.also + tuple(others)
    return replace(first, also=kept[:limit], also_more=first.also_more + max(0, len(kept) - limit))


def merge_repeats(findings: list[Finding]) -> list[Finding]:
    """Repeats merged in `findings`, already sorted and without duplicates (their order kept)."""
    firsts: dict[tuple, int] = {}
    repeats: dict[int, list[tuple[str | None, Location]]] = {}
    out: list[Finding] = []
    for f in findings:
        poll("merging repeated findings")
        if not _mergeable(f):
            out.append(f)
            continue
        group = _group(f)
        if group in firsts:
            repeats[firsts[group]].append((f.kernel, f.location))
        else:
            firsts[group] = len(out)
            repeats[len(out)] = []
            out.append(f)
    return [_listed(f, repeats.get(i, [])) for i, f in enumerate(out)]


def unique_assertions(model: Model, keep) -> Iterable[Assertion]:
    """Assertions passing `keep`, one per check: CPU kernels repeat an assertion in the vectorized
    main loop and the scalar tail, sometimes under another temporary (`tmp10` / `tmp8`), so a check
    is identified by its kernel, bound and index (values or extent); the first location is kept."""
    seen: set[tuple] = set()
    for a in model.assertions:
        ident = (a.kernel, a.message) if not a.linked else \
            (a.kernel, a.lower, a.bound_expr, a.index_sources, a.index_extent)
        if not keep(a) or ident in seen:
            continue
        seen.add(ident)
        yield a
