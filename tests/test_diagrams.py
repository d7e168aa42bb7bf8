"""Mermaid chain diagrams in the markdown report and `inspect --format dot`, on real packages."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES

DYN = str(FIXTURES / "gather_dyn.cuda.stripped.pt2")


def run(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="aoti-lint")


def _diagrams(markdown: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", markdown, re.S)


def test_markdown_draws_each_chain() -> None:
    out = run("--format", "markdown", DYN).stdout
    diagrams = _diagrams(out)
    assert len(diagrams) == 3  # one per finding (AOTI001, AOTI002 for the model, AOTI019)
    first = diagrams[0].splitlines()
    assert first[0] == "flowchart LR"
    assert '  in["input 0 dim 0 (arg0_1.size(0))"]' in first
    assert '  sym["s77: compiled for [2, inf), checked only with AOTI_RUNTIME_CHECK_INPUTS=1"]' in first
    assert '  k["kernel triton_poi_fused_index_mul_0"]' in first
    # The assertion's text with < escaped for Mermaid, and where it is.
    assert any(l.startswith('  at["index out of bounds: 0 #lt;= tmp4 #lt; ks0<br/>') and l.endswith('wrapper.cpp:656:9"]')
               for l in first)
    assert "  in --> sym --> k --> at" in first
    assert '  idx["values of input 1 (arg1_1)"] -. index .-> k' in first


def test_mermaid_labels_never_break_out() -> None:
    for diagram in _diagrams(run("--format", "markdown", "--fail-on", "info",
                                 str(FIXTURES / "pos_embedding.cuda.stripped.pt2"),
                                 str(FIXTURES / "empty_reduce.cpu.stripped.pt2")).stdout):
        for line in diagram.splitlines()[1:]:
            labels = re.findall(r'\["(.*?)"\]', line)
            for label in labels:
                assert '"' not in label and "<" not in label.replace("<br/>", "") and ">" not in label.replace("<br/>", "")


def test_inspect_dot_graph() -> None:
    result = run("inspect", "--format", "dot", DYN)
    assert result.exit_code == 0
    dot = result.stdout
    assert dot.startswith('digraph "') and dot.rstrip().endswith("}")
    assert 'm0_in0_d0 [shape=ellipse, label="dim 0 = s77\\ncompiled for [2, inf)' in dot
    assert "m0_in0_d0 -> m0_k0 [label=\"s77\"];" in dot       # launch argument
    assert "m0_in0_d0 -> m0_a0 [label=\"bound\", color=red];" in dot
    assert "m0_in1 -> m0_a0 [label=\"index values\", style=dashed];" in dot
    assert "m0_k0 -> m0_a0 [label=\"asserts\"];" in dot
    # Every edge joins declared nodes.
    declared = set(re.findall(r"^\s+(\w+) \[", dot, re.M))
    for a, b in re.findall(r"^\s+(\w+) -> (\w+)", dot, re.M):
        assert a in declared and b in declared


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_inspect_dot_renders_with_graphviz() -> None:
    for name in ("gather_dyn.cuda.stripped.pt2", "small_transformer.cpu.stripped.pt2"):
        dot = run("inspect", "--format", "dot", str(FIXTURES / name)).stdout
        svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
        assert "<svg" in svg
