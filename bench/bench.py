"""Benchmark: analysis time vs. one tree-sitter parse of the package's C++ members.

Production wrappers reach tens of MB with thousands of kernels. This script scales a real package
(default ../shared/pt2/gather_dyn.cuda.pt2) by cloning its Triton kernel helper and launch N times
(renamed, so every copy is a distinct kernel with its own assertion), writes the result as a zip in a
temporary folder, and reports:

  parse_s     one tree-sitter parse of every C++ member
  ast_s       one `ast.parse` of every embedded Triton kernel source (Python's parser: part of the
              floor for CUDA packages, whose Triton kernels must be parsed as Python)
  analyze_s   analyzer.api.lint: read, parse, extract, link, run the rules
  ratio       analyze_s / parse_s             (target: a small constant, flat as N grows)
  ratio_all   analyze_s / (parse_s + ast_s)

    python bench/bench.py --kernels 100 1000 3000
"""

from __future__ import annotations

import argparse
import ast
import gc
import re
import textwrap
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from analyzer import api, ts  # noqa: E402


def scale(src: Path, n: int, out: Path) -> Path:
    """Clone the first call_triton_* helper and its launch n times into one wrapper."""
    with zipfile.ZipFile(src) as zin:
        names = zin.namelist()
        wrapper_name = next(x for x in names if x.endswith(".wrapper.cpp"))
        text = zin.read(wrapper_name).decode()
        m = re.search(r"template <[^\n]*>\nstatic inline void call_(triton_\w+)\(.*?\n}\n", text, re.S)
        helper, kernel = m.group(0), m.group(1)
        launch = re.search(rf"    // Topologically[^\n]*\n    call_{kernel}\([^\n]*\n", text).group(0)
        helpers = "".join(helper.replace(kernel, f"{kernel}_c{i}") for i in range(n))
        launches = "".join(launch.replace(kernel, f"{kernel}_c{i}") for i in range(n))
        text = text.replace(helper, helper + helpers, 1).replace(launch, launch + launches, 1)
        path = out / f"scaled_{n}.pt2"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
            for name in names:
                if name == wrapper_name:
                    zout.writestr(name, text)
                elif not name.endswith((".so", ".cubin")):
                    zout.writestr(name, zin.read(name))
    return path


def measure(path: Path, repeat: int) -> tuple[float, float, float, int, int]:
    with zipfile.ZipFile(path) as z:
        sources = [z.read(x) for x in z.namelist() if x.endswith(".cpp")]
    quotes = "'" * 3
    pattern = re.compile(r"async_compile\.triton\('\w+', " + quotes + "(.*?)" + quotes, re.S)
    kernels = [textwrap.dedent(m.group(1)) for s in sources for m in pattern.finditer(s.decode())]
    parse_s = min(_timed(lambda: [ts.parse(s) for s in sources]) for _ in range(repeat))
    ast_s = min(_timed(lambda: [ast.parse(k) for k in kernels]) for _ in range(repeat))
    analyze_s = min(_timed(lambda: api.lint([str(path)])) for _ in range(repeat))
    result = api.lint([str(path)])
    n_asserts = sum(len(m.assertions) for p in result.packages for m in p.models)
    return parse_s, ast_s, analyze_s, sum(len(s) for s in sources), n_asserts


def _timed(fn) -> float:
    # The cyclic GC is off while timing (the analyzer itself runs with it off; see api._no_gc), so
    # the floor and the analysis are measured alike.
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, default=REPO.parent / "shared" / "pt2" / "gather_dyn.cuda.pt2")
    parser.add_argument("--kernels", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'kernels':>8} {'C++ MB':>8} {'asserts':>8} {'parse_s':>9} {'ast_s':>7} {'analyze_s':>10} "
          f"{'ratio':>6} {'ratio_all':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.kernels:
            path = scale(args.package, n, Path(tmp))
            parse_s, ast_s, analyze_s, size, asserts = measure(path, args.repeat)
            print(f"{n:>8} {size / 2**20:>8.2f} {asserts:>8} {parse_s:>9.3f} {ast_s:>7.3f} {analyze_s:>10.3f} "
                  f"{analyze_s / parse_s:>6.1f} {analyze_s / (parse_s + ast_s):>9.1f}")


if __name__ == "__main__":
    main()
