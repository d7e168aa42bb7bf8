"""Source attribution (analyzer.query.source): every kernel finding names the user's module, file, line
and code, from the exported program's graph (`--exported-program` or one inside the package).

CUDA kernels are matched through the wrapper's `Topologically Sorted Source Nodes` comment, C++
kernels through their name's op list; both must land on the same graph node.
"""

from __future__ import annotations

import json
import zipfile

import pytest
from click.testing import CliRunner

from analyzer.app import api
from analyzer.query import source
from analyzer.app.cli import cli
from analyzer.core.model import GraphNode, Kernel, Model
from conftest import FIXTURES, require

# fixture -> (code, graph node, module path, table rows, user code substring)
EXPECTED = {
    "gather_dyn": ("AOTI001", "index", "", None, "x[idx] * 2"),
    "pos_embedding": ("AOTI003", "embedding", "pe", 512, "self.pe(torch.arange(x.shape[1]"),
    "small_transformer": ("AOTI003", "embedding_1", "pos", 64, "self.pos(torch.arange(t"),
    "lifted_params": ("AOTI001", "index", "", None, "h[idx] * y"),
    "index_add": ("AOTI001", "index_add", "", None, "index_add"),
    "torch_gather": ("AOTI001", "gather", "", None, "torch.gather"),
}


def _lint(pkg, ep=None):
    return api.lint([str(pkg)], api.Options(exported_program=str(ep) if ep else None))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_findings_name_the_users_code(name, device):
    code, node, module, rows, text = EXPECTED[name]
    pkg = require(FIXTURES / f"{name}.{device}.stripped.pt2")
    result = _lint(pkg, FIXTURES / f"{name}.ep.pt2")
    found = [f for f in result.findings if f.code == code]
    assert found
    for f in found:
        src = f.source
        assert src is not None, f
        assert (src.node, src.module, src.rows, src.ambiguous) == (node, module, rows, False)
        assert src.file.endswith("fixtures/generate.py") and src.line > 0 and text in src.code
    # Findings about an input as a whole have no kernel and no source.
    assert all(f.source is None for f in result.findings if f.kernel is None)


def test_comment_and_kernel_name_paths_agree():
    """CUDA: the launch comment; CPU: the kernel name's op list. Same node for the same model."""
    nodes = {}
    for device, from_comment in (("cuda", True), ("cpu", False)):
        pkg = api.load(require(FIXTURES / f"small_transformer.{device}.stripped.pt2"),
                       api.Options(exported_program=str(FIXTURES / "small_transformer.ep.pt2")))
        model = pkg.models[0]
        attributor = source.Attributor(model)
        a = next(a for a in model.assertions if a.bound_value == 64)
        assert attributor.candidates(a.kernel)[1] is from_comment
        nodes[device] = source.for_assertion(attributor, a).node
        vocab = next(a for a in model.assertions if a.bound_value == 50)   # the token table
        assert source.for_assertion(attributor, vocab).module == "tok"
    assert nodes == {"cuda": "embedding_1", "cpu": "embedding_1"}


def test_kernel_ops_and_decomposed_names():
    assert source.kernel_ops("cpp_fused_index_mul_0") == ["index", "mul"]
    assert source.kernel_ops("triton_per_fused_add_arange_embedding_native_layer_norm_0")[-3:] == \
        ["native", "layer", "norm"]
    graph = [GraphNode("cross_entropy", "aten.cross_entropy_loss.default", stack_trace=_trace(9, "F.cross_entropy(a, b)")),
             GraphNode("mul", "aten.mul.Tensor")]
    model = Model("m", graph=graph)
    nodes, from_comment = source.Attributor(model).candidates("cpp_fused__log_softmax_nll_loss_forward_0")
    assert [n.name for n in nodes] == ["cross_entropy"] and not from_comment


def _trace(line: int, code: str) -> str:
    return (f'File "/src/model.py", line {line}, in forward\n    {code}\n'
            f'  File "/venv/lib/python3.11/site-packages/torch/nn/modules/sparse.py", line 189, in forward\n'
            f'    return F.embedding(')


def test_user_frame_skips_torch_frames():
    assert source.frame(_trace(12, "y = self.emb(x)")) == ("/src/model.py", 12, "y = self.emb(x)")
    assert source.frame(None) is None and source.frame("no frames here") is None


def test_same_op_twice_is_ambiguous_unless_kernel_order_decides():
    graph = [GraphNode("index", "aten.index.Tensor", ("a", "i"), stack_trace=_trace(3, "a[i]")),
             GraphNode("index_1", "aten.index.Tensor", ("b", "i"), stack_trace=_trace(4, "b[i]"))]
    one_kernel = Model("m", graph=graph, kernels={"cpp_fused_index_0": Kernel("cpp_fused_index_0", "cpp")})
    got = source.Attributor(one_kernel).attribute("cpp_fused_index_0", source.INDEX_OPS)
    assert got.ambiguous and got.node == "index" and "ambiguous" in got.describe()
    # Two kernels for two nodes: the n-th kernel of the op is the n-th node in graph order.
    two = Model("m", graph=graph, kernels={k: Kernel(k, "cpp") for k in ("cpp_fused_index_0", "cpp_fused_index_1")})
    got = source.Attributor(two).attribute("cpp_fused_index_1", source.INDEX_OPS)
    assert (got.node, got.line, got.ambiguous) == ("index_1", 4, False)


def test_json_text_and_inspect(tmp_path):
    pkg = require(FIXTURES / "pos_embedding.cpu.stripped.pt2")
    ep = str(FIXTURES / "pos_embedding.ep.pt2")
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, [str(pkg), "--exported-program", ep, "--format", "json"]).output)
    src = next(f["source"] for f in data["findings"] if f["code"] == "AOTI003")
    assert {k: src[k] for k in ("line", "module", "op")} == {"line": 90, "module": "pe", "op": "aten.embedding.default"}
    assert set(src) >= {"file", "line", "code", "module", "op"}
    assert all(f["source"] is None for f in data["findings"] if f["code"] == "AOTI002")
    text = runner.invoke(cli, [str(pkg), "--exported-program", ep]).output
    assert "source: `pe` (Embedding, 512 rows) indexed by `arange` at generate.py:90" in text
    plain = json.loads(runner.invoke(cli, [str(pkg), "--format", "json"]).output)
    assert all(f["source"] is None for f in plain["findings"])  # no exported program: nothing to say
    inspected = json.loads(runner.invoke(cli, ["inspect", str(pkg), "--exported-program", ep,
                                               "--format", "json"]).output)
    assert inspected["models"][0]["assertions"][0]["source"]["module"] == "pe"
    assert "source: `pe` (Embedding, 512 rows)" in runner.invoke(cli, ["inspect", str(pkg), "--exported-program", ep]).output


def test_exported_program_inside_the_package(tmp_path):
    """A package that carries its exported program (`<root>/models/model.json`) needs no option."""
    pkg = require(FIXTURES / "gather_dyn.cuda.stripped.pt2")
    with zipfile.ZipFile(FIXTURES / "gather_dyn.ep.pt2") as ep:
        model_json = next(ep.read(n) for n in ep.namelist() if n.endswith("models/model.json"))
    both = tmp_path / "gather_dyn.with_ep.pt2"
    with zipfile.ZipFile(pkg) as src, zipfile.ZipFile(both, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        root = src.namelist()[0].split("/")[0]
        dst.writestr(f"{root}/models/model.json", model_json)
    finding = next(f for f in _lint(both).findings if f.code == "AOTI001")
    assert finding.source is not None and finding.source.node == "index" and finding.source.line == 62
