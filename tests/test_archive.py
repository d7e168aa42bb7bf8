"""analyzer.read.archive: discovery on the real packages, and the hostile corpus of tests/hostile.py."""

from __future__ import annotations

import io
import os
import resource
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from analyzer.read import archive
from analyzer.read.archive import Limits, ModelMembers, Package, open_package
from analyzer.core.budget import ArchiveError, Deadline
from hostile import BASE_PACKAGE, CASES, CASES_BY_NAME, MODEL, SHARED_PT2, Case, extract_real, write_raw_zip, RawMember

REAL = sorted(SHARED_PT2.glob("*.pt2")) if SHARED_PT2.is_dir() else []
needs_real = pytest.mark.skipif(not BASE_PACKAGE.is_file(), reason=f"real packages not found at {SHARED_PT2}")


def _root_of(package: Path) -> str:
    """gather_dyn.cpu.stripped.pt2 -> gather_dyn.cpu/ (the stripped copies keep the original root)."""
    return package.name.removesuffix(".pt2").removesuffix(".stripped") + "/"


def _snapshot(*folders: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under the folders (links not followed) with its mode, size and mtime."""
    seen = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            for name in dirnames + filenames:
                st = os.lstat(os.path.join(dirpath, name))
                seen[os.path.join(dirpath, name)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return seen


def _assert_one_line(exc: ArchiveError, label: str) -> str:
    text = str(exc)
    assert text.isprintable(), f"message is not one printable line: {text!r}"
    assert text.startswith(label + ": "), text
    return text


def _read_all(pkg: Package) -> dict[str, str | bytes]:
    """Try every member: bytes on success, the error text otherwise."""
    out: dict[str, str | bytes] = {}
    for member in pkg.members:
        try:
            out[member] = pkg.read_bytes(member)
        except ArchiveError as exc:
            out[member] = _assert_one_line(exc, pkg.path)
    return out


# --- real packages -------------------------------------------------------------------------------


@pytest.mark.skipif(not REAL, reason=f"real packages not found at {SHARED_PT2}")
@pytest.mark.parametrize("package", REAL, ids=[p.name for p in REAL])
def test_real_package_discovery(package: Path) -> None:
    with zipfile.ZipFile(package) as zf:
        names = zf.namelist()
    with open_package(package) as pkg:
        root = _root_of(package)
        assert pkg.kind == "zip" and pkg.path == str(package)
        assert pkg.root == root
        assert pkg.members == names
        assert pkg.exported_programs == []
        assert [m.name for m in pkg.models] == ["model"]
        model = pkg.models[0]
        assert model.prefix == root + "data/aotinductor/model/"
        assert len(model.wrappers) == 1 and model.wrappers[0].endswith(".wrapper.cpp")
        wrapper_hash = model.wrappers[0].rsplit("/", 1)[1].split(".")[0]
        assert model.metadata[0] == f"{model.prefix}{wrapper_hash}.wrapper_metadata.json"
        text = pkg.read_text(model.wrappers[0])
        assert "AOTInductorModel::run_impl" in text
        assert pkg.bytes_read == len(text.encode())
        classified = model.wrappers + model.kernels + model.metadata + model.binaries + model.other
        classified += [model.cmake] if model.cmake else []
        assert sorted(classified) == sorted(n for n in names if n.startswith(model.prefix))
        if ".stripped" in package.name:
            assert model.binaries == [] and model.cmake is None and len(model.kernels) == 1
        for member in model.binaries:
            with pytest.raises(ArchiveError, match="is binary"):
                pkg.read_bytes(member)


@needs_real
def test_full_cuda_package_lists_binaries_and_never_opens_them(monkeypatch: pytest.MonkeyPatch) -> None:
    package = SHARED_PT2 / "gather_dyn.cuda.pt2"
    opened: list[str] = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, name, *a, **k: opened.append(getattr(name, "filename", name)) or real_open(self, name, *a, **k))
    with open_package(package) as pkg:
        model = pkg.models[0]
        assert sorted(m.rsplit(".", 1)[1] for m in model.binaries) == ["cubin", "so"]
        assert len(model.kernels) == 1 and model.cmake is None
        results = _read_all(pkg)
    for member in model.binaries:
        assert "is binary" in results[member]
        assert member not in opened
    assert sorted(opened) == sorted(m for m in pkg.members if m not in model.binaries)


@needs_real
def test_cpp_only_package_has_cmake_and_no_shared_object() -> None:
    with open_package(SHARED_PT2 / "gather_dyn.cuda.cpponly.pt2") as pkg:
        model = pkg.models[0]
        assert model.cmake == model.prefix + "CMakeLists.txt"
        assert "project(" in pkg.read_text(model.cmake).lower() or "add_library" in pkg.read_text(model.cmake)
        assert not any(b.endswith(".so") for b in model.binaries)
        assert sorted(b.rsplit("/", 1)[1].split(".", 1)[1] for b in model.binaries) == ["cubin", "weights.o"]
        assert model.kernels == []
        assert sorted(o.rsplit("/", 1)[1].split(".", 1)[-1] for o in model.other) == [
            "ld", "wrapper_compile_flags.json", "wrapper_linker_flags.json"]


@needs_real
@pytest.mark.parametrize("which", ["root", "parent"])
def test_extracted_directory_matches_zip(tmp_path: Path, which: str) -> None:
    root = extract_real(tmp_path)
    with open_package(BASE_PACKAGE) as zpkg, open_package(root if which == "root" else root.parent) as dpkg:
        assert dpkg.kind == "dir"
        assert dpkg.root == zpkg.root
        assert sorted(dpkg.members) == sorted(zpkg.members)
        assert dpkg.models == zpkg.models
        wrapper = zpkg.models[0].wrappers[0]
        assert dpkg.read_bytes(wrapper) == zpkg.read_bytes(wrapper)


# --- the hostile corpus ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.real and not BASE_PACKAGE.is_file():
        pytest.skip(f"real packages not found at {SHARED_PT2}")
    corpus, cwd = tmp_path / "corpus", tmp_path / "cwd"
    corpus.mkdir()
    cwd.mkdir()
    path = case.build(corpus)
    monkeypatch.chdir(cwd)
    before = _snapshot(tmp_path)

    label = str(path)
    if case.open_error is not None:
        with pytest.raises(ArchiveError) as info:
            open_package(path, case.limits)
        assert case.open_error in _assert_one_line(info.value, label)
    else:
        with open_package(path, case.limits) as pkg:
            assert pkg.models
            results = _read_all(pkg)
        matched = [m for m in results if m.endswith(case.bad_member)]
        for member, result in results.items():
            if member in pkg.symlinks:
                assert isinstance(result, str) and "symbolic link" in result
            elif pkg.is_binary(member):
                assert isinstance(result, str) and "is binary" in result
            elif case.read_error is not None and member in matched:
                assert isinstance(result, str) and case.read_error in result, result
            else:
                assert isinstance(result, bytes), f"{member}: {result}"
        if case.read_error is not None:
            assert matched, f"no member ends with {case.bad_member!r}"

    assert _snapshot(tmp_path) == before, "reading the package created or changed files"


def test_every_hostile_case_says_what_should_happen() -> None:
    assert len(CASES_BY_NAME) == len(CASES)
    for case in CASES:
        assert not (case.open_error and case.read_error), case.name


# --- specific behaviours ---------------------------------------------------------------------------


def test_deflate_bomb_is_refused_from_its_header_with_little_memory(tmp_path: Path) -> None:
    path = CASES_BY_NAME["deflate_bomb"].build(tmp_path)
    assert path.stat().st_size < 4 << 20  # 1.5 GiB of zeros in under 4 MB
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    try:
        with open_package(path) as pkg:
            wrapper = pkg.models[0].wrappers[0]
            with pytest.raises(ArchiveError, match=r"declares 1536 MiB, past the 256 MiB per-member limit"):
                pkg.read_text(wrapper)
            assert pkg.bytes_read == 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before < 1 << 30


def test_bomb_with_a_lying_header_stops_at_the_declared_size(tmp_path: Path) -> None:
    path = CASES_BY_NAME["bomb_header_lies_small"].build(tmp_path)
    tracemalloc.start()
    try:
        with open_package(path) as pkg:
            with pytest.raises(ArchiveError, match="Bad CRC-32"):
                pkg.read_bytes(pkg.models[0].wrappers[0])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_bomb_under_raised_member_limit_hits_the_total_limit(tmp_path: Path) -> None:
    path = CASES_BY_NAME["deflate_bomb"].build(tmp_path)
    limits = Limits(max_member_bytes=4 << 30, max_total_bytes=64 << 20)
    with open_package(path, limits) as pkg:
        with pytest.raises(ArchiveError, match=r"past the 64 MiB limit on bytes read from the whole package"):
            pkg.read_bytes(pkg.models[0].wrappers[0])


class _Zeros(io.RawIOBase):
    """An endless stream of zeros that counts what it hands out."""

    def __init__(self) -> None:
        self.served = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        assert 0 < n <= 1 << 20, "reads must be chunked"
        self.served += n
        return bytes(n)


def test_streaming_cap_stops_an_endless_member() -> None:
    # The header check catches honest bombs; this is the backstop for a size that lies or grows.
    stream = _Zeros()
    with pytest.raises(archive._TooLarge) as info:
        b"".join(archive._capped_chunks(stream, (3 << 20) + 5))
    assert info.value.args[0] == (3 << 20) + 6
    assert stream.served == (3 << 20) + 6


def test_streaming_cap_polls_the_deadline() -> None:
    deadline = Deadline(0.0, "pkg.pt2")
    with pytest.raises(ArchiveError, match=r"^pkg\.pt2: analysis exceeded the 0 s time limit \(while reading x\)$"):
        b"".join(archive._capped_chunks(_Zeros(), 1 << 30, lambda: deadline.check("reading x")))


def test_total_limit_counts_every_read(tmp_path: Path) -> None:
    case = CASES_BY_NAME["bombs_over_total"]
    with open_package(case.build(tmp_path), case.limits) as pkg:
        kernels = pkg.models[0].kernels
        assert [k.rsplit("/", 1)[1] for k in kernels] == [f"k{i}.kernel.cpp" for i in range(4)]
        assert pkg.read_bytes(kernels[0]) == bytes(2 << 20)
        assert pkg.read_bytes(kernels[1]) == bytes(2 << 20)
        with pytest.raises(ArchiveError, match=r"limit on bytes read from the whole package \(4 MiB already read\)"):
            pkg.read_bytes(kernels[2])
        assert pkg.bytes_read == 4 << 20


@needs_real
def test_member_limit_from_stat_in_directory_mode(tmp_path: Path) -> None:
    root = extract_real(tmp_path)
    with open_package(root, Limits(max_member_bytes=1000)) as pkg:
        with pytest.raises(ArchiveError, match=r"declares \d+ bytes, past the 1000 bytes per-member limit"):
            pkg.read_bytes(pkg.models[0].wrappers[0])
        assert pkg.read_text(pkg.root + "archive_format") == "pt2"


@needs_real
def test_non_utf8_wrapper_text_is_replaced_not_fatal(tmp_path: Path) -> None:
    with open_package(CASES_BY_NAME["non_utf8_wrapper"].build(tmp_path)) as pkg:
        text = pkg.read_text(pkg.models[0].wrappers[0])
    assert text.startswith("\ufffd\ufffd\ufffd latin-1 caf\ufffd\n")
    assert "AOTInductorModel::run_impl" in text


def test_symlink_member_is_listed_but_never_read(tmp_path: Path) -> None:
    with open_package(CASES_BY_NAME["symlink_member"].build(tmp_path)) as pkg:
        link = MODEL + "abc.wrapper.cpp"
        assert pkg.symlinks == [link]
        assert pkg.models[0].wrappers == [link]
        with pytest.raises(ArchiveError, match="is a symbolic link; links are never followed"):
            pkg.read_text(link)


@needs_real
def test_directory_symlinks_are_never_followed(tmp_path: Path) -> None:
    root = CASES_BY_NAME["dir_symlinks_outside"].build(tmp_path)
    with open_package(root) as pkg:
        prefix = pkg.models[0].prefix
        assert sorted(pkg.symlinks) == sorted([pkg.models[0].wrappers[0], prefix + "escape", pkg.root + "up"])
        assert not any(m.startswith((prefix + "escape/", pkg.root + "up/")) for m in pkg.members)
        for link in pkg.symlinks:
            with pytest.raises(ArchiveError, match="symbolic link"):
                pkg.read_bytes(link)


@needs_real
def test_directory_member_swapped_for_a_link_after_the_walk(tmp_path: Path) -> None:
    root = extract_real(tmp_path)
    (tmp_path / "secret").write_text("secret\n")
    with open_package(root) as pkg:
        wrapper = pkg.models[0].wrappers[0]
        fs_path = root.parent / wrapper
        fs_path.unlink()
        fs_path.symlink_to(tmp_path / "secret")
        with pytest.raises(ArchiveError, match="resolves outside the package folder"):
            pkg.read_bytes(wrapper)
        model_dir = fs_path.parent
        os.rename(model_dir, tmp_path / "moved")
        model_dir.symlink_to(tmp_path / "moved", target_is_directory=True)
        with pytest.raises(ArchiveError, match="resolves outside the package folder"):
            pkg.read_bytes(pkg.models[0].metadata[0])


@needs_real
def test_directory_file_names_that_are_not_utf8(tmp_path: Path) -> None:
    with open_package(CASES_BY_NAME["dir_non_utf8_name"].build(tmp_path)) as pkg:
        odd = [m for m in pkg.members if "odd" in m]
        assert odd == [pkg.models[0].prefix + "odd\ufffd\nname.json"]
        assert pkg.read_bytes(odd[0]) == b"{}"


def test_rootless_and_no_wrapper_layouts(tmp_path: Path) -> None:
    rootless = tmp_path / "rootless"
    rootless.mkdir()
    with open_package(CASES_BY_NAME["rootless"].build(rootless)) as pkg:
        assert pkg.root == ""
        assert pkg.models == [ModelMembers("model", "data/aotinductor/model/", wrappers=["data/aotinductor/model/abc.wrapper.cpp"])]
    with open_package(CASES_BY_NAME["no_wrapper"].build(tmp_path)) as pkg:
        assert pkg.models[0].wrappers == []
        assert pkg.models[0].metadata == [MODEL + "abc.wrapper_metadata.json"]


def test_cp437_names_and_folder_entries(tmp_path: Path) -> None:
    with open_package(CASES_BY_NAME["cp437_name"].build(tmp_path)) as pkg:
        assert "pkg/caf\u00e9.txt" in pkg.members
    path = tmp_path / "folders.pt2"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/", b"")
        zf.writestr("pkg/data/aotinductor/model/", b"")
        zf.writestr("./pkg//data/aotinductor/model/./x.wrapper.cpp", b"// x\n")
    with open_package(path) as pkg:
        assert pkg.members == ["pkg/data/aotinductor/model/x.wrapper.cpp"]
        assert pkg.read_text(pkg.members[0]) == "// x\n"


def test_exported_programs_weights_and_several_models(tmp_path: Path) -> None:
    path = write_raw_zip(tmp_path / "multi.pt2", [
        RawMember("pkg/data/aotinductor/b/b.wrapper.cpp", b"// b\n"),
        RawMember("pkg/data/aotinductor/a/a.wrapper.cpp", b"// a\n"),
        RawMember("pkg/data/aotinductor/a/a.kernel.cpp", b"// k\n"),
        RawMember("pkg/data/aotinductor/a/a.kernel_metadata.json", b"{}"),
        RawMember("pkg/data/aotinductor/a/a.wrapper_metadata.json", b"{}"),
        RawMember("pkg/models/model.json", b'{"graph": {}}'),
        RawMember("pkg/models/nested/other.json", b"{}"),
        RawMember("pkg/data/weights/weight_0", b"\x80\x02pickle"),
        RawMember("pkg/data/weights/model_weights_config.json", b"{}"),
        RawMember("pkg/data/sample_inputs/model.pt", b"\x80\x02"),
    ])
    with open_package(path) as pkg:
        assert [m.name for m in pkg.models] == ["a", "b"]
        a = pkg.models[0]
        assert a.metadata == ["pkg/data/aotinductor/a/a.wrapper_metadata.json", "pkg/data/aotinductor/a/a.kernel_metadata.json"]
        assert a.kernels == ["pkg/data/aotinductor/a/a.kernel.cpp"]
        assert pkg.exported_programs == ["pkg/models/model.json"]
        assert pkg.read_text("pkg/models/model.json") == '{"graph": {}}'
        assert pkg.read_text("pkg/data/weights/model_weights_config.json") == "{}"
        for opaque in ("pkg/data/weights/weight_0", "pkg/data/sample_inputs/model.pt"):
            with pytest.raises(ArchiveError, match="is binary"):
                pkg.read_bytes(opaque)
        with pytest.raises(ArchiveError, match=r"no member 'pkg/missing' in the package"):
            pkg.read_bytes("pkg/missing")


@needs_real
def test_member_count_limit_and_timeout(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match=r"more than 5 members \(the member-count limit\)$"):
        open_package(BASE_PACKAGE, Limits(max_members=5))
    with pytest.raises(ArchiveError, match=r"more than 5 entries under the directory"):
        open_package(extract_real(tmp_path), Limits(max_members=5))
    with pytest.raises(ArchiveError, match=r"analysis exceeded the 0 s time limit \(while listing members\)$"):
        open_package(BASE_PACKAGE, Limits(timeout_s=0))
    with open_package(BASE_PACKAGE, Limits(timeout_s=3600)) as pkg:
        pkg.deadline.check("anything")
        assert 3500 < pkg.deadline.remaining <= 3600


def test_member_count_is_checked_before_zipfile_builds_its_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = CASES_BY_NAME["too_many_members"].build(tmp_path)
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: pytest.fail("zipfile parsed a 100001-member directory"))
    with pytest.raises(ArchiveError, match=r"more than 100000 members"):
        open_package(path)


def test_limits_are_validated() -> None:
    assert Limits().max_member_bytes == 256 * 2**20 and Limits().timeout_s == 120.0
    with pytest.raises(ValueError, match="max_members"):
        Limits(max_members=0)
    with pytest.raises(ValueError, match="timeout_s"):
        Limits(timeout_s=-1)


@needs_real
def test_closed_package_reads_fail_cleanly() -> None:
    pkg = open_package(BASE_PACKAGE)
    pkg.close()
    with pytest.raises(ArchiveError, match="cannot read member"):
        pkg.read_bytes(pkg.models[0].wrappers[0])


def test_archive_error_is_always_one_line() -> None:
    assert str(ArchiveError("a\nb\r\u2028c\x1b[31m")) == "a b  c [31m"


def test_unprintable_package_path_is_quoted(tmp_path: Path) -> None:
    path = tmp_path / "bad\nname.pt2"
    with pytest.raises(ArchiveError) as info:
        open_package(path)
    assert str(info.value) == f"{str(path)!r}: no such file or directory"
