"""Interval arithmetic over size expressions."""

from __future__ import annotations

import math

import pytest

from analyzer.expr import intervals


def test_basic_intervals():
    r = {"s77": (2, None), "s95": (2, 10)}
    assert intervals.evaluate_interval("s77*s95 - 1", r) == (3, math.inf)
    assert intervals.evaluate_interval("s95 // 2", r) == (1, 5)
    assert intervals.evaluate_interval("max(s95, 4)", r) == (4, 10)
    assert intervals.evaluate_interval("trunc(0.12*s95)", r) == (0, 1)
    assert intervals.evaluate_interval("(s95 - 1) % 3", r) == (0, 2)


def test_division_by_interval_containing_zero_is_refused():
    with pytest.raises(ValueError):
        intervals.evaluate_interval("10 / s0", {"s0": (0, 5)})


def test_unknown_constructs_raise():
    with pytest.raises(ValueError):
        intervals.evaluate_interval("unknown()", {})
    with pytest.raises(ValueError):
        intervals.evaluate_interval("s1", {})
    with pytest.raises(ValueError):
        intervals.evaluate_interval("(" * 300 + "1" + ")" * 300, {})


def test_substitute_and_simplify():
    assert intervals.substitute("ks0", {"ks0": "s77"}) == "s77"
    assert intervals.substitute("ks0*ks1", {"ks0": "s77", "ks1": "s27 + 1"}) == "s77 * (s27 + 1)"
    assert intervals.simplify("((s27) - 1) + 1") == "s27"
    assert intervals.substitute("floordiv(ks0, 2)", {"ks0": "s1"}) == "floordiv(s1, 2)"
    assert intervals.names("floordiv(s1, 2) + max(s2, 3)") == {"s1", "s2"}


def test_evaluate_point():
    assert intervals.evaluate("s77 * 8", {"s77": 3}) == 24
    # A remainder within one period of its modulus is exact, so a point evaluates to a point.
    assert intervals.evaluate("s27 + (7 - s27 % 7) % 7", {"s27": 9}) == 14
    assert intervals.evaluate_interval("s % 7", {"s": (8, 12)}) == (1, 5)
    assert intervals.evaluate_interval("s % 7", {"s": (5, 9)}) == (0, 6)   # across a period: the range


def test_floordiv_of_a_multiple_minus_a_remainder_folds():
    """`xindex // 64` over `xnumel = 64*s` reaches floordiv(64*s - 1, 64) = s - 1 (sizes are integers)."""
    from analyzer.expr.intervals import simplify
    assert simplify("31 + 32 * floordiv(64 * s27 - 1, 64)") == "31 + 32 * (s27 - 1)"
    assert simplify("floordiv(8 * s, 8)") == "s"
    assert simplify("floordiv(8 * s - 8, 8)") == "s - 1"
    for kept in ("floordiv(8 * s - 9, 8)", "floordiv(8 * s - 1, 4)", "floordiv(s * 8 - 1, 8)", "floordiv(8 * s + 1, 8)"):
        assert simplify(kept) == kept
    for s in range(0, 40):  # the fold agrees with Python's floor division
        assert (64 * s - 1) // 64 == s - 1 and (8 * s - 8) // 8 == s - 1


def test_python_mod_of_a_negative_dividend():
    """`c10::div_mod` (sympy's PythonMod) takes the divisor's sign: ViTDet's window padding
    `div_mod(-(h // 8), 2)` is 1 at h = 8 (C++'s `%` would give -1), exact at points and within one
    period, [0, b - 1] across periods; a divisor that is not a positive constant is refused."""
    assert intervals.evaluate("mod(-(h // 8), 2)", {"h": 8}) == 1
    assert intervals.evaluate("mod(-(h // 8), 2)", {"h": 16}) == 0
    assert intervals.evaluate_interval("mod(x, 4)", {"x": (-7, -5)}) == (1, 3)
    assert intervals.evaluate_interval("mod(x, 4)", {"x": (-7, 9)}) == (0, 3)
    for divisor in ("y", "0", "-2"):
        with pytest.raises(ValueError):
            intervals.evaluate_interval(f"mod(x, {divisor})", {"x": (1, 9), "y": (1, 3)})
    # The window count of ViTDet's run_impl check, `!= 0` from h = 8 on: 0 below it.
    expr = "floordiv(floordiv(h, 8) + mod(-1*floordiv(h, 8), 2), 2)"
    assert [intervals.evaluate(expr, {"h": h}) for h in (0, 7, 8, 15, 16, 24)] == [0, 0, 1, 1, 1, 2]


def test_cancel_drops_terms_of_a_sum_that_cancel():
    """For display: left-padded positions `max(x0 + v - seq, 0)` at x0 = seq - 1 read `max(VALUE - 1, 0)`;
    terms kept in order, a positive one first and constants last; anything else as `simplify` gives it."""
    cases = {"max(s27 - 1 + VALUE - s27, 0)": "max(VALUE - 1, 0)", "s27 - 1 - VALUE": "s27 - VALUE - 1",
             "a - a": "0", "-s1 + s2 + s1": "s2", "-1 - a": "-a - 1", "((s27) - 1) + 1": "s27",
             "2*a - a": "2 * a - a", "not an expression(": "not an expression("}
    for expr, shown in cases.items():
        assert intervals.cancel(expr) == shown, expr
    # Each value the cancelled form gives, the original gives too.
    for s27 in (0, 3, 129):
        for value in (0, 1, 65):
            env = {"s27": s27, "VALUE": value}
            assert intervals.evaluate("max(s27 - 1 + VALUE - s27, 0)", env) == intervals.evaluate("max(VALUE - 1, 0)", env)


def test_an_exact_integer_quotient_is_not_floored_one_lower() -> None:
    """`n*n // n` is n at every n: as a product with 1/n, 2401 * (1/49) falls below 49 and floored to 48
    (EdgeConv's CUDA strides `3*(n*n // n)` and `3*n` read as differing at n = 49)."""
    assert all(intervals.evaluate("s0 * s0 // s0", {"s0": n}) == n for n in range(1, 2000))
    assert all(intervals.evaluate("(s0 * 7) // 7", {"s0": n}) == n for n in range(1, 2000))
    assert intervals.evaluate_interval("x // y", {"x": (-5, 7), "y": (-4, -2)}) == (-4.0, 2.0)
