"""Members whose bytes a check drops before linking (a CPU package's C++ kernels) are streamed
again afterwards (Archive.stream): the same lines and check texts as the bytes in hand, never
counted twice against the package's read limit."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.core import budget
from analyzer.parse import cppkernel
from analyzer.read import archive, layout

from conftest import FIXTURES

KERNEL_PACKAGES = ["real/bert.cpu.stripped.pt2", "stranger3/opt.cpu.stripped.pt2", "versions/2.8/pos_embedding.cpu.stripped.pt2",
                   "stranger/mixtral.cpu.stripped.pt2", "stranger16/segsum.cpu.stripped.pt2"]


def test_line_blocks_give_the_lines_of_a_split() -> None:
    """Blocks over chunks cut anywhere (a line longer than several chunks, a member ending with
    a newline or not, empty chunks) number and hold the lines `split(b"\\n")` gives."""
    rng = random.Random(3)
    for _ in range(300):
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 200)))
        if rng.random() < 0.2:
            data += b"x" * rng.randint(50, 400)  # a long line
        cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randint(0, 12))))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
        lines = []
        for first, block in layout._line_blocks(chunks):
            assert first == len(lines) + 1, (data, chunks)
            lines.extend(block.split(b"\n"))
        assert lines == data.split(b"\n"), (data, chunks)


@pytest.mark.parametrize("name", KERNEL_PACKAGES)
def test_streamed_check_texts_are_those_of_the_bytes(name: str) -> None:
    with archive.open_package(FIXTURES / name) as pkg:
        (kernels,) = [m.kernels for m in pkg.models]
        for member in kernels:
            data = pkg.read_bytes(member)
            read = pkg.bytes_read
            found = list(layout.scan_text(data))
            assert found and list(layout._streamed_checks(pkg, member)) == found
            assert pkg.bytes_read == read  # streamed again: not counted again
            # The lines of linked checks are passed over (not decoded), the others kept as they are.
            linked = {line for line, _ in found[::2]}
            rest = [(line, text) for line, text in found if line not in linked]
            assert list(layout.scan_text(data, skip=linked)) == rest
            assert list(layout._streamed_checks(pkg, member, linked)) == rest


def test_check_lines_are_numbered_from_the_first_given() -> None:
    data = b"int a;\nAOTI_TORCH_CHECK(x < 2, \"index out of bounds: x < 2\");\n\nTORCH_CHECK(y);"
    assert list(layout.scan_text(data)) == [(2, 'AOTI_TORCH_CHECK(x < 2, "index out of bounds: x < 2");'),
                                            (4, "TORCH_CHECK(y);")]
    assert list(layout.scan_text(data, 41, skip={42})) == [(44, "TORCH_CHECK(y);")]


def test_a_member_streamed_first_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "p.pt2"
    with zipfile.ZipFile(FIXTURES / KERNEL_PACKAGES[0]) as src, zipfile.ZipFile(path, "w") as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
    limits = archive.Limits()
    with archive.open_package(path, limits) as pkg:
        member = pkg.models[0].kernels[0]
        size = sum(len(chunk) for chunk in pkg.stream(member))
        assert pkg.bytes_read == size > 0
        assert len(pkg.read_bytes(member)) == size and pkg.bytes_read == size
    with archive.open_package(path, archive.Limits(max_total_bytes=size - 1)) as pkg:
        with pytest.raises(budget.ArchiveError, match="limit on bytes read from the whole package"):
            list(pkg.stream(pkg.models[0].kernels[0]))


def test_the_line_table_holds_no_text() -> None:
    lines = cppkernel.Lines(b"int a;\nint b;\n" * 1000)
    assert not any(isinstance(v, (bytes, bytearray, memoryview)) for v in vars(lines).values())
    assert lines.point(7) == (1, 0) and lines.location("k.cpp", 8).line == 2


@pytest.mark.parametrize("name", KERNEL_PACKAGES)
def test_kept_sources_hold_every_line_of_a_dropped_member(name: str) -> None:
    """The HTML report keeps every line of the model's sources: the kernels' too, read again."""
    path = FIXTURES / name
    (model,) = api.load(str(path), api.Options(keep_sources=True, pair=False)).models
    with zipfile.ZipFile(path) as z:
        for member in (i.filename for i in z.infolist() if i.filename.endswith(".kernel.cpp")):
            text = z.read(member).decode("utf-8", "replace").split("\n")
            assert model.source_lines[member] == {n: line.rstrip("\r") for n, line in enumerate(text, start=1)}


def test_kernels_decoded_one_by_one_read_as_the_whole_text() -> None:
    """pipeline._add_text_facts decodes each `extern "C"` piece of a member alone: cut at an ASCII
    text, the pieces decode (invalid bytes replaced) to the whole member's text, piece by piece."""
    from analyzer.app import pipeline

    rng = random.Random(5)
    alphabet = [b'extern "C" void k(', b"\n", b"a", b"\xe2", b"\x82", b"\xac", b"\xff", b"\xf0\x9f"]
    for _ in range(500):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        starts = [m.start() for m in pipeline._EXTERN.finditer(data)]
        pieces = [data[a:b].decode("utf-8", "replace") for a, b in zip(starts, starts[1:] + [len(data)])]
        whole = data.decode("utf-8", "replace")
        assert "".join(pieces) == whole[whole.find('extern "C"'):] if starts else not pieces, data
