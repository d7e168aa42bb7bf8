"""A check copied into many kernels (a package that repeats one lookup, as the benchmark's
replicated packages do): what the rule says of its extent, bound and dims is worked out once, and
each kernel's finding still names its own kernel and place."""

from __future__ import annotations

import sys
from pathlib import Path

from analyzer.app import api
from analyzer.rules import Context, bounds, tableextent

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "fixtures" / "versions" / "2.8" / "pos_embedding.cpu.stripped.pt2"


def _replicated(tmp_path: Path) -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from bench import build
    finally:
        sys.path.pop(0)
    return build(SOURCE, 0.1, 0, 1, tmp_path).path  # every copy holds `tmp2 < 512L`


def test_a_check_copied_into_many_kernels_is_worded_once(tmp_path, monkeypatch) -> None:
    worded: list[tuple] = []
    words = tableextent.table_words

    def counted(rule, model, extent, bound_value, choices):
        worded.append((extent, bound_value))
        return words(rule, model, extent, bound_value, choices)

    monkeypatch.setattr(tableextent, "table_words", counted)
    extents: list[str] = []
    facts = bounds._extent_facts
    monkeypatch.setattr(bounds, "_extent_facts", lambda model, extent, ranges: extents.append(extent) or facts(model, extent, ranges))
    (model,) = api.load(str(_replicated(tmp_path)), api.Options(pair=False)).models
    found = list(bounds.IndexExceedsConstantBound().check(model, Context()))
    assert len(found) > 20 and worded == [("s27", 512)] and extents == ["s27"]
    assert len({f.kernel for f in found}) == len(found)
    for f in found:
        assert f.location == f.subject.location and f.key.endswith(f";kernel:{f.kernel}")
        assert f.message_fields["kernel"] == f.kernel and f.kernel in f.detail
        assert f.chain[0].startswith(f"tmp2 in {f.kernel} ")
    # The words shared are the same for all: only the kernel's own name and place differ.
    first, *others = found
    for f in others:
        assert (f.message_fields | {"kernel": first.kernel}) == first.message_fields
        assert f.witnesses == first.witnesses and f.fix == first.fix and f.severity == first.severity


def test_words_made_once_are_still_traced(monkeypatch) -> None:
    """A cached sentence is made afresh while the catalog's trace runs: which templates and fields
    are used must not depend on what filled the cache before."""
    from analyzer.core import messages
    from analyzer.core.findings import Severity
    from analyzer.rules import notes

    how = "eager rejects it too (a test)"
    assert notes._eager_words(how, Severity.INFO) is notes._eager_words(how, Severity.INFO)  # cached
    monkeypatch.setattr(messages, "TRACE", True)
    monkeypatch.setattr(messages, "USED", type(messages.USED)(set))
    notes._eager_words(how, Severity.INFO)
    assert messages.USED[("CHAIN", "eager-rejects")] == {"how", "now"}
    assert messages.USED[("CHAIN", "eager-rejects.message")] == {"how"}


def test_a_repeated_check_message_is_read_once() -> None:
    """Kernels repeat their checks' messages: each distinct one of a line's length is parsed once;
    a longer one (a hostile package's) is read but not kept."""
    from analyzer.parse import kernels

    message = "index out of bounds: 0 <= tmp977 < 3*ks1 + 977L"  # in no package
    before = kernels._message_facts.cache_info()
    assert kernels.message_facts(message) == kernels.message_facts(message) == (0, "tmp977", "3*ks1 + 977L", "3 * ks1 + 977")
    after = kernels._message_facts.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses + 1)
    long = "index out of bounds: 0 <= tmp1 < ks0" + " " * 2000
    assert kernels.message_facts(long) == (0, "tmp1", "ks0", "ks0")
    assert kernels._message_facts.cache_info().currsize == after.currsize


def test_words_of_a_message_longer_than_a_line_are_not_kept() -> None:
    """A check's effect is made once per message, but a message longer than a line (a hostile
    package's) is worded afresh and not held by the cache past its package."""
    from analyzer.rules import bounds

    before = bounds._effect.cache_info().currsize
    long = "index out of bounds: 0 <= tmp1 < ks0" + " x" * 1000
    assert long in bounds._effect("cpu.raise", long)
    assert bounds._effect.cache_info().currsize == before
    short = "index out of bounds: 0 <= tmp977 < ks0 (words test)"
    assert bounds._effect("cpu.raise", short) is bounds._effect("cpu.raise", short)
    assert bounds._effect.cache_info().currsize == before + 1
