"""A hostile-output corpus, generated at test time: real packages rewritten so that every string
aoti-lint copies from its inputs into a report carries HTML, markdown, terminal escapes, newlines
followed by CI log commands, bidi overrides and lone surrogates.

Fields carrying the attack: the package's file name (with a byte that is not UTF-8) and its model
folder, the wrapper member's name, metadata values, the assertion message of a `tl.device_assert`
(CUDA) and of an `AOTI_TORCH_CHECK` (CPU), the exported program's input name, stack trace and
module stack, an accept reason in pyproject.toml, and a failure log given to `why`. What each
field cannot hold (a `/` in a path segment, a quote or a line break in a C string literal, a
surrogate in bytes or TOML) is left out of that field only.

Built with tests/hostile.py's raw zip writer; the base packages are committed fixtures.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from hostile import RawMember, real_members, write_raw_zip

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CUDA_BASE = FIXTURES / "gather_dyn.cuda.stripped.pt2"
CPU_BASE = FIXTURES / "gather_dyn.cpu.stripped.pt2"
EP_BASE = FIXTURES / "gather_dyn.ep.pt2"

IMG = "<img src=https://attacker/x>"
MARKER = "<!-- aoti-lint-action -->"
OSC52 = "\x1b]52;c;aGVsbG8=\x07"
# One string with every attack: raw HTML, the Action's marker, `</details>`, a javascript: link,
# a mention and an issue reference, a table pipe, backticks, clear-screen, OSC 52 (clipboard),
# OSC 8 (a hidden link), a window title, bidi override and isolate, C1 controls, DEL, a v1 CI
# command anywhere in a line.
ATTACK = (f"{IMG}</details>{MARKER}[click](javascript:alert(1)) @someone #1 a|b `` "
          f"\x1b[2J{OSC52}\x1b]8;;https://attacker/\x07link\x1b]8;;\x07\x1b]0;title\x07"
          "\u202e\u2066\x85\x9b\x7f ##[add-mask]v1")
# Line breaks, each followed by a CI log command, and a bare CR.
LINES = "\r\n::error file=x::forged\n  ::add-mask::secret\n"
SURROGATE = "\ud800"
FULL = ATTACK + LINES + SURROGATE
# A path segment: no `/` (and no NUL); the closing tag keeps its name.
SEGMENT = ATTACK.replace("</", "<").replace("/", "") + LINES
# A C or Python string literal in source: no quote, backslash or line break.
LITERAL = ATTACK.replace('"', "").replace("\\", "")
# A file name: a segment plus a byte that is not UTF-8 (read back as the surrogate \udcff).
FILE_NAME = "pkg" + SEGMENT + "\udcff.pt2"
# TOML holds no surrogate.
REASON = ATTACK + LINES

CUDA_MESSAGE = '"index out of bounds: 0 <= tmp4 < ks0"'
CPU_MESSAGE = '"index out of bounds: 0 <= tmp7 < ks1"'


@dataclass(frozen=True)
class Corpus:
    """The built inputs: a hostile CUDA package (with its hostile exported program), a folder
    holding a hostile CPU package under a name that is not UTF-8, a pyproject.toml accepting a
    finding with a hostile reason (in `root`), and a failure log."""

    root: Path
    cuda: Path
    exported: Path
    folder: Path
    cpu: Path
    log: Path


def _utf8_flag(name: str) -> int:
    # Names that are not ASCII are written as UTF-8 with the flag that says so (bit 11).
    return 0x800 if not name.isascii() else 0


def _members(base: Path, edit) -> list[RawMember]:
    out = []
    for name, data in real_members(base):
        name, data = edit(name, data)
        out.append(RawMember(name, data, flags=_utf8_flag(name)))
    return out


def _package(base: Path, message: str, path: Path) -> Path:
    def edit(name: str, data: bytes) -> tuple[str, bytes]:
        name = name.replace("/model/", "/" + SEGMENT + "/")
        if name.endswith(".wrapper.cpp"):
            name = name.rsplit("/", 1)[0] + "/" + SEGMENT.replace("\n", "").replace("\r", "") + "w.wrapper.cpp"
        if name.endswith((".wrapper.cpp", ".kernel.cpp")):
            text = data.decode()
            if message in text:
                text = text.replace(message, message[:-1] + " " + LITERAL + '"')
            data = text.encode()
        if name.endswith("wrapper_metadata.json"):
            meta = json.loads(data)
            meta["AOTI_COMPUTE_CAPABILITY"] = str(meta.get("AOTI_COMPUTE_CAPABILITY", "90")) + FULL
            meta["HOSTILE_KEY" + FULL] = FULL
            data = json.dumps(meta).encode()
        return name, data

    members = _members(base, edit)
    assert any(message[:-1] + " " in m.payload.decode(errors="replace") for m in members), base
    raw = os.path.join(os.fsencode(path.parent), os.fsencode(path.name))
    write_raw_zip(Path(os.fsdecode(raw)), members)
    return path


def _exported(path: Path) -> Path:
    def edit(name: str, data: bytes) -> tuple[str, bytes]:
        if name.endswith("models/model.json"):
            # Input "x" renamed everywhere (specs, graph, tensor values) to the attack.
            renamed = json.dumps("x" + FULL)
            doc = json.loads(data.decode().replace('"x"', renamed))
            for node in doc["graph_module"]["graph"]["nodes"]:
                node["metadata"]["stack_trace"] = (f'File "/work/{FULL}.py", line 62, in forward\n'
                                                   f"    return x[idx] * 2  # {FULL}")
                node["metadata"]["nn_module_stack"] = "L__self__,,__main__." + FULL
            data = json.dumps(doc).encode()
        return name, data

    return write_raw_zip(path, _members(EP_BASE, edit))


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of BMP characters is a TOML basic string


def build(root: Path) -> Corpus:
    """Write the corpus under `root` (pytest's tmp_path)."""
    cuda = _package(CUDA_BASE, CUDA_MESSAGE, root / FILE_NAME)
    exported = _exported(root / "hostile.ep.pt2")
    folder = root / "scan"
    folder.mkdir()
    cpu = _package(CPU_BASE, CPU_MESSAGE, folder / ("cpu" + SEGMENT + "\udcff.pt2"))
    (root / "pyproject.toml").write_text(
        "[[tool.aoti-lint.accept]]\n"
        'package = "*"\n'
        'rule = "unenforced-lower-bound"\n'
        "input = 0\n"   # one finding for the model, led by input 0
        f"reason = {_toml_string(REASON)}\n", encoding="utf-8")
    log = root / "crash.log"
    log.write_text(f"{ATTACK}\nRuntimeError: index out of bounds: 0 <= tmp7 < ks1 {LITERAL}\n{LINES}",
                   encoding="utf-8")
    for path in (cuda, exported, cpu):
        with zipfile.ZipFile(path) as zf:  # readable archives
            assert zf.testzip() is None
    return Corpus(root=root, cuda=cuda, exported=exported, folder=folder, cpu=cpu, log=log)
