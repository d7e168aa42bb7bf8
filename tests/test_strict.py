"""Strict mode: every handler table (ts.cpp_to_py, ts.statements, values.Values) knows every node
kind that real packages contain. A new construct must be given a handler (even one that answers
"unknown" on purpose), never fall through silently."""

from __future__ import annotations

import ast

import pytest

from analyzer.app import api
from analyzer.parse import kernels, ts
from analyzer.core import strict
from analyzer.expr import values
from conftest import FIXTURES, all_packages, package_id


@pytest.fixture
def strict_mode(monkeypatch):
    monkeypatch.setattr(strict, "STRICT", True)


def test_every_package_parses_in_strict_mode(strict_mode):
    real = [pkg for folder in ("real", "stranger") for pkg in
            sorted((FIXTURES / folder).glob("*.cpu.stripped.pt2")) + sorted((FIXTURES / folder / "cuda").glob("*.pt2"))]
    assert len(real) >= 22  # the models nobody here wrote (transformers, AOTI-test-like)
    packages = all_packages() + real
    assert len(packages) > 40  # fixtures/, fixtures/stress/pkgs, fixtures/real and ../shared/pt2
    for path in packages:
        try:
            api.load(path)
        except strict.UnknownNodeKind as exc:  # pragma: no cover - the failure message
            pytest.fail(f"{package_id(path)}: {exc}")


def _expression(source: str) -> ts.Node:
    tree, _ = ts.parse(f"auto v = {source};".encode())
    return next(ts.matches("declarations", tree.root_node))["value"]


def test_cpp_to_py_unknown_kind(strict_mode):
    node = _expression("sizeof(int64_t)")
    with pytest.raises(strict.UnknownNodeKind, match="sizeof_expression"):
        ts.cpp_to_py(node)


def test_cpp_to_py_unknown_kind_is_unknown_outside_strict_mode():
    assert ts.cpp_to_py(_expression("sizeof(int64_t)")) == "unknown()"
    # A kind with a handler that answers unknown on purpose never raises.
    assert ts.cpp_to_py(_expression('"text"')) == "unknown()"


def test_statements_unknown_kind(strict_mode):
    tree, _ = ts.parse(b"void f() { g(); co_return 1; }")
    body = ts.functions(tree.root_node)[0]["body"]
    with pytest.raises(strict.UnknownNodeKind, match="co_return_statement"):
        list(ts.statements(body))


def test_values_unknown_kind(strict_mode):
    facts = kernels.KernelFacts("k", "triton", ("ks0",), None)
    engine = values.Values(facts)
    assert engine.upper(ast.parse("ks0 - 1", mode="eval").body, 1) == "(ks0) - (1)"
    with pytest.raises(strict.UnknownNodeKind, match="Lambda"):
        engine.upper(ast.parse("lambda: ks0", mode="eval").body, 1)
