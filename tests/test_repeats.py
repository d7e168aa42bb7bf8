"""A check copied into many kernels (a package that repeats one lookup, as the benchmark's
replicated packages do): what the rule says of its extent, bound and dims is worked out once, and
each kernel's finding still names its own kernel and place."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.rules import Context, bounds, tableextent

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
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
    # The fix and the chain's step past the index are filled once for what their templates read.
    assert len({id(f.fix) for f in found}) == 1
    assert len({id(f.chain[len(f.subject.chain)]) for f in found}) == 1


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


def _headlines_counted(monkeypatch) -> list[str]:
    """`headline.headline` counting its calls (the keys of the findings it wrote)."""
    from analyzer.query import headline

    made: list[str] = []
    original = headline.headline

    def counted(model, f, headlines):
        made.append(f.message_key)
        return original(model, f, headlines)

    monkeypatch.setattr(headline, "headline", counted)
    return made


def test_a_headline_repeated_across_kernels_is_made_once(tmp_path, monkeypatch) -> None:
    """Copies of one check say one headline: it is filled once for what it is made of, and every
    finding still carries the headline `headline.headline` gives it on its own."""
    from analyzer.query import headline
    from analyzer.rules import catalog

    made = _headlines_counted(monkeypatch)
    package = api.load(str(_replicated(tmp_path)), api.Options(pair=False))
    (model,) = package.models
    found = list(bounds.IndexExceedsConstantBound().check(model, Context()))
    headlines = catalog()["HEADLINES"]
    filled = list(headline.fill(package.models, iter(found), headlines))
    assert len(filled) == len(found) > 20 and len(made) == 1
    made.clear()
    for f, first in zip(filled, found):
        assert f.message == headline.headline(model, first, headlines) and f.kernel == first.kernel
    assert len(made) == len(found)


@pytest.mark.parametrize("name, exported", [("stranger11/cuda/swin.cuda.stripped.pt2", "stranger11/swin.ep.pt2"),
                                            ("stranger18/cuda/longt5.cuda.stripped.pt2", None)])
def test_headlines_made_once_are_those_made_one_by_one(name, exported, monkeypatch) -> None:
    """On real packages that repeat a check (Swin's and LongT5's kernels), with and without the
    exported program's names: fewer headlines are made than findings, and each finding's message is
    the one made for it alone."""
    options = api.Options(select=("ALL",), exported_program=str(FIXTURES / exported) if exported else None,
                          pair=False)
    made = _headlines_counted(monkeypatch)
    once = api.lint(str(FIXTURES / name), options).findings
    written = sum(1 + len(f.also) + f.also_more for f in once)  # before repeats were merged
    assert len(made) < written
    from analyzer.query import headline
    monkeypatch.setattr(headline, "_made_of", lambda model, f, template: None)
    made.clear()
    alone = api.lint(str(FIXTURES / name), options).findings
    assert len(made) == written
    assert [(f.message, f.kernel, f.location, f.also) for f in once] == \
        [(f.message, f.kernel, f.location, f.also) for f in alone]


def test_a_buffer_no_zero_empties_is_asked_about_once(monkeypatch) -> None:
    """`read-from-empty-buffer` asks once whether any zero choice empties a buffer while its loops
    run, for each pair of buffer size and loop count (Whisper's kernels repeat them): an access
    whose pair is known not to empty is passed over without asking again."""
    from analyzer.rules import access

    asked_again: list[tuple] = []
    original = access._empty_choice

    def watched(model, a, order, accept=None):
        if order.emptied.get((a.numel, a.space_expr)) is False:
            asked_again.append((a.kernel, a.pointer))
        return original(model, a, order, accept)

    monkeypatch.setattr(access, "_empty_choice", watched)
    (model,) = api.load(str(FIXTURES / "stranger5" / "whisper.cpu.stripped.pt2"), api.Options(pair=False)).models
    reads = [a for a in model.accesses if not a.write]
    assert len({(a.numel, a.space_expr) for a in reads}) < len(reads)
    assert list(access.ReadFromEmptyBuffer().check(model, Context())) == [] and asked_again == []
