"""Hostile text of valid shape, built on a real CPU package: the inputs whose cost must stay bounded
by the text they carry (tests/test_hostile_text.py runs them scaled down, bench/bench.py at full size).

- `unread_statements`: a wrapper function nothing reads, holding MiB of plain C++ statements;
- `check_lines`: one C++ kernel with a great many `AOTI_TORCH_CHECK` lines;
- `long_line`: a single line of many MB (C++ statements of a function nothing reads).

Each builder writes a package under `dest` and returns its path; every other member is the base
package's, byte for byte.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

BASE = Path(__file__).resolve().parents[1].parent / "shared" / "pt2" / "gather_dyn.cpu.stripped.pt2"
CHECK = b'AOTI_TORCH_CHECK((0 <= tmp7) & (tmp7 < ks1), "index out of bounds: 0 <= tmp7 < ks1");'
STATEMENT = b"x0 = x1 + x2 * 3;"


def _rewrite(dest: Path, name: str, change: dict[str, bytes], base: Path = BASE) -> Path:
    """`base` with the members ending with each key of `change` rewritten by it (bytes -> bytes)."""
    path = dest / name
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            for suffix, edit in change.items():
                if info.filename.endswith(suffix):
                    data = edit(data)
            zout.writestr(info.filename, data)
    return path


def unread_statements(dest: Path, mib: float = 55) -> Path:
    """A wrapper with a function of `mib` MiB of statements, one a line, that no reader looks at."""
    line = b"    " + STATEMENT + b"\n"
    body = line * int(mib * 2**20 / len(line))
    fn = b"\nvoid aoti_lint_unread_statements(int64_t x1, int64_t x2) {\n    int64_t x0 = 0;\n" + body + b"}\n"
    return _rewrite(dest, f"unread_statements_{mib:g}mib.pt2", {".wrapper.cpp": lambda d: d + fn})


def check_lines(dest: Path, count: int = 1_000_000) -> Path:
    """The base kernel with its one `AOTI_TORCH_CHECK` line repeated `count` times in place."""
    def edit(data: bytes) -> bytes:
        at = data.index(CHECK)
        indent = data[data.rindex(b"\n", 0, at) + 1:at]
        return data[:at] + (CHECK + b"\n" + indent) * (count - 1) + data[at:]
    return _rewrite(dest, f"check_lines_{count}.pt2", {".kernel.cpp": edit})


def long_line(dest: Path, mb: float = 20) -> Path:
    """A wrapper with a function nothing reads whose body is one line of `mb` MB of statements."""
    body = (STATEMENT + b" ") * int(mb * 10**6 / (len(STATEMENT) + 1))
    fn = b"\nvoid aoti_lint_long_line(int64_t x1, int64_t x2) { int64_t x0 = 0; " + body + b"}\n"
    return _rewrite(dest, f"long_line_{mb:g}mb.pt2", {".wrapper.cpp": lambda d: d + fn})


CASES = {"unread_statements": unread_statements, "check_lines": check_lines, "long_line": long_line}
