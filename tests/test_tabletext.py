"""The model constructor's tables read from the text (analyzer/parse/tabletext.py) give the facts the
tree gives, on every committed package and on the edges where the text reading must stop."""

from __future__ import annotations

import pytest

from analyzer.parse import tabletext, ts, unread, wrapper
from analyzer.read import archive


def _both(data: bytes) -> tuple[wrapper.WrapperFacts, wrapper.WrapperFacts, tabletext.Tables | None]:
    """(facts read with the tables from the text, facts read from the whole tree, the tables)."""
    constructors: list[tuple[int, int]] = []
    exclude = unread.unread_bodies(data, None, None, constructors)
    tables = tabletext.read_tables(data, *constructors[0]) if constructors else None
    spans = sorted(exclude + [tables.span]) if tables is not None and tables.span else exclude
    fast = wrapper.parse(ts.parse(data, None, spans)[0], "m.wrapper.cpp", tables=tables)
    slow = wrapper.parse(ts.parse(data, None, exclude)[0], "m.wrapper.cpp")
    return fast, slow, tables


def _same(fast: wrapper.WrapperFacts, slow: wrapper.WrapperFacts) -> None:
    assert list(fast.inputs.items()) == list(slow.inputs.items())
    assert [(i, list(e.items())) for i, e in fast.constants.items()] == \
        [(i, list(e.items())) for i, e in slow.constants.items()]
    assert fast == slow


def test_text_tables_are_the_trees_on_every_package() -> None:
    from conftest import every_package

    read = lines = 0
    for path in every_package():
        with archive.open_package(path) as pkg:
            for members in pkg.models:
                for member in members.wrappers[:1]:
                    data = pkg.read_bytes(member)
                    fast, slow, tables = _both(data)
                    _same(fast, slow)
                    if tables is not None and tables.span is not None:
                        read += 1
                        # The run reads every table line there is: none is left to the tree.
                        lines += data.count(b"_info_[", *tables.span)
                        assert data.count(b"constants_info_[", tables.span[1]) == 0, path
    assert read >= 100 and lines >= 10_000


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
    fast, slow, tables = _both(data)
    _same(fast, slow)
    assert tables is not None and tables.span is not None
    assert data[tables.span[0]:tables.span[1]].endswith(b'outputs_info_[0].name = "output0";')
    assert tables.constants[0] == {"name": "e_weight", "shape": (100, 16), "type": "Parameter",
                                   "original_fqn": "e.weight"}
    assert tables.constants[1] == {"name": None, "shape": ()} and tables.inputs == {0: "arg1_1"}
    if not ts.parse(data)[0].root_node.has_error:  # (a syntax error may take the next line with it)
        assert fast.constants[2] == {"name": "after", "shape": (4,)} and fast.constants[1]["original_fqn"] == "again"


def test_a_whole_table_is_read_from_the_text() -> None:
    data = CONSTRUCTOR % b""
    fast, slow, tables = _both(data)
    _same(fast, slow)
    assert tables is not None and tables.span is not None
    assert data[tables.span[1]:].lstrip().startswith(b"in_spec_")
    assert fast.in_spec == '[1, {"type": "builtins.tuple"}]'


def test_no_table_where_the_body_does_not_open_with_one() -> None:
    for data in (CONSTRUCTOR.replace(b"true) {\n", b"true) { int x = 0;\n") % b"",
                 CONSTRUCTOR.replace(b"true) {\n", b"true) {\n    int x = 0;\n") % b"",
                 b"/*" + CONSTRUCTOR % b"" + b"*/"):
        fast, slow, tables = _both(data)
        _same(fast, slow)
        assert tables is None or tables.span is None
