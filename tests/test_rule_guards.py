"""The framework's edges the rule cases do not reach: a rule with no guard condition, a guard asked
about a finding without the record it needs, a fix given as plain text or a bare template, and a
rule whose fragments are not among its messages."""

from __future__ import annotations

import pytest

from analyzer.core import messages
from analyzer.core.findings import Finding, Location, Severity
from analyzer.core.model import Assertion, Division, Model, Reduction
from analyzer.rules import Context, Rule, all_rules, register


def _rule(code: str) -> Rule:
    return next(r for r in all_rules() if r.code == code)()


def _finding(subject: object = None) -> Finding:
    return Finding("AOTI000", "x", Severity.INFO, "m", "model", Location("p"), subject=subject)


def test_a_rule_without_a_guard_condition_says_none() -> None:
    assert _rule("AOTI013").guard_condition(Model(name="model"), _finding()) is None


@pytest.mark.parametrize("code, subject", [
    ("AOTI001", None), ("AOTI001", Assertion(message="m", kernel="k", location=Location("p"))),
    ("AOTI003", None), ("AOTI004", None), ("AOTI004", Division("k", "ks0", None, (), Location("p"))),
    ("AOTI005", None), ("AOTI005", Reduction("k", "sum", None, (), Location("p"))),
])
def test_a_guard_without_its_record_says_none(code: str, subject: object) -> None:
    """No record, or one without the expression the condition is written over (a bound, a divisor,
    an extent): the guard cannot state it, so the contract lists the finding as skipped."""
    assert _rule(code).guard_condition(Model(name="model"), _finding(subject)) is None


def test_a_fix_keeps_its_template_key_or_stays_text() -> None:
    rule = _rule("AOTI013")
    template = rule.FIXES["read-past-constant"]
    given = rule.finding("model", Context(), "m", Location("p"), fix=template)
    assert given.fix_key == "read-past-constant" and str(given.fix) == str(template)
    plain = rule.finding("model", Context(), "m", Location("p"), fix="check the input")
    assert plain.fix == "check the input" and plain.fix_key == ""


def test_fragments_must_be_messages_of_the_rule() -> None:
    class Loose(Rule):
        name, code = "loose-rule", "AOTI998"
        MESSAGES = messages.Catalog("MESSAGES", {"loose-rule": "text"})
        FRAGMENTS = frozenset({"loose-rule.part"})

    with pytest.raises(TypeError, match="FRAGMENTS not in its MESSAGES"):
        register(Loose)
