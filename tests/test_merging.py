"""rules.merging: the streamed merge gives what sorting every finding and merging them gives."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings, strategies as st

from analyzer.core import messages
from analyzer.core.findings import Finding, Location, Severity
from analyzer.rules import sort_key
from analyzer.report import markdown, text
from analyzer.rules.merging import merge_repeats, merged


def _finding(kernel: str | None, line: int, message: str, detail: str) -> Finding:
    return Finding(code="AOTI001", rule="empty-index-bound", severity=Severity.ERROR, message=message,
                   model="model", location=Location("m/w.cpp", line, 1), kernel=kernel, package="p.pt2",
                   witness="x.shape = (0,)", fix="fix it", detail=detail)


_FINDINGS = st.lists(st.builds(_finding, st.sampled_from([None, "k0", "k1", "k2"]), st.integers(0, 4),
                               st.sampled_from(["empty x", "empty y"]), st.sampled_from(["", "d"])), max_size=30)


@settings(max_examples=300)
@given(_FINDINGS)
def test_streamed_as_sorted_then_merged(findings: list[Finding]) -> None:
    assert merged(iter(findings), sort_key) == merge_repeats(sorted(dict.fromkeys(findings), key=sort_key))


def test_the_first_in_order_is_kept_whatever_comes_first() -> None:
    """A later finding that sorts first becomes the one kept; a duplicate is listed once; a
    finding that differs outside the group's key (its detail) is still a repeat."""
    late, early = _finding("k9", 9, "empty x", ""), _finding("k1", 1, "empty x", "")
    other = _finding("k5", 5, "empty x", "d")
    (kept,) = merged([late, late, other, early], sort_key)
    assert kept.kernel == "k1" and kept.also == (("k5", other.location), ("k9", late.location))


def test_the_repeats_past_the_list_limit_are_counted() -> None:
    findings = [_finding(f"k{i}", i + 1, "empty x", "") for i in range(messages.LIST_LIMIT + 3)]
    (kept,) = merged(reversed(findings), sort_key)
    assert len(kept.also) == messages.LIST_LIMIT and kept.also_more == 2 and kept.kernel == "k0"


def test_a_place_in_the_wrapper_outside_any_kernel_merges_a_package_wide_one_stays() -> None:
    """run_impl repeats one division for every launch that needs it (Swin's padded window count): one
    finding, the other lines listed with no kernel (and under a kernel's finding of the same words, the
    same problem); findings about the package as a whole (line 0) stay apart."""
    first, second = _finding(None, 3, "empty x", ""), _finding(None, 7, "empty x", "")
    whole = _finding(None, 0, "empty x", "")
    out = merged([second, whole, first, replace(whole, detail="d")], sort_key)
    assert [(f.location.line, f.also) for f in out] == [(0, ()), (0, ()), (3, ((None, second.location),))]
    kernel = _finding("k1", 2, "empty x", "")
    (_, _, kept) = merged([second, whole, first, kernel, replace(whole, detail="d")], sort_key)
    assert kept.kernel == "k1" and kept.also == ((None, first.location), (None, second.location))


def test_a_wrapper_repeat_reads_also_at_its_line() -> None:
    """The terminal and markdown reports name a kernel-less repeat by its line alone."""
    first, second = _finding(None, 3, "empty x", ""), _finding(None, 7, "empty x", "")
    kept = merged([first, second], sort_key)[0]
    assert "  also at w.cpp:7" in text.render_finding(kept).splitlines()
    assert "- also at `w.cpp:7`" in markdown.details(kept).splitlines()


def test_changed_is_dataclasses_replace() -> None:
    import dataclasses

    import pytest

    from analyzer.core.findings import Finding, Location, Severity, changed

    f = Finding(code="AOTI001", rule="r", severity=Severity.ERROR, message="m", model="x",
                location=Location("p", 3, 4), kernel="k", witnesses=("w",), also=(("k2", Location("p", 5, 6)),))
    for changes in ({"package": "pkg"}, {"message": "h", "source": object()}, {}):
        got, expected = changed(f, **changes), dataclasses.replace(f, **changes)
        assert got == expected and got.__dict__ == expected.__dict__ and hash(got) == hash(expected)
        assert got is not f and f.package == ""  # the original unchanged
    with pytest.raises(TypeError):
        changed(f, not_a_field=1)
