"""The model constructor's tables read from the text (analyzer/parse/wrappertext.py) give the facts the
tree gives, on every committed package and on the edges where the text reading must stop."""

from __future__ import annotations

import types

import pytest

from analyzer.app import parsing
from analyzer.core import budget
from analyzer.parse import wrappertext, ts, wrapper
from analyzer.read import archive


def _both(data: bytes) -> tuple[wrapper.WrapperFacts, wrapper.WrapperFacts, wrappertext.WrapperText]:
    """(facts read with what the text gives, facts read from the whole tree, what the text gave),
    each through parsing.parse_bytes as a check parses a wrapper."""
    pkg = types.SimpleNamespace(deadline=budget.Deadline(120))
    text = wrappertext.WrapperText(200)
    fast = wrapper.parse(parsing.parse_bytes(pkg, "m.wrapper.cpp", data, text=text), "m.wrapper.cpp", 200, None, text)
    slow = wrapper.parse(parsing.parse_bytes(pkg, "m.wrapper.cpp", data), "m.wrapper.cpp", 200)
    return fast, slow, text


def _same(fast: wrapper.WrapperFacts, slow: wrapper.WrapperFacts) -> None:
    assert list(fast.inputs.items()) == list(slow.inputs.items())
    assert [(i, list(e.items())) for i, e in fast.constants.items()] == \
        [(i, list(e.items())) for i, e in slow.constants.items()]
    assert fast == slow


def test_text_tables_are_the_trees_on_every_package() -> None:
    from conftest import every_package

    read = lines = launches = 0
    for path in every_package():
        with archive.open_package(path) as pkg:
            for members in pkg.models:
                for member in members.wrappers[:1]:
                    data = pkg.read_bytes(member)
                    fast, slow, text = _both(data)
                    _same(fast, slow)
                    tables = text.tables
                    if text.launches is not None:
                        launches += len(text.launches.found)
                    if tables is not None and tables.span is not None:
                        read += 1
                        # The run reads every table line there is: none is left to the tree.
                        lines += data.count(b"_info_[", *tables.span)
                        assert data.count(b"constants_info_[", tables.span[1]) == 0, path
    assert read >= 100 and lines >= 10_000 and launches >= 3_000


CONSTRUCTOR = b'''
AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,
                                   std::optional<std::string> cubin_dir)
    : AOTInductorModelBase(2, 1, 3, device_str, std::move(cubin_dir), true) {
    inputs_info_[0].name = "arg1_1";
    inputs_info_[1].name = arg_name;
    constants_info_[0].name = "e_weight";
    constants_info_[0].dtype = static_cast<int32_t>(cached_torch_dtype_float32);
    constants_info_[0].from_folded = false;
    constants_info_[0].shape = {100, 16};
    constants_info_[0].stride = {16L, -1};
    constants_info_[0].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::Parameter);
    constants_info_[0].original_fqn = "e.weight";
    constants_info_[1].name = nullptr;
    constants_info_[1].shape = {};
    outputs_info_[0].name = "output0";
%s
    constants_info_[2].name = "after";
    constants_info_[2].shape = {4};
    constants_info_[1].original_fqn = "again";
    in_spec_ = R"([1, {"type": "builtins.tuple"}])";
}
'''

# Lines of shapes the text reading leaves to the tree: each ends the run there.
ENDS = [
    b"    constants_info_[1].shape = {N, 16};",
    b"    constants_info_[1].shape = 4;",
    b"    constants_info_[1].type = static_cast<int32_t>(Parameter);",
    b'    constants_info_[1].name = "a\\"b";',
    b"    constants_info_[1].dtype = int;",
    b"    constants_info_[1].dtype = (a);",
    b"    constants_info_[01].name = \"x\";",
    b"    constants_info_[1].name = \"x\"; // comment",
    b"    /* constants_info_[1].name = \"x\"; */",
    b"    constants_info_[1].name = \"caf\xc3\";",
    b"    update_constants_map(std::move(constants_map));",
]


@pytest.mark.parametrize("line", ENDS)
def test_a_line_of_another_shape_ends_the_run(line: bytes) -> None:
    data = CONSTRUCTOR % line
    fast, slow, text = _both(data)
    _same(fast, slow)
    tables = text.tables
    assert tables is not None and tables.span is not None
    assert data[tables.span[0]:tables.span[1]].endswith(b'outputs_info_[0].name = "output0";')
    assert tables.constants[0] == {"name": "e_weight", "shape": (100, 16), "type": "Parameter",
                                   "original_fqn": "e.weight"}
    assert tables.constants[1] == {"name": None, "shape": ()} and tables.inputs == {0: "arg1_1"}
    if not ts.parse(data)[0].root_node.has_error:  # (a syntax error may take the next line with it)
        assert fast.constants[2] == {"name": "after", "shape": (4,)} and fast.constants[1]["original_fqn"] == "again"


def test_a_whole_table_is_read_from_the_text() -> None:
    data = CONSTRUCTOR % b""
    fast, slow, text = _both(data)
    _same(fast, slow)
    tables = text.tables
    assert tables is not None and tables.span is not None
    assert data[tables.span[1]:].lstrip().startswith(b"in_spec_")
    assert fast.in_spec == '[1, {"type": "builtins.tuple"}]'


def test_no_table_where_the_body_does_not_open_with_one() -> None:
    for data in (CONSTRUCTOR.replace(b"true) {\n", b"true) { int x = 0;\n") % b"",
                 CONSTRUCTOR.replace(b"true) {\n", b"true) {\n    int x = 0;\n") % b"",
                 b"/*" + CONSTRUCTOR % b"" + b"*/"):
        fast, slow, text = _both(data)
        _same(fast, slow)
        assert text.tables is None or text.tables.span is None


# --- run_impl's launches ------------------------------------------------------------------------

RUN_IMPL = b'''
void AOTInductorModel::run_impl(AtenTensorHandle* input_handles, AtenTensorHandle* output_handles) {
    int64_t s27 = arg1_1_size[0];
    // Topologically Sorted Source Nodes: [embedding], Original ATen: [aten.embedding]
    call_triton_k0(buf0, arg1_1, s27, 2L*s27, this->device_idx_, stream, kernels, this->cubin_dir_);
    call_triton_k1(buf0, s27 , nullptr,  true);
    cpp_fused_k2((const float*)(arg1_1.data_ptr()), (float*)(buf0.data_ptr()), s27);
    auto buf2 = std::move(buf0);  // reuse
    call_triton_k3(buf2, &buf1_handle, (s27 + 1L));
    call_triton_k4(buf2, s27 ? s27 : 1L, -s27);
    call_triton_k5(buf2, static_cast<int64_t>(s27));
    if (s27 > 2)
        call_triton_k6(buf2);
    {
        call_triton_k7(buf2);
    }
    if (s27 > 4) {
        call_triton_k8(buf2);
    }
    int64_t s30 =
    call_triton_k9(buf2);
    s31;
    call_triton_k10(buf2); // a comment
    call_triton_k11(buf2); call_triton_k12(buf2);
    const char* m = "call_triton_k13(buf2);{";
    call_triton_k14(buf2, &buf3);
    call_triton_k15(buf2, & buf4, this);
%s
}
'''


def _launches(fast: wrapper.WrapperFacts) -> dict[str, tuple]:
    return {c.function: c.args for c in fast.calls}


def test_launches_read_from_the_text_are_the_trees() -> None:
    fast, slow, text = _both(RUN_IMPL % b"")
    _same(fast, slow)
    assert text.launches is not None
    read = [t.call.function for t in text.launches.found]
    # Read from the text: plain launches, data pointers, out-arguments, arguments parsed alone.
    assert read == ["call_triton_k0", "call_triton_k1", "cpp_fused_k2", "call_triton_k4", "call_triton_k14",
                    "call_triton_k15"]
    calls = {c.function: c for c in fast.calls}
    assert calls["call_triton_k0"].comment is not None and calls["call_triton_k0"].args[3] == "(2 * s27)"
    assert calls["cpp_fused_k2"].args == ("arg1_1", "buf0", "s27")
    assert calls["call_triton_k14"].outputs == ("buf3",) and calls["call_triton_k15"].outputs == ("buf4",)
    assert calls["call_triton_k4"].args[1:] == ("(s27 if s27 else 1)", "(-s27)")
    # Left to the tree: parentheses or `<` in an argument, a launch in a block, one with a comment
    # or another statement on its line; and launches in control flow, one continuing a declaration,
    # one in a string, which the tree does not take for launches either.
    assert {"call_triton_k3", "call_triton_k5", "call_triton_k7", "call_triton_k10", "call_triton_k11"} <= set(calls)
    assert not {"call_triton_k6", "call_triton_k8", "call_triton_k9", "call_triton_k13"} & set(calls)


@pytest.mark.parametrize("extra", [
    b"    /* call_triton_k20(buf2); */",           # a block comment: the whole body is the tree's
    b"#if 0\n    call_triton_k20(buf2);\n#endif",   # a directive
    b'    auto r = R"(call_triton_k20(buf2);)";',  # a raw string
    b"    x = 1'000;",                              # a digit separator
    b"    y = \"unterminated;",                     # a literal the scan cannot end
    b"    z = 1 \\\n        + 2;",                # a line continuation
])
def test_text_the_scan_cannot_count_leaves_every_launch_to_the_tree(extra: bytes) -> None:
    fast, slow, text = _both(RUN_IMPL % extra)
    _same(fast, slow)
    assert text.launches is None


def test_a_syntax_error_in_run_impl_parses_it_whole_again() -> None:
    fast, slow, text = _both(RUN_IMPL % b"    int64_t broken = (s27;\n    call_triton_k21(buf2);")
    _same(fast, slow)
    assert text.launches is None


def test_crlf_lines_and_locations() -> None:
    data = (RUN_IMPL % b"    call_triton_k22(buf2, s27);").replace(b"\n", b"\r\n")
    fast, slow, text = _both(data)
    _same(fast, slow)
    assert text.launches is not None and any(t.call.function == "call_triton_k22" for t in text.launches.found)
    located = {c.function: c.location for c in fast.calls}
    assert (located["call_triton_k22"].line, located["call_triton_k22"].column) == (28, 5)


def test_reading_launches_stops_at_the_package_deadline() -> None:
    import time

    # 300,000 launches each with an argument of its own, each parsed alone: seconds of work, which
    # the package's time budget stops (the reading polls it) as it stops the parse it replaces.
    body = b"".join(b"    call_triton_k(buf0, s1 + %dL);\n" % i for i in range(300_000))
    data = b"void AOTInductorModel::run_impl() {\n" + body + b"}\n"
    started = time.monotonic()
    with pytest.raises(budget.TimeLimitError), budget.polling(budget.Deadline(0.2, "hostile.pt2")):
        wrappertext.read_launches(data, "m.wrapper.cpp", data.index(b"{"), len(data) - 2, 200)
    assert time.monotonic() - started < 2


def test_the_functions_searched_for_a_syntax_error_are_the_returned_trees(monkeypatch) -> None:
    """Where run_impl was checked for a syntax error, the search of the tree's functions is handed
    on (the readers use it, not a second search); after a syntax error the tree is parsed again and
    nothing is handed on."""
    calls: list[object] = []
    search = ts.functions
    monkeypatch.setattr(ts, "functions", lambda root: calls.append(root) or search(root))
    pkg = types.SimpleNamespace(deadline=budget.Deadline(120))
    text = wrappertext.WrapperText(200)
    data = RUN_IMPL % b"    call_triton_k22(buf2, s27);"
    tree = parsing.parse_bytes(pkg, "m.wrapper.cpp", data, text=text)
    # (the other searches are of launch arguments parsed alone)
    wrappers = [root for root in calls if ts.span(root)[1] >= len(data) - 1]
    assert text.launches is not None and text.functions is not None and len(wrappers) == 1
    assert [ts.span(m["body"]) for m in text.functions] == [ts.span(m["body"]) for m in search(tree.root_node)]
    broken = wrappertext.WrapperText(200)
    parsing.parse_bytes(pkg, "m.wrapper.cpp", RUN_IMPL % b"    int64_t broken = (s27;\n    call_triton_k21(buf2);",
                        text=broken)
    assert broken.launches is None and broken.functions is None


def test_a_check_searches_the_wrappers_functions_once(monkeypatch) -> None:
    from pathlib import Path

    from analyzer.app import api

    calls: list[object] = []
    search, Text = ts.functions, wrappertext.WrapperText
    monkeypatch.setattr(ts, "functions", lambda root: calls.append(root) or search(root))
    made: list[wrappertext.WrapperText] = []
    monkeypatch.setattr(wrappertext, "WrapperText", lambda depth: made.append(text := Text(depth)) or text)
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "cuda" / "gpt2.cuda.stripped.pt2"
    api.load(str(fixture), api.Options(pair=False))
    assert len([root for root in calls if ts.span(root)[1] > 50_000]) == 1
    # Then let go: the nodes would keep the wrapper's tree alive until linking ends (+12 MB at 50 MB).
    assert len(made) == 1 and made[0].functions is None
