"""AOTI015's position computed from an input's values against a size (analyzer.rules.datarange): a jagged
row's column `x0 - offsets[row]` checked against the dense width, on hand-built models and on the
package it came from (fixtures/stranger18/jagged_dense)."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.app import api
from analyzer.core.findings import Location, Severity
from analyzer.core.model import Assertion, Dim, DimRef, Input, Launch, Model, Symbol
from analyzer.query import valueindex as VI
from conftest import FIXTURES
from test_rules import _run

WRAPPER, KERNEL = "m/w.wrapper.cpp", "m/k.kernel.cpp"
RULE = "index-exceeds-dynamic-bound"


def _jagged(upper: str, dtype: str = "int64") -> Model:
    """values [total, 16], offsets [nb] (`dtype`), queries [L, 16]; one check `0 <= tmp28 < ks1` (ks1 = L)
    inside an OpenMP region whose index is at most `upper` for a value of offsets (VALUE)."""
    values = Input(0, "arg0_1", [Dim(0, "s59", None, 2, 1024, "env"), Dim(1, None, 16)], dtype="float32",
                   user_name="values")
    offsets = Input(1, "arg1_1", [Dim(0, "s33", None, 3, 17, "env")], dtype=dtype, user_name="offsets")
    queries = Input(2, "arg2_1", [Dim(0, "s55", None, 2, 64, "env"), Dim(1, None, 16)], dtype="float32",
                    user_name="queries")
    model = Model("model", device="cpu", wrapper_path=WRAPPER, inputs=[values, offsets, queries])
    model.symbols = {s: Symbol(s, s, ref, Location(WRAPPER, 10 + i, 5))
                     for i, (s, ref) in enumerate((("s59", DimRef(0, 0)), ("s33", DimRef(1, 0)), ("s55", DimRef(2, 0))))}
    model.launches = [Launch("cpp_fused_index_put_1", ("arg0_1", "arg1_1", "buf0", "s59", "s33", "s55"),
                             Location(WRAPPER, 40, 5))]
    model.assertions = [Assertion("cpp_fused_index_put_1", "index out of bounds: 0 <= tmp28 < ks1",
                                  Location(KERNEL, 27, 29), index_var="tmp28", lower=0, bound="ks1", bound_expr="s55",
                                  bound_sources=(DimRef(2, 0),), index_sources=(1,), index_pointers=("in_ptr1",),
                                  value_upper=upper, parallel=True, linked=True)]
    return model


def test_a_column_before_its_rows_end_reaches_the_width_where_the_values_outnumber_it() -> None:
    (f,) = _run(_jagged("max(s55 - 1, s59 - 1 - VALUE)"), RULE)
    assert (f.message_key, f.severity, f.input, f.dim) == ("index-exceeds-dynamic-bound.position", Severity.INFO, 1, None)
    # At the witness sizes (3 values, 3 columns) no value takes the column to 3: 4 values do, with offsets 0.
    assert f.witness == "values.shape = (4, 16), offsets.shape = (3,), queries.shape = (3, 16); " \
                        "with a value of 0 in input 1 (offsets)"
    assert "eager PyTorch rejects this input too" in f.detail


def test_a_position_that_grows_with_the_value_takes_its_smallest_value_at_the_witness_sizes() -> None:
    (f,) = _run(_jagged("max(s55 - 1, s33 * VALUE - 1)"), RULE)   # a running sum of the values: 3v - 1 >= 3
    assert f.witness.endswith("with a value of 2 in input 1 (offsets)")


@pytest.mark.parametrize(("upper", "dtype", "why"), [
    ("max(VALUE + s55, VALUE)", "int64", "the value itself, negative-index wrapping aside: the caller's data"),
    ("max(VALUE, 0)", "int64", "the value itself"),
    ("2 * s55 - 1", "int64", "no value in it: a size's finding"),
    ("max(s55 - 1, s59 - 1 - VALUE)", "float32", "coordinates of a float input (grid sampling masks them)"),
    ("max(s55 - 1, s55 - 1 - VALUE)", "int64", "never past the width: no size or value reaches it"),
])
def test_no_position_finding(upper: str, dtype: str, why: str) -> None:
    assert not _run(_jagged(upper, dtype), RULE), why


def test_the_witness_search_skips_the_bounds_own_dims() -> None:
    model = _jagged("s55 - VALUE")
    assert VI.position_witness(model, "s55 - VALUE", "s55") == ({}, 0)
    assert VI.position_witness(model, "s55 - 1 - VALUE", "s55") is None
    # A dim of its own (the values' count) at no size of which the position reaches the width.
    assert VI.position_witness(model, "min(s59, s55 - 1) - VALUE", "s55") is None


def test_jagged_dense_names_the_column_and_its_probe_failed_at_that_check() -> None:
    folder = FIXTURES / "stranger18"
    findings = api.lint(str(folder / "jagged_dense.cpu.stripped.pt2"),
                        api.Options(select=("AOTI015",), exported_program=str(folder / "jagged_dense.ep.pt2"))).findings
    (f,) = [f for f in findings if f.message_key == "index-exceeds-dynamic-bound.position"]
    assert f.subject.message == "index out of bounds: 0 <= tmp28 < ks1" and f.kernel.endswith("_sub_zeros_1")
    assert "what():  index out of bounds: 0 <= tmp28 < ks1" in (folder / "logs" / "jagged_dense.total=max+1.log").read_text()
    # The wrap of a column before its row (`tmp21 < 0 ? tmp21 + ks1 : tmp21`) is below L, not L plus the column.
    assert "max(queries.shape[0] - 1, values.shape[0] - v - 1)" in f.detail
    assert dataclasses.replace(f).severity == Severity.INFO
