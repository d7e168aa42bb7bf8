"""Hostile and broken package inputs, generated at test time (no binary is ever committed).

`CASES` is the corpus: each `Case` builds one input under a folder it is given (pytest's tmp_path)
and says what a safe reader must do with it: refuse it when opening (`open_error`), refuse one
member when reading it (`read_error`), or read it cleanly (neither). Expected errors are substrings
of the one-line `ArchiveError` message. The same corpus feeds tests/test_archive.py (the reader) and
tests/test_hostile.py (the whole tool).

Most archives are written by `write_raw_zip`, a small zip writer that puts whatever the case wants
into the headers (lying sizes, link bits, encryption flags, unknown methods), which zipfile refuses
to write.
"""

from __future__ import annotations

import bz2
import functools
import io
import os
import random
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from analyzer.read.archive import Limits

SHARED_PT2 = Path(__file__).resolve().parents[1].parent / "shared" / "pt2"
BASE_PACKAGE = SHARED_PT2 / "gather_dyn.cpu.stripped.pt2"
MODEL = "pkg/data/aotinductor/model/"
BOMB_MIB = 1536  # 1.5 GiB of zeros, about 1.6 MB deflated


@dataclass(frozen=True)
class RawMember:
    """One member exactly as written: `payload` is stored as is (compress it yourself for method 8)."""

    name: str | bytes
    payload: bytes = b""
    method: int = zipfile.ZIP_STORED
    crc: int | None = None          # None: crc32 of the payload (right for stored members)
    file_size: int | None = None    # inflated size in the central directory; None: len(payload)
    local_size: int | None = None   # inflated size in the local header; None: same as file_size
    external_attr: int = (stat.S_IFREG | 0o644) << 16
    flags: int = 0


_LOCAL = struct.Struct("<4s2B4HL2L2H")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_EOCD = struct.Struct("<4s4H2LH")
_DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01


def write_raw_zip(path: Path, members: list[RawMember]) -> Path:
    """Write `members` as a zip with the headers they ask for; zip64 end records past 65534 members."""
    out = io.BytesIO()
    central = io.BytesIO()
    for m in members:
        name = m.name.encode("utf-8", "surrogateescape") if isinstance(m.name, str) else m.name
        crc = zlib.crc32(m.payload) if m.crc is None else m.crc
        size = len(m.payload) if m.file_size is None else m.file_size
        local_size = size if m.local_size is None else m.local_size
        offset = out.tell()
        out.write(_LOCAL.pack(b"PK\x03\x04", 20, 0, m.flags, m.method, 0, _DOS_DATE, crc,
                              len(m.payload), local_size, len(name), 0))
        out.write(name)
        out.write(m.payload)
        central.write(_CENTRAL.pack(b"PK\x01\x02", 20, 3, 20, 0, m.flags, m.method, 0, _DOS_DATE, crc,
                                    len(m.payload), size, len(name), 0, 0, 0, 0, m.external_attr, offset))
        central.write(name)
    cd_offset, cd = out.tell(), central.getvalue()
    out.write(cd)
    count = len(members)
    if count > 0xFFFE:
        rec_offset = out.tell()
        out.write(_EOCD64.pack(b"PK\x06\x06", _EOCD64.size - 12, 45, 45, 0, 0, count, count, len(cd), cd_offset))
        out.write(_EOCD64_LOCATOR.pack(b"PK\x06\x07", 0, rec_offset, 1))
        count = 0xFFFF
    out.write(_EOCD.pack(b"PK\x05\x06", 0, 0, count, count, len(cd), cd_offset, 0))
    path.write_bytes(out.getvalue())
    return path


@functools.lru_cache(maxsize=4)
def deflate_zeros(mib: int) -> tuple[bytes, int]:
    """Raw deflate of `mib` MiB of zeros and their crc32, built in milliseconds.

    After a full flush the compressor starts afresh, so one compressed MiB repeats verbatim: the
    payload is that block `mib` times plus the final empty block. Only the crc walks all the bytes.
    """
    zeros = bytes(1 << 20)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = comp.compress(zeros) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(zeros) + comp.flush(zlib.Z_FULL_FLUSH)
    payload = first + block * (mib - 1) + comp.flush()
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return payload, crc


def real_members(package: Path = BASE_PACKAGE) -> list[tuple[str, bytes]]:
    """(name, bytes) of every member of a trusted real package, in archive order."""
    with zipfile.ZipFile(package) as zf:
        return [(info.filename, zf.read(info)) for info in zf.infolist()]


def _model_files(wrapper: bytes = b"// wrapper\nvoid AOTInductorModel::run_impl() {}\n") -> list[RawMember]:
    # The wrapper defines run_impl: a package whose source defines none is refused as a layout
    # that is not understood (exit 2), which is not what these cases are about.
    return [
        RawMember(MODEL + "abc.wrapper.cpp", wrapper),
        RawMember(MODEL + "abc.wrapper_metadata.json", b'{"AOTI_DEVICE_KEY": "cpu"}'),
        RawMember("pkg/archive_format", b"pt2"),
    ]


def _real_with(dest: Path, name: str, change: Callable[[str, bytes], list[RawMember]]) -> Path:
    """The base package rewritten through `change(name, data) -> members` for each member."""
    members: list[RawMember] = []
    for member, data in real_members():
        members += change(member, data)
    return write_raw_zip(dest / name, members)


def _wrapper_of(name: str) -> bool:
    return name.endswith(".wrapper.cpp")


# --- builders: each takes the folder to write into and returns the path to analyze -------------


def _bomb(dest: Path) -> Path:
    payload, crc = deflate_zeros(BOMB_MIB)
    bomb = RawMember(MODEL + "abc.wrapper.cpp", payload, zipfile.ZIP_DEFLATED, crc, BOMB_MIB << 20)
    return write_raw_zip(dest / "bomb.pt2", [bomb, *_model_files()[1:]])


def _bomb_lying_small(dest: Path) -> Path:
    # The header claims 4 KiB: zipfile stops inflating there and the crc cannot match.
    payload, crc = deflate_zeros(BOMB_MIB)
    bomb = RawMember(MODEL + "abc.wrapper.cpp", payload, zipfile.ZIP_DEFLATED, crc, 4096)
    return write_raw_zip(dest / "bomb_small.pt2", [bomb, *_model_files()[1:]])


def _bombs_over_total(dest: Path) -> Path:
    # Four 2 MiB kernels under a 2 MiB per-member and 5 MiB total limit: the third read is refused.
    payload, crc = deflate_zeros(2)
    kernels = [RawMember(f"{MODEL}k{i}.kernel.cpp", payload, zipfile.ZIP_DEFLATED, crc, 2 << 20) for i in range(4)]
    return write_raw_zip(dest / "total.pt2", [*_model_files(), *kernels])


def _header_lies_large(dest: Path) -> Path:
    def change(name: str, data: bytes) -> list[RawMember]:
        return [RawMember(name, data, file_size=len(data) + 100 if _wrapper_of(name) else None)]
    return _real_with(dest, "lies_large.pt2", change)


def _local_header_lies(dest: Path) -> Path:
    # Only the local header is wrong; readers go by the central directory, as torch's miniz does.
    def change(name: str, data: bytes) -> list[RawMember]:
        return [RawMember(name, data, local_size=7 if _wrapper_of(name) else None)]
    return _real_with(dest, "lies_local.pt2", change)


def _truncated(fraction: float) -> Callable[[Path], Path]:
    def build(dest: Path) -> Path:
        data = BASE_PACKAGE.read_bytes()
        cut = len(data) - 1 if fraction >= 1 else int(len(data) * fraction)
        path = dest / f"truncated_{fraction}.pt2"
        path.write_bytes(data[:cut])
        return path
    return build


def _central_directory_corrupt(dest: Path) -> Path:
    data = bytearray(BASE_PACKAGE.read_bytes())
    at = data.find(b"PK\x01\x02")
    data[at:at + 4] = b"XX\x01\x02"
    path = dest / "cd_corrupt.pt2"
    path.write_bytes(bytes(data))
    return path


def _member_data_corrupt(dest: Path) -> Path:
    def change(name: str, data: bytes) -> list[RawMember]:
        if _wrapper_of(name):
            crc = zlib.crc32(data)
            data = data[:1000] + bytes(b ^ 0xFF for b in data[1000:1010]) + data[1010:]
            return [RawMember(name, data, crc=crc)]
        return [RawMember(name, data)]
    return _real_with(dest, "data_corrupt.pt2", change)


def _deflate_stream_corrupt(dest: Path) -> Path:
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    text = b"".join(str(i).encode() + b" garbage\n" for i in range(5000))
    payload = bytearray(raw.compress(text) + raw.flush())
    payload[10:20] = b"\xff" * 10
    wrapper = RawMember(MODEL + "abc.wrapper.cpp", bytes(payload), zipfile.ZIP_DEFLATED, zlib.crc32(text), len(text))
    return write_raw_zip(dest / "deflate_corrupt.pt2", [wrapper, *_model_files()[1:]])


def _zip64(dest: Path) -> Path:
    path = dest / "zip64.pt2"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in real_members():
            with zf.open(name, "w", force_zip64=True) as out:
                out.write(data)
    return path


def _prepended_junk(dest: Path) -> Path:
    path = dest / "prepended.pt2"
    path.write_bytes(b"#!/bin/sh\nexit 0\n" * 64 + BASE_PACKAGE.read_bytes())
    return path


def _symlink_member(dest: Path) -> Path:
    link = RawMember(MODEL + "abc.wrapper.cpp", b"/etc/passwd", external_attr=(stat.S_IFLNK | 0o777) << 16)
    return write_raw_zip(dest / "symlink.pt2", [link, *_model_files()[1:]])


def _named(name: str | bytes, flags: int = 0) -> Callable[[Path], Path]:
    def build(dest: Path) -> Path:
        extra = RawMember(name, b"evil", flags=flags)
        return write_raw_zip(dest / "named.pt2", [*_model_files(), extra])
    return build


def _duplicates(name: str = MODEL + "abc.wrapper.cpp") -> Callable[[Path], Path]:
    def build(dest: Path) -> Path:
        members = [*_model_files(), RawMember(name, b"// first\n"), RawMember(name, b"// second\n")]
        return write_raw_zip(dest / "duplicates.pt2", members)
    return build


def _duplicates_in_case() -> Callable[[Path], Path]:
    def build(dest: Path) -> Path:
        members = [*_model_files(), RawMember(MODEL + "def.wrapper.cpp", b"// first\n"),
                   RawMember(MODEL + "DEF.wrapper.cpp", b"// second\n")]
        return write_raw_zip(dest / "case.pt2", members)
    return build


def _non_utf8_wrapper(dest: Path) -> Path:
    def change(name: str, data: bytes) -> list[RawMember]:
        if _wrapper_of(name):
            data = b"\xff\xfe\x80 latin-1 caf\xe9\n" + data + b"\n// \xc3\x28 \xed\xa0\x80\n"
        return [RawMember(name, data)]
    return _real_with(dest, "non_utf8.pt2", change)


def _with_flags(flags: int = 0, method: int = zipfile.ZIP_STORED, payload: bytes | None = None) -> Callable[[Path], Path]:
    def build(dest: Path) -> Path:
        text = b"// wrapper\n" * 100
        wrapper = RawMember(MODEL + "abc.wrapper.cpp", text if payload is None else payload, method,
                            zlib.crc32(text), len(text), flags=flags)
        return write_raw_zip(dest / "flags.pt2", [wrapper, *_model_files()[1:]])
    return build


def _bytes_file(name: str, data: bytes) -> Callable[[Path], Path]:
    def build(dest: Path) -> Path:
        path = dest / name
        path.write_bytes(data)
        return path
    return build


def _zip_of(members: list[tuple[str, bytes]], name: str = "plain.pt2") -> Callable[[Path], Path]:
    def build(dest: Path) -> Path:
        path = dest / name
        with zipfile.ZipFile(path, "w") as zf:
            for member, data in members:
                zf.writestr(member, data)
        return path
    return build


def _too_many_members(dest: Path) -> Path:
    filler = [RawMember(f"pkg/extra/{i}") for i in range(100_001)]
    return write_raw_zip(dest / "many.pt2", [*_model_files(), *filler])


def write_overlap_bomb(path: Path, names: list[str], inflated: bytes, tail: list[RawMember] = ()) -> Path:
    """The non-recursive zip bomb (Fifield's "quoted overlap"): every member's deflate stream starts
    with a stored block quoting the next member's local header, and all of them end in one shared
    compressed body. Each member is valid and within its own limit; together they inflate to
    len(names) * len(inflated) from one copy. `tail` members follow, written normally."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    kernel = comp.compress(inflated) + comp.flush()
    encoded = [n.encode() for n in names]
    headers: list[bytes] = [b""] * len(names)
    content_crc, content_len, packed_len = zlib.crc32(inflated), len(inflated), len(kernel)
    for i in reversed(range(len(names))):  # a header holds the crc of everything after it
        headers[i] = _LOCAL.pack(b"PK\x03\x04", 20, 0, 0, zipfile.ZIP_DEFLATED, 0, _DOS_DATE, content_crc,
                                 packed_len, content_len, len(encoded[i]), 0) + encoded[i]
        content_crc = zlib.crc32(inflated, zlib.crc32(b"".join(headers[i:])))
        content_len += len(headers[i])
        packed_len += len(headers[i]) + 5
    out = io.BytesIO()
    offsets = []
    for i, header in enumerate(headers):
        offsets.append(out.tell())
        out.write(header)
        if i + 1 < len(headers):  # a non-final stored block whose bytes are the next local header
            n = len(headers[i + 1])
            out.write(struct.pack("<BHH", 0, n, n ^ 0xFFFF))
    out.write(kernel)
    central = io.BytesIO()
    for i, header in enumerate(headers):
        crc, csize, usize = struct.unpack_from("<3L", header, 14)
        central.write(_CENTRAL.pack(b"PK\x01\x02", 20, 3, 20, 0, 0, zipfile.ZIP_DEFLATED, 0, _DOS_DATE, crc,
                                    csize, usize, len(encoded[i]), 0, 0, 0, 0,
                                    (stat.S_IFREG | 0o644) << 16, offsets[i]))
        central.write(encoded[i])
    for m in tail:
        name = m.name.encode() if isinstance(m.name, str) else m.name
        offset = out.tell()
        out.write(_LOCAL.pack(b"PK\x03\x04", 20, 0, 0, 0, 0, _DOS_DATE, zlib.crc32(m.payload),
                              len(m.payload), len(m.payload), len(name), 0) + name + m.payload)
        central.write(_CENTRAL.pack(b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, _DOS_DATE, zlib.crc32(m.payload),
                                    len(m.payload), len(m.payload), len(name), 0, 0, 0, 0, m.external_attr, offset))
        central.write(name)
    cd_offset, cd = out.tell(), central.getvalue()
    out.write(cd)
    count = len(names) + len(tail)
    out.write(_EOCD.pack(b"PK\x05\x06", 0, 0, count, count, len(cd), cd_offset, 0))
    path.write_bytes(out.getvalue())
    return path


def _overlap_bomb(dest: Path, members: int = 10, mib: int = 64) -> Path:
    names = [f"{MODEL}k{i}.kernel.cpp" for i in range(members)]
    return write_overlap_bomb(dest / "overlap.pt2", names, b"(" * 16 + b"a<b," * (mib << 18), _model_files())


def _shared_header(dest: Path) -> Path:
    """Two central entries pointing at one local header (the simplest overlap)."""
    path = write_raw_zip(dest / "shared.pt2", _model_files())
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02") + 4)
    struct.pack_into("<L", data, at + 42, 0)  # the second entry's header offset -> the first's
    path.write_bytes(bytes(data))
    return path


def extract_real(dest: Path, package: Path = BASE_PACKAGE) -> Path:
    """Extract a trusted real package under `dest`; returns its root folder."""
    out = dest / "extracted"
    with zipfile.ZipFile(package) as zf:
        zf.extractall(out)
        root = zf.namelist()[0].split("/")[0]
    return out / root


def _extracted_root(dest: Path) -> Path:
    return extract_real(dest)


def _extracted_parent(dest: Path) -> Path:
    return extract_real(dest).parent


def _dir_symlinks_outside(dest: Path) -> Path:
    root = extract_real(dest)
    secret = dest / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("outside the package\n")
    model = root / "data" / "aotinductor" / "model"
    wrapper = next(model.glob("*.wrapper.cpp"))
    wrapper.unlink()
    wrapper.symlink_to(secret)
    (model / "escape").symlink_to(dest / "outside", target_is_directory=True)
    (root / "up").symlink_to("../..", target_is_directory=True)
    return root


def _dir_data_symlink(dest: Path) -> Path:
    # The package's data/ folder itself is a link to a real package elsewhere: never followed.
    elsewhere = extract_real(dest)
    root = dest / "linked"
    root.mkdir()
    (root / "data").symlink_to(elsewhere / "data", target_is_directory=True)
    return root


def _dir_too_deep(dest: Path) -> Path:
    root = extract_real(dest)
    deep = root / "data" / "aotinductor" / "model"
    for i in range(40):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("deep\n")
    return root


def _dir_with_fifo(dest: Path) -> Path:
    root = extract_real(dest)
    os.mkfifo(root / "data" / "aotinductor" / "model" / "pipe.wrapper_metadata.json")
    return root


def _dir_two_packages(dest: Path) -> Path:
    parent = dest / "two"
    for label in ("a", "b"):
        model = parent / label / "data" / "aotinductor" / "model"
        model.mkdir(parents=True)
        (model / "x.wrapper.cpp").write_text("// x\n")
    return parent


def _dir_non_utf8_name(dest: Path) -> Path:
    root = extract_real(dest)
    odd = os.path.join(os.fsencode(root / "data" / "aotinductor" / "model"), b"odd\xff\nname.json")
    with open(odd, "wb") as out:
        out.write(b"{}")
    return root


def _dir_case_colliding(dest: Path) -> Path:
    """A second wrapper whose name differs from the real one only in case."""
    root = extract_real(dest)
    model = root / "data" / "aotinductor" / "model"
    wrapper = next(model.glob("*.wrapper.cpp"))
    (model / wrapper.name.upper().replace(".WRAPPER.CPP", ".wrapper.cpp")).write_bytes(b"// not what runs\n")
    return root


def _dir_sparse_huge(dest: Path) -> Path:
    # A 1.5 GiB wrapper that costs no disk: a sparse file.
    root = extract_real(dest)
    wrapper = next((root / "data" / "aotinductor" / "model").glob("*.wrapper.cpp"))
    with open(wrapper, "r+b") as out:
        out.truncate(BOMB_MIB << 20)
    return root


def _empty_dir(dest: Path) -> Path:
    path = dest / "empty"
    path.mkdir()
    return path


def _fifo_path(dest: Path) -> Path:
    path = dest / "fifo.pt2"
    os.mkfifo(path)
    return path


# --- the corpus ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One hostile input and what a safe reader must do with it."""

    name: str
    build: Callable[[Path], Path]
    open_error: str | None = None        # substring of the ArchiveError that open_package raises
    read_error: str | None = None        # substring of the ArchiveError that reading `bad_member` raises
    bad_member: str | tuple[str, ...] = ".wrapper.cpp"  # suffix(es) of the members whose reads fail
    limits: Limits | None = None
    real: bool = False                   # built from the shared real packages


CASES: list[Case] = [
    Case("deflate_bomb", _bomb, read_error="past the 256 MiB per-member limit"),
    Case("bomb_header_lies_small", _bomb_lying_small, read_error="Bad CRC-32"),
    Case("bombs_over_total", _bombs_over_total, read_error="limit on bytes read from the whole package",
         bad_member=("k2.kernel.cpp", "k3.kernel.cpp"), limits=Limits(max_member_bytes=2 << 20, max_total_bytes=5 << 20)),
    Case("header_lies_large", _header_lies_large, read_error="but its header says", real=True),
    Case("local_header_lies", _local_header_lies, real=True),
    Case("truncated_10pct", _truncated(0.1), open_error="not a zip file", real=True),
    Case("truncated_50pct", _truncated(0.5), open_error="not a zip file", real=True),
    Case("truncated_90pct", _truncated(0.9), open_error="not a zip file", real=True),
    Case("truncated_last_byte", _truncated(1.0), open_error="not a zip file", real=True),
    Case("central_directory_corrupt", _central_directory_corrupt, open_error="corrupt zip archive", real=True),
    Case("member_data_corrupt", _member_data_corrupt, read_error="Bad CRC-32", real=True),
    Case("deflate_stream_corrupt", _deflate_stream_corrupt, read_error="cannot read member"),
    Case("zip64", _zip64, real=True),
    Case("prepended_junk", _prepended_junk, real=True),
    Case("symlink_member", _symlink_member, read_error="symbolic link"),
    Case("dotdot_name", _named("../evil"), open_error="escapes the archive root"),
    Case("dotdot_inside_name", _named("pkg/data/../../evil"), open_error="escapes the archive root"),
    Case("backslash_dotdot_name", _named("..\\..\\evil"), open_error="escapes the archive root"),
    Case("absolute_name", _named("/etc/evil"), open_error="escapes the archive root"),
    Case("drive_name", _named("C:/evil"), open_error="escapes the archive root"),
    Case("newline_dotdot_name", _named("../ev\nil\r"), open_error="escapes the archive root"),
    Case("bad_utf8_name", _named(b"pkg/\xff\xfe.txt", flags=0x800), open_error="corrupt zip archive"),
    Case("cp437_name", _named(b"pkg/caf\x82.txt")),
    Case("duplicate_names", _duplicates(), open_error="duplicate member"),
    Case("duplicate_newline_names", _duplicates("pkg/a\nb"), open_error="duplicate member"),
    Case("duplicate_after_normalizing", _named("pkg//archive_format"), open_error="duplicate member"),
    # Extracted on a case-insensitive file system, one of two such members replaces the other.
    Case("case_colliding_wrappers", _duplicates_in_case(), open_error="differ only in case"),
    Case("case_colliding_other_members", _named("pkg/Archive_Format"), open_error="differ only in case"),
    Case("non_utf8_wrapper", _non_utf8_wrapper, real=True),
    Case("encrypted_member", _with_flags(flags=0x1), read_error="encrypted"),
    Case("bzip2_member", _with_flags(method=zipfile.ZIP_BZIP2, payload=bz2.compress(b"x" * 1000)),
         read_error="unsupported compression method 12"),
    Case("unknown_compression", _with_flags(method=99), read_error="unsupported compression method 99"),
    Case("empty_file", _bytes_file("empty.pt2", b""), open_error="empty file"),
    Case("random_bytes", _bytes_file("random.pt2", random.Random(5).randbytes(65536)), open_error="not a zip file"),
    Case("text_file", _bytes_file("notes.pt2", b"hello, not a package\n"), open_error="not a zip file"),
    Case("plain_zip_no_model", _zip_of([("docs/readme.txt", b"hi")]), open_error="no AOTInductor model found"),
    Case("empty_zip", _zip_of([]), open_error="no AOTInductor model found"),
    Case("export_only", _zip_of([("pkg/models/model.json", b"{}"), ("pkg/data/weights/weight_0", b"\0" * 64)]),
         open_error="no AOTInductor model found"),
    Case("no_wrapper", _zip_of([(MODEL + "abc.wrapper_metadata.json", b"{}")])),
    Case("rootless", _zip_of([("data/aotinductor/model/abc.wrapper.cpp", b"// w\nvoid AOTInductorModel::run_impl() {}\n")])),
    Case("two_roots", _zip_of([("a/data/aotinductor/m/x.wrapper.cpp", b""), ("b/data/aotinductor/m/x.wrapper.cpp", b"")]),
         open_error="more than one archive root"),
    Case("too_many_members", _too_many_members, open_error="more than 100000 members"),
    Case("overlap_bomb", lambda dest: _overlap_bomb(dest, 10, 4), open_error="overlap in the archive"),
    Case("shared_local_header", _shared_header, open_error="overlap in the archive"),
    Case("nonexistent", lambda dest: dest / "missing.pt2", open_error="no such file or directory"),
    Case("fifo_path", _fifo_path, open_error="not a regular file or directory"),
    Case("empty_dir", _empty_dir, open_error="empty directory"),
    Case("extracted_root", _extracted_root, real=True),
    Case("extracted_parent", _extracted_parent, real=True),
    Case("dir_symlinks_outside", _dir_symlinks_outside, read_error="symbolic link", real=True),
    Case("dir_data_symlink", _dir_data_symlink, open_error="no AOTInductor model found", real=True),
    Case("dir_too_deep", _dir_too_deep, open_error="nested deeper than 32 levels", real=True),
    Case("dir_sparse_huge", _dir_sparse_huge, read_error="past the 256 MiB per-member limit", real=True),
    Case("dir_with_fifo", _dir_with_fifo, real=True),
    Case("dir_two_packages", _dir_two_packages, open_error="holds 2 extracted packages"),
    Case("dir_non_utf8_name", _dir_non_utf8_name, real=True),
    Case("dir_case_colliding", _dir_case_colliding, open_error="differ only in case", real=True),
]

CASES_BY_NAME = {case.name: case for case in CASES}


# --- round two: content that is valid zip but hostile to the parsers and the arithmetic -----------

FIXTURE_PKGS = Path(__file__).resolve().parents[1] / "fixtures" / "stress" / "pkgs"
BIG = "9" * 400            # an integer no float can hold
HUGE_DIGITS = "7" * 4400   # past Python's 4300-digit int-conversion limit


def edited(package: Path, suffix: str, old: str, new: str, name: str, count: int = 1) -> Callable[[Path], Path]:
    """The real `package` with `old` replaced by `new` (the first `count` times) in its member ending
    with `suffix`; every other member unchanged."""
    def build(dest: Path) -> Path:
        def change(member: str, data: bytes) -> list[RawMember]:
            if member.endswith(suffix):
                text = data.decode()
                assert old in text, (member, old)
                data = text.replace(old, new, count).encode()
            return [RawMember(member, data)]
        members: list[RawMember] = []
        for member, data in real_members(package):
            members += change(member, data)
        return write_raw_zip(dest / f"{name}.pt2", members)
    return build


def appended(package: Path, suffix: str, text: bytes, name: str) -> Callable[[Path], Path]:
    """The real `package` with `text` appended to its member ending with `suffix`."""
    def build(dest: Path) -> Path:
        members = [RawMember(m, d + text if m.endswith(suffix) else d) for m, d in real_members(package)]
        return write_raw_zip(dest / f"{name}.pt2", members)
    return build


CPU = BASE_PACKAGE                                       # gather_dyn, CPU: C++ kernel + check_input_N
CPU_ASSERT = "(tmp7 < ks1), \"index out of bounds: 0 <= tmp7 < ks1\""
UNBACKED = FIXTURE_PKGS / "item_arange.cpu.stripped.pt2"  # deferred runtime asserts on u0


UNLINKED = ("unlinked-assertion", ".kernel.cpp")
UNPARSED_WRAPPER = ("unparsed-member", ".wrapper.cpp")


def _bound(value: str) -> str:
    return f"(tmp7 < {value}), \"index out of bounds: 0 <= tmp7 < {value}\""


@dataclass(frozen=True)
class ContentCase:
    """A package whose content (not container) is hostile. `finding` is (rule, member suffix) that
    must be reported: "unknown" is said with a finding, e.g. an unparsed-member one while the rest
    is still analysed; `refused` a substring of the one-line exit-2 error; neither: a clean report."""

    name: str
    build: Callable[[Path], Path]
    finding: tuple[str, str] | None = None
    refused: str | None = None
    args: tuple[str, ...] = ()
    process: bool = False  # run in its own process: its time and peak memory are measured


CONTENT_CASES: list[ContentCase] = [
    ContentCase("bound_inf", edited(CPU, ".kernel.cpp", CPU_ASSERT, _bound("inf"), "bound_inf"), finding=UNLINKED),
    ContentCase("bound_1e999", edited(CPU, ".kernel.cpp", CPU_ASSERT, _bound("1e999"), "bound_1e999"), finding=UNLINKED),
    ContentCase("bound_400_digits", edited(CPU, ".kernel.cpp", CPU_ASSERT, _bound(BIG + "L"), "bound_400"), finding=UNLINKED),
    ContentCase("bound_4400_digits", edited(CPU, ".kernel.cpp", CPU_ASSERT, _bound(HUGE_DIGITS + "L"), "bound_4400"),
                finding=UNLINKED),
    ContentCase("bound_sum_260_terms", edited(CPU, ".kernel.cpp", CPU_ASSERT, _bound(" + ".join(["ks1"] * 260)),
                                              "bound_sum")),
    ContentCase("bound_sum_3000_terms", edited(CPU, ".kernel.cpp", CPU_ASSERT, _bound(" + ".join(["ks1"] * 3000)),
                                               "bound_sum_big"), finding=UNLINKED),
    ContentCase("bound_nested_parens_499", edited(CPU, ".kernel.cpp", CPU_ASSERT, _bound("(" * 499 + "ks1" + ")" * 499),
                                                  "bound_parens")),
    ContentCase("bound_nested_parens_2000", edited(CPU, ".kernel.cpp", CPU_ASSERT,
                                                   _bound("(" * 2000 + "ks1" + ")" * 2000), "bound_parens_deep"),
                finding=UNLINKED),
    ContentCase("max_nesting_too_high", edited(CPU, ".wrapper.cpp", "int64_t s77 = arg0_1_size[0];",
                                               "int64_t s77 = " + "(" * 980 + "arg0_1_size[0]" + ")" * 980 + ";",
                                               "size_parens_990"), args=("--max-nesting", "990"),
                refused="--max-nesting"),
    ContentCase("size_nested_parens", edited(CPU, ".wrapper.cpp", "int64_t s77 = arg0_1_size[0];",
                                             "int64_t s77 = " + "(" * 499 + "arg0_1_size[0]" + ")" * 499 + ";",
                                             "size_parens")),
    ContentCase("check_min_inf", edited(CPU, ".wrapper.cpp", "arg0_1_size[0] < 2)", "arg0_1_size[0] < 1e999)",
                                        "check_min_inf")),
    ContentCase("check_min_400_digits", edited(CPU, ".wrapper.cpp", "arg0_1_size[0] < 2)", f"arg0_1_size[0] < {BIG})",
                                               "check_min_400")),
    ContentCase("check_min_4400_digits", edited(CPU, ".wrapper.cpp", "arg0_1_size[0] < 2)",
                                                f"arg0_1_size[0] < {HUGE_DIGITS})", "check_min_4400"),
                finding=UNPARSED_WRAPPER),
    ContentCase("runtime_assert_400_digits", edited(UNBACKED, ".wrapper.cpp", "if (!(u0 >= 0L))", f"if (!(u0 <= {BIG}L))",
                                                    "runtime_400")),
    ContentCase("runtime_assert_4400_digits", edited(UNBACKED, ".wrapper.cpp", "if (!(u0 >= 0L))",
                                                     f"if (!(u0 <= {HUGE_DIGITS}L))", "runtime_4400"),
                finding=UNPARSED_WRAPPER),
    # In a C++ kernel (a function the reader parses): a body nothing reads is left out of the parse.
    ContentCase("adversarial_cpp_memory", appended(CPU, ".kernel.cpp", b"void cpp_hostile() { y = " + b"a<b," * 250_000 + b"0; }\n",
                                                   "adversarial_memory"),
                finding=("unparsed-member", ".kernel.cpp"), args=("--max-memory", "256M"), process=True),
    # 3.6 MB of nested templates parses in ~6.5 s on an idle core (1 MB took 1.75 s: a 3 s limit passed
    # on an idle machine), so a 2 s limit must stop it whatever the machine's load.
    ContentCase("adversarial_cpp_time", appended(CPU, ".kernel.cpp", b"void cpp_hostile() { y = " + b"a<b<c>>d;" * 400_000 + b"0; }\n",
                                                 "adversarial_time"), refused="time limit", args=("--timeout", "2"), process=True),
    # 90,000 checks take ~6 s on an idle core (30,000 took 2.7 s, too close to a 2 s limit); past
    # parsing.MAX_CHECKS a kernel is refused from its text instead (tests/test_hostile_text.py).
    ContentCase("many_checks_kernel", edited(CPU, ".kernel.cpp", "AOTI_TORCH_CHECK(",
                                             "AOTI_TORCH_CHECK((0 <= tmp7) & (tmp7 < ks1), \"index out of bounds: "
                                             "0 <= tmp7 < ks1\");\n" * 90_000 + "AOTI_TORCH_CHECK(", "many_checks"),
                refused="time limit", args=("--timeout", "2"), process=True),
]
