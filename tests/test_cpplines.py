"""C++ kernels read line by line (analyzer/parse/cpplines.py) give the facts of the same kernel
parsed whole, on every kernel of every committed package that holds C++ kernels; a kernel with a
line of another shape is parsed whole."""

from __future__ import annotations

import ast
import glob
import zipfile
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.parse import cppkernel, cpplines, ts
from analyzer.parse.kernels import KernelFacts

REPO = Path(__file__).resolve().parents[1]


def _packages() -> list[str]:
    out = []
    for path in sorted(glob.glob(str(REPO / "fixtures" / "**" / "*.pt2"), recursive=True)):
        if path.endswith(".ep.pt2"):
            continue
        with zipfile.ZipFile(path) as z:
            if any(n.endswith(".cpp") and b"extern \"C\"" in z.read(n) and b"cpp_fused" in z.read(n)
                   for n in z.namelist() if n.endswith(".cpp")):
                out.append(path)
    return out


def _shape(facts: KernelFacts) -> dict:
    def dump(value):
        if isinstance(value, ast.AST):
            return ast.dump(value)
        if isinstance(value, (list, tuple)):
            return [dump(v) for v in value]
        if isinstance(value, dict):
            return {k: dump(v) for k, v in value.items()}
        if hasattr(value, "__dataclass_fields__"):
            return {k: dump(getattr(value, k)) for k in value.__dataclass_fields__}
        return value
    fields = {k: getattr(facts, k) for k in facts.__dataclass_fields__ if k not in ("locate", "segments")}
    return dump(fields)


PACKAGES = _packages()


def test_there_are_packages_with_cpp_kernels():
    assert len(PACKAGES) > 100


@pytest.mark.parametrize("path", PACKAGES, ids=lambda p: str(Path(p).relative_to(REPO)))
def test_lines_read_as_the_tree(path, monkeypatch):
    compared = {"lines": 0, "tree": 0}

    def both(self, name, start, body, end):
        by_tree = self.by_tree(name, start, body, end)
        by_lines = self.by_lines(name, start, body, end)
        if by_lines is None:
            compared["tree"] += 1
            return by_tree
        assert _shape(by_lines) == _shape(by_tree), name
        for pos, _ in (d for defs in by_tree.defs.values() for d in defs):
            assert by_lines.locate(pos) == by_tree.locate(pos)
        compared["lines"] += 1
        return by_lines

    monkeypatch.setattr(cppkernel.Planned, "_apart", both)
    api.lint(path, api.Options(pair=False), keep_going=True)
    assert compared["lines"] + compared["tree"] > 0  # its kernels were read apart, so compared


@pytest.mark.parametrize("name", ["real/bert", "stranger3/opt", "stranger/mixtral"])
def test_real_kernels_are_read_by_lines(name, monkeypatch):
    read = []
    by_lines = cppkernel.Planned.by_lines

    def counted(self, *args):
        found = by_lines(self, *args)
        read.append(found is not None)
        return found

    monkeypatch.setattr(cppkernel.Planned, "by_lines", counted)
    api.lint(str(REPO / "fixtures" / f"{name}.cpu.stripped.pt2"), api.Options(pair=False), keep_going=True)
    # BERT's 4 kernels, 9 of OPT's 10 and 12 of Mixtral's 14 (the others hold a statement over several
    # lines, or a line that tree-sitter reads alone only with an error: `decltype(tmp0)(0)`).
    assert sum(read) >= {"real/bert": 4, "stranger3/opt": 9, "stranger/mixtral": 12}[name] and read


def _read(text: bytes):
    data = b'extern "C" void cpp_fused_0(const float* in_ptr0, float* out_ptr0, const int64_t ks0)\n{\n' + text + b"}\n"
    body, end = data.index(b"{") + 1, data.rindex(b"}")
    return cpplines.read("cpp_fused_0", data, 0, body, end, "k.cpp", 200, cppkernel.Lines(data),
                         lambda: ts.parse(data)[0])


LOOP = (b"    #pragma omp parallel\n    {\n        #pragma omp for\n"
        b"        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(1L))\n"
        b"        {\n            auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];\n"
        b"            AOTI_TORCH_CHECK((0 <= tmp0) & (tmp0 < 64L), \"index out of bounds: 0 <= tmp0 < 64L\");\n"
        b"            out_ptr0[static_cast<int64_t>(x0)] = tmp0;\n        }\n    }\n")


def test_a_kernel_of_plain_lines_is_read_by_lines():
    facts = _read(LOOP)
    assert facts is not None and facts.params == ("in_ptr0", "out_ptr0", "ks0")
    assert [a.message for a in facts.assertions] == ["index out of bounds: 0 <= tmp0 < 64L"]
    assert facts.assertions[0].parallel is True and facts.assertions[0].space == "(ks0)"
    assert list(facts.extents) == ["x0"] and facts.extents["x0"][0][2] == "ks0"
    assert [s.pointer for s in facts.stores] == ["out_ptr0"] and facts.stores[0].value is not None


@pytest.mark.parametrize("text", [
    b"    auto tmp0 = [&]\n    {\n        return 1;\n    }\n    ;\n",       # a lambda over several lines
    b"    auto tmp0 = in_ptr0[0]; // a comment after a statement\n",
    b"    #if 1\n    auto tmp0 = in_ptr0[0];\n    #endif\n",                      # a preprocessor block
    b"    for(int64_t x0=0; x0<ks0; x0+=1)\n        out_ptr0[x0] = 1;\n",         # a loop body without braces
    b"    {\n    auto tmp0 = in_ptr0[0];\n",                                      # unbalanced
    b"    auto tmp0 = (in_ptr0[0];\n",                                             # a syntax error
    b"    auto tmp0 = " + b"in_ptr0[0] + " * 100 + b"1;\n",                        # a line too long to parse here
])
def test_a_kernel_with_a_line_of_another_shape_is_parsed_whole(text):
    assert _read(LOOP) is not None
    assert _read(LOOP + text) is None


def test_the_line_table_gives_tree_sitters_points():
    import random
    import re

    rng = random.Random(1)
    for n in (0, 1, 4095, 4096, 4097, 20_000):
        for alphabet in (b"ab\n", b"abcdefgh", b"\n"):
            data = bytes(rng.choice(alphabet) for _ in range(n))
            table = cppkernel.Lines(data)
            starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]
            for byte in {0, n, *(rng.randint(0, n) for _ in range(40))}:
                row = max(i for i, s in enumerate(starts) if s <= byte)
                assert table.point(byte) == (row, byte - starts[row]), (n, alphabet, byte)
    data = b"int a;\nint b;\n  int c;\n"
    assert cppkernel.Lines(data).point(data.index(b"int c")) == (2, 2)


def test_a_member_of_distinct_lines_goes_back_to_whole_parses():
    data = b"".join(b'extern "C" void cpp_fused_%d(const float* in_ptr0, float* out_ptr0)\n{\n' % k
                    + b"".join(b"    auto tmp%d = in_ptr0[%d] * %d;\n" % (i, k * 1000 + i, i) for i in range(100))
                    + b"}\n" for k in range(30))
    whole = ts.parse(data)[0]
    apart = cppkernel.Apart(lines=cppkernel.Lines(data), parse=lambda *args: whole, data=data)
    planned = cppkernel.Planned("k.cpp", 200, apart.lines, apart)
    read = []
    for k in range(30):
        start = data.index(b'extern "C" void cpp_fused_%d(' % k)
        body = data.index(b"{", start) + 1
        read.append(planned.by_lines(f"cpp_fused_{k}", start, body, data.index(b"\n}\n", body) + 1) is not None)
    # Every line new: read by lines until 2,000 lines were read, then each kernel parsed whole.
    assert read == [True] * 20 + [False] * 10
    assert planned.reads.new == planned.reads.lines == 2000 and not planned.reads.worth_it()
    assert cpplines.Reads(lines=4000, new=1900).worth_it() and cpplines.Reads(lines=1999, new=1999).worth_it()


def test_one_long_kernel_of_distinct_lines_goes_back_to_its_whole_parse():
    text = b"".join(b"    auto tmp%d = in_ptr0[%d] * %d;\n" % (i, 7_000_000 + i, i) for i in range(5000))
    reads = cpplines.Reads()
    data = b'extern "C" void cpp_fused_0(const float* in_ptr0, float* out_ptr0, const int64_t ks0)\n{\n' + text + b"}\n"
    body, end = data.index(b"{") + 1, data.rindex(b"}")
    assert cpplines.read("cpp_fused_0", data, 0, body, end, "k.cpp", 200, cppkernel.Lines(data),
                         lambda: ts.parse(data)[0], reads) is None
    assert reads.new == 2048 and not reads.worth_it()   # stopped at the second check past 2,000 lines


def test_divisions_are_those_of_a_walk_of_every_node_of_every_definition(monkeypatch):
    """cppfacts keeps each distinct expression's division nodes: a kernel asks only those, and finds
    what asking every node of every definition finds (on every tenth package with C++ kernels)."""
    from analyzer.expr.values import Values, division
    from analyzer.parse import cppfacts

    original, compared = cppfacts.divisions, {"kernels": 0, "divisions": 0}

    def both(facts, locate, dividing):
        before = len(facts.divisions)
        original(facts, locate, dividing)
        values = Values(facts)
        walked = [(found[:2], pos, found[2], found[3]) for defs in facts.defs.values() for pos, expr in defs
                  for sub in ast.walk(expr) if (found := division(values, sub, pos, index_math=True)) is not None]
        kept = [((d.divisor, d.divisor_expr), d.integer, d.index_math) for d in facts.divisions[before:]]
        assert kept == [(w[0], w[2], w[3]) for w in walked]
        compared["kernels"] += 1
        compared["divisions"] += len(walked)

    for module in (cpplines, cppkernel):
        monkeypatch.setattr(module, "divisions", both)
    for path in PACKAGES[::10]:
        api.load(path, api.Options(pair=False))
    assert compared["kernels"] > 100 and compared["divisions"] > 20, compared
