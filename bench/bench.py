"""Benchmark: `aoti-lint check` as a user runs it, against one tree-sitter parse of the same C++.

Production packages have wrappers of tens of MB, thousands of Triton kernels and weights of many
GB. This script builds such packages from real fixtures of several families and torch versions
(SOURCES: CUDA transformers of torch 2.11, CPU packages with C++ kernels of torch 2.13 and 2.8, a
Mixtral mixture of experts; `--package` picks others). In a CUDA package every `call_triton_*`
helper and its launch is
replicated under new kernel names (`triton_poi_fused_gelu_view_2` -> `..._view_1017`), most copies
from the kernels without assertions (a transformer's layer norms, GELUs, residual adds) and one in
`--assert-every` from the kernels with assertions (its embeddings), until the wrapper reaches each
requested size; in a CPU package each `cpp_fused_*` kernel with its declaration and launch, to the
requested MB of C++ in all. Each package also gets a deflated weights member of `--weights-gb` GiB
of zeros. Every row is one source at one size; the headline is the worst row at 12 MB and more
(CPU ratio, wall ratio) and the worst peak RSS against its target; `--readme` writes the table and
the headline into README.md (between `<!-- generated: bench/bench.py -->` and its end marker);
`--hostile` adds the three hostile texts of bench/hostile_text.py at full size.
Then it prints, side by side, medians of `--repeat` runs of

  check_s   `python -m analyzer check --format json PKG` in a subprocess (wall time, as a user sees)
  parse_s   a subprocess that opens the same zip, reads its C++ members and parses each once with
            tree-sitter-cpp (the floor: one read of the C++; same interpreter start-up)
  ratio     check_s / parse_s
  check_cpu, parse_cpu, CPU ratio   the same in CPU time (user + system) of each child: the
            measure to trust on a shared, loaded machine (wall time there is mostly waiting for a
            core), but blind to work spread over cores
  wall/CPU  check_s / check_cpu (median of the runs): 1.0 for one busy core, below 1 when the
            check's helper worker (analyzer/parse/helper_worker.py) runs beside it on another core
  base ...  with --baseline DIR: the wall ratio, CPU ratio, wall/CPU and peak RSS of that
            checkout's check, same run
  RSS       peak resident memory of the check child (ru_maxrss via wait4), against the target
            (RSS limit: three times the largest text member, the wrapper, plus 100 MB)
  s/MB      check_s per MB of wrapper; CPU s/MB the same in CPU time; +CPU s/MB the CPU time per
            MB added since the previous size (start-up is paid once: this is the one to read flat)
  load      the 1-minute load average while the row ran (the machine's other work)
  triton_cpu, triton ratio   with --triton-floor: the CPU of a second floor that also parses each
            Triton source the wrapper embeds with `ast.parse` (the C++ floor reads them as
            comments), and check_cpu against it

then the 1 MB package with and without its weights (the same cost: the weights are never read),
and -j1 against -j2 over --jobs packages (wall and CPU time of the process tree, load average).
One command prints every number of the README's performance table:

    python bench/bench.py                       # 1 12 50 MB, weights row, -j over 8 packages of 4 MB
    python bench/bench.py --mb 12 --profile --jobs 0   # + a cProfile of one in-process check
    python bench/bench.py --baseline ../old     # + the ratio of another checkout, same run
    python bench/bench.py --baseline . --baseline-env AOTI_LINT_WORKER=0   # + this one, serial

Packages are cached in --workdir (default: a folder in the system temp dir) between runs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PACKAGE = REPO / "fixtures" / "small_transformer.cuda.stripped.pt2"
HELPER = re.compile(r"template <[^\n]*>\nstatic inline void call_(triton_\w+)\(.*?\n}\n", re.S)

# Children run as an installed tool does: with compiled bytecode (an environment that sets
# PYTHONDONTWRITEBYTECODE would make every check recompile the analyzer's modules, ~0.15 s of CPU).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# The floor, run as its own process: read the zip's C++ members and parse each once.
FLOOR = """
import sys, zipfile, tree_sitter, tree_sitter_cpp
parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.endswith('.cpp'):
            parser.parse(z.read(name))
"""

# With --triton-floor, a second floor: the same, then Python's own parse (`ast.parse`, as the design
# card has Triton kernels read) of each Triton source a CUDA wrapper embeds in comments. The C++
# floor reads those as comment tokens, and they are most of a CUDA package's C++.
EMBEDDED_TRITON = r"async_compile\.triton\('\w+', '''\n(.*?)\n *''', device_str"
TRITON_FLOOR = r"""
import ast, re, sys, zipfile, tree_sitter, tree_sitter_cpp
parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))
embedded = re.compile(sys.argv[2], re.S)
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.endswith('.cpp'):
            data = z.read(name)
            parser.parse(data)
            for m in embedded.finditer(data.decode('utf-8', 'replace')):
                lines = m.group(1).split('\n')
                cut = len(lines[0]) - len(lines[0].lstrip(' '))
                ast.parse('\n'.join(line[cut:] for line in lines))
"""


@dataclass
class Built:
    path: Path
    kernels: int
    asserting: int
    wrapper_mb: float
    cpp_mb: float


def _launch(text: str, kernel: str) -> str:
    """The launch of `kernel` in run_impl: its `_xnumel` line (when there is one) and the call."""
    m = re.search(rf"(    int64_t {kernel}_xnumel = [^\n]*\n)?    call_{kernel}\([^\n]*\n", text)
    if m is None:
        raise SystemExit(f"no launch of {kernel} in the wrapper")
    return m.group(0)


CPU_KERNEL = re.compile(r'extern "C"\s+void\s+(cpp_fused_\w+)\([^;{]*\)\s*\{.*?\n\}\n', re.S)


def build(src: Path, mb: float, weights_gb: float, assert_every: int, workdir: Path) -> Built:
    """A package whose wrapper has about `mb` MB: the source's helpers and launches replicated (a CPU
    package: its C++ kernels, their declarations and launches, to `mb` MB of C++ in all)."""
    tag = "_".join(src.parts[-3:]).replace(".stripped.pt2", "").replace(".", "_")
    path = workdir / f"{tag}_{mb:g}mb_{weights_gb:g}gb_a{assert_every}.pt2"
    meta_path = path.with_suffix(".json")
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        return Built(path, **meta)
    with zipfile.ZipFile(src) as zin:
        if not any(HELPER.search(zin.read(n).decode()) for n in zin.namelist() if n.endswith(".wrapper.cpp")):
            return _build_cpu(zin, path, mb, weights_gb, assert_every)
        names = zin.namelist()
        wrapper_name = next(x for x in names if x.endswith(".wrapper.cpp"))
        text = zin.read(wrapper_name).decode()
        helpers = {m.group(1): m.group(0) for m in HELPER.finditer(text)}
        launches = {k: _launch(text, k) for k in helpers}
        asserting = [k for k, h in helpers.items() if "device_assert" in h]
        plain = [k for k in helpers if k not in asserting] or asserting
        decls = {k: re.search(rf"    CUfunction {k}\{{nullptr\}};\n", text) for k in helpers}
        target = int(mb * 2**20)
        new_helpers, new_launches, new_decls = [], [], []
        size, i, n_assert = len(text), 0, 0
        next_index = 1 + max(int(k.rsplit("_", 1)[1]) for k in helpers)
        while size < target:
            use_assert = bool(asserting) and i % assert_every == assert_every - 1
            pool = asserting if use_assert else plain
            kernel = pool[(i // assert_every if use_assert else i) % len(pool)]
            new = f"{kernel.rsplit('_', 1)[0]}_{next_index + i}"
            # `call_<k>(`, `<k>_xnumel`, `kernels_.<k>`, `'<k>'`, `def <k>(`: not `<k>7`.
            rename = re.compile(rf"(?<![A-Za-z0-9]){kernel}(?![0-9])")
            parts = [rename.sub(new, helpers[kernel]), rename.sub(new, launches[kernel])]
            if decls[kernel] is not None:
                parts.append(rename.sub(new, decls[kernel].group(0)))
            new_helpers.append(parts[0])
            new_launches.append(parts[1])
            if len(parts) > 2:
                new_decls.append(parts[2])
            size += sum(len(p) for p in parts)
            n_assert += use_assert
            i += 1
        last_helper = list(helpers.values())[-1]
        last_launch = max(launches.values(), key=text.index)
        text = text.replace(last_helper, last_helper + "\n".join(new_helpers), 1)
        text = text.replace(last_launch, last_launch + "".join(new_launches), 1)
        first_decl = next((d.group(0) for d in decls.values() if d is not None), None)
        if first_decl is not None:
            text = text.replace(first_decl, first_decl + "".join(new_decls), 1)
        return _write(zin, path, {wrapper_name: text.encode()}, weights_gb,
                      {"kernels": len(helpers) + i, "asserting": len(asserting) + n_assert,
                       "wrapper_mb": len(text) / 2**20})


def _build_cpu(zin: zipfile.ZipFile, path: Path, mb: float, weights_gb: float, assert_every: int) -> Built:
    """A CPU package grown to about `mb` MB of C++: each `cpp_fused_*` kernel of its kernel member
    replicated under a new name with its `extern "C"` declaration and its launch in the wrapper; one
    copy in `assert_every` from the kernels with an AOTI_TORCH_CHECK."""
    names = zin.namelist()
    wrapper_name = next(x for x in names if x.endswith(".wrapper.cpp"))
    kernel_name = next(x for x in names if x.endswith(".kernel.cpp"))
    wrapper, kernel = zin.read(wrapper_name).decode(), zin.read(kernel_name).decode()
    bodies = {m.group(1): m.group(0) for m in CPU_KERNEL.finditer(kernel)}
    decls = {k: re.search(rf'extern "C"\s+void\s+{k}\([^;{{]*\);\n', wrapper) for k in bodies}
    launches = {k: re.search(rf"\n    {k}\([^\n]*\n", wrapper) for k in bodies}
    bodies = {k: v for k, v in bodies.items() if decls[k] and launches[k]}
    asserting = [k for k, b in bodies.items() if "AOTI_TORCH_CHECK" in b]
    plain = [k for k in bodies if k not in asserting] or asserting
    target, size, i, n_assert = int(mb * 2**20), len(wrapper) + len(kernel), 0, 0
    new_bodies, new_decls, new_launches = [], [], []
    while size < target:
        use_assert = bool(asserting) and i % assert_every == assert_every - 1
        pool = asserting if use_assert else plain
        k = pool[(i // assert_every if use_assert else i) % len(pool)]
        rename = re.compile(rf"(?<![A-Za-z0-9_]){k}(?![A-Za-z0-9_])")
        new = f"{k}_r{i}"
        parts = [rename.sub(new, bodies[k]), rename.sub(new, decls[k].group(0)),
                 rename.sub(new, launches[k].group(0)[1:])]
        new_bodies.append(parts[0])
        new_decls.append(parts[1])
        new_launches.append(parts[2])
        size += sum(len(p) for p in parts)
        n_assert += use_assert
        i += 1
    last_body = list(bodies.values())[-1]
    kernel = kernel.replace(last_body, last_body + "".join(new_bodies), 1)
    last_decl = max((d.group(0) for d in decls.values() if d), key=wrapper.index)
    last_launch = max((m.group(0) for m in launches.values() if m), key=wrapper.index)
    wrapper = wrapper.replace(last_launch, last_launch + "".join(new_launches), 1)
    wrapper = wrapper.replace(last_decl, last_decl + "".join(new_decls), 1)
    return _write(zin, path, {wrapper_name: wrapper.encode(), kernel_name: kernel.encode()}, weights_gb,
                  {"kernels": len(bodies) + i, "asserting": len(asserting) + n_assert,
                   "wrapper_mb": max(len(wrapper), len(kernel)) / 2**20})


def _write(zin: zipfile.ZipFile, path: Path, replaced: dict[str, bytes], weights_gb: float, meta: dict) -> Built:
    root = next(iter(replaced)).split("/", 1)[0]
    tmp = path.with_suffix(".tmp")
    cpp = 0
    # Level 1: the weights are zeros and the C++ compresses well at any level.
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout:
        for name in zin.namelist():
            data = replaced.get(name) or zin.read(name)
            if name.endswith(".cpp"):
                cpp += len(data)
            if not name.endswith((".so", ".cubin")):
                zout.writestr(name, data)
        if weights_gb > 0:
            chunk = bytes(1 << 24)
            left = int(weights_gb * 2**30)
            with zout.open(f"{root}/data/weights/weight_0", "w", force_zip64=True) as fh:
                while left > 0:
                    fh.write(chunk[:min(left, len(chunk))])
                    left -= len(chunk)
    meta["cpp_mb"] = cpp / 2**20
    tmp.rename(path)
    path.with_suffix(".json").write_text(json.dumps(meta))
    return Built(path, **meta)


# Linux carries the peak RSS of the process that forked a child over its exec (ru_maxrss of a child
# of this script, which holds the 50 MB packages it built, starts at this script's size). A small
# process in between starts the child and reports the child's own usage: RUSAGE_CHILDREN of a
# process with one child.
LAUNCH = """
import os, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.call(sys.argv[1:])
wall = time.perf_counter() - start
u = resource.getrusage(resource.RUSAGE_CHILDREN)
os.write(2, f"\\n@usage {code} {wall} {u.ru_utime + u.ru_stime} {u.ru_maxrss * 1024}\\n".encode())
"""


def run_child(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[float, float, int, bytes]:
    """Wall seconds, CPU seconds (user + system), peak RSS (bytes) of this child alone, stdout."""
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *argv], capture_output=True, cwd=cwd,
                          env={**CHILD_ENV, **(env or {})})
    err, _, usage = proc.stderr.rpartition(b"\n@usage ")
    code, wall, cpu, peak = usage.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {int(code)}: {err.decode()[-2000:]}")
    return float(wall), float(cpu), int(peak), proc.stdout


CHECK_EXTRA: list[str] = []  # --timeout S: a loaded machine's wall clock must not trip the default limit


def check_argv(path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "analyzer", "check", "--format", "json", *CHECK_EXTRA, *extra, str(path)]


def measure(built: Built, repeat: int, baseline: Path | None = None,
            baseline_env: dict[str, str] | None = None, warm: bool = True,
            triton_floor: bool = False) -> dict[str, float]:
    checks, floors, check_cpu, floor_cpu, rss, base, findings = [], [], [], [], [], [], None
    triton_cpu: list[float] = []
    if warm:
        run_child(check_argv(built.path), cwd=REPO)  # untimed: writes bytecode, warms the page cache
    if baseline is not None:
        run_child(check_argv(built.path), cwd=baseline, env=baseline_env)
    load = os.getloadavg()[0]
    for _ in range(repeat):  # interleaved, so drift in machine load hits all alike
        wall, cpu, _, _ = run_child([sys.executable, "-c", FLOOR, str(built.path)])
        floors.append(wall)
        floor_cpu.append(cpu)
        if triton_floor:
            triton_cpu.append(run_child([sys.executable, "-c", TRITON_FLOOR, str(built.path), EMBEDDED_TRITON])[1])
        wall, cpu, peak, out = run_child(check_argv(built.path), cwd=REPO)
        checks.append(wall)
        check_cpu.append(cpu)
        rss.append(peak)
        findings = len(json.loads(out)["findings"])
        if baseline is not None:
            base.append(run_child(check_argv(built.path), cwd=baseline, env=baseline_env))
    check_s, parse_s = statistics.median(checks), statistics.median(floors)
    check_cpu_s, parse_cpu_s = statistics.median(check_cpu), statistics.median(floor_cpu)
    out = {"check_s": check_s, "parse_s": parse_s, "ratio": check_s / parse_s, "check_cpu": check_cpu_s,
           "parse_cpu": parse_cpu_s, "cpu_ratio": check_cpu_s / parse_cpu_s, "rss_mb": max(rss) / 2**20,
           "s_per_mb": check_s / built.wrapper_mb, "cpu_s_per_mb": check_cpu_s / built.wrapper_mb,
           "findings": findings, "load": (load + os.getloadavg()[0]) / 2}
    if base:
        out["base_ratio"] = statistics.median(b[0] for b in base) / parse_s
        out["base_cpu_ratio"] = statistics.median(b[1] for b in base) / parse_cpu_s
        out["base_wall_cpu"] = statistics.median(b[0] / b[1] for b in base)
        out["base_rss_mb"] = max(b[2] for b in base) / 2**20
    if triton_cpu:
        out["triton_cpu"] = statistics.median(triton_cpu)
        out["triton_cpu_ratio"] = check_cpu_s / out["triton_cpu"]
    out["wall_cpu"] = statistics.median(w / c for w, c in zip(checks, check_cpu))
    return out


def profile(built: Built, top: int) -> None:
    """cProfile of one in-process check (the same work as the subprocess, minus start-up)."""
    sys.path.insert(0, str(REPO))
    from analyzer.app import api

    prof = cProfile.Profile()
    prof.enable()
    api.lint([str(built.path)])
    prof.disable()
    for key in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats(key).print_stats(top)
        lines = buf.getvalue().splitlines()
        start = next(i for i, line in enumerate(lines) if "ncalls" in line)
        print(f"\nprofile of {built.path.name}, by {key}:")
        print("\n".join(lines[start - 1:start + top + 1]))


def jobs(src: Path, args: argparse.Namespace, workdir: Path) -> None:
    """-j1 against -j2 (and -j<cores>) over --jobs copies of a --jobs-mb package (distinct files):
    wall time, and CPU time of the whole process tree (the workers are waited for, so wait4's
    usage includes them): on a loaded machine the wall speed-up says little, the CPU time says
    what -j costs (forking, sending results back)."""
    built = build(src, args.jobs_mb, 0, args.assert_every, workdir)
    folder = workdir / f"jobs_{args.jobs}x{args.jobs_mb:g}mb"
    folder.mkdir(exist_ok=True)
    paths = []
    for i in range(args.jobs):
        copy = folder / f"pkg_{i}.pt2"
        if not copy.exists():
            copy.write_bytes(built.path.read_bytes())
        paths.append(str(copy))
    cores = os.cpu_count() or 1
    print(f"\n-j: {args.jobs} packages of {built.wrapper_mb:.1f} MB ({built.kernels} kernels each), "
          f"medians of {args.repeat}, {cores} cores:")
    print(f"{'-j':>4} {'wall_s':>8} {'speed-up':>9} {'CPU_s':>7} {'CPU vs -j1':>10} {'load':>5}")
    base_wall = base_cpu = None
    for j in sorted({1, 2, cores}):
        load = os.getloadavg()[0]
        runs = [run_child([*check_argv(Path(paths[0]), "-j", str(j))[:-1], *paths], cwd=REPO)
                for _ in range(args.repeat)]
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        base_wall, base_cpu = base_wall or wall, base_cpu or cpu
        load = (load + os.getloadavg()[0]) / 2
        print(f"{j:>4} {wall:>8.2f} {base_wall / wall:>9.2f} {cpu:>7.2f} {cpu / base_cpu:>10.2f} {load:>5.1f}",
              flush=True)


def weights(src: Path, args: argparse.Namespace, workdir: Path) -> None:
    """The same 1 MB package with no weights and with --weights-gb of them: the weights member is
    never inflated, so the check costs the same."""
    rows = []
    for gb in (0.0, args.weights_gb):
        built = build(src, 1, gb, args.assert_every, workdir)
        runs = [run_child(check_argv(built.path), cwd=REPO) for _ in range(args.repeat)]
        rows.append((gb, statistics.median(r[1] for r in runs), max(r[2] for r in runs) / 2**20,
                     built.path.stat().st_size / 2**20))
    print("\nweights member (1 MB wrapper): " + "; ".join(
        f"{gb:g} GiB ({size:.0f} MB on disk): check CPU {cpu:.2f} s, RSS {rss:.0f} MB" for gb, cpu, rss, size in rows))


# The default sources: one of each family, from three torch versions.
SOURCES = [
    ("GPT-2 48 layers, CUDA, torch 2.11 (Triton)", REPO / "fixtures" / "large" / "gpt2_48.cuda.stripped.pt2"),
    ("small_transformer, CUDA, torch 2.11 (Triton)", DEFAULT_PACKAGE),
    ("OPT, CPU, torch 2.13 (C++ kernels)", REPO / "fixtures" / "stranger3" / "opt.cpu.stripped.pt2"),
    ("Mixtral MoE, CPU, torch 2.13 (C++ kernels)", REPO / "fixtures" / "stranger" / "mixtral.cpu.stripped.pt2"),
    ("pos_embedding, CPU, torch 2.8 (C++ kernels)", REPO / "fixtures" / "versions" / "2.8" / "pos_embedding.cpu.stripped.pt2"),
]
README = REPO / "README.md"
BEGIN, END = "<!-- generated: bench/bench.py -->", "<!-- end: bench/bench.py -->"


@dataclass
class Row:
    source: str
    built: Built
    r: dict[str, float]

    @property
    def target_mb(self) -> float:
        return 3 * self.built.wrapper_mb + 100  # peak RSS target: 3x the largest text member + 100 MB

    def markdown(self) -> str:
        r, b = self.r, self.built
        extra = f" {r['triton_cpu']:.2f} s | {r['triton_cpu_ratio']:.2f} |" if "triton_cpu" in r else ""
        return (f"| {self.source} | {b.cpp_mb:.1f} MB, {b.kernels} kernels ({b.asserting} with checks) | "
                f"{r['check_s']:.2f} s / {r['parse_s']:.2f} s | {r['ratio']:.2f} | "
                f"{r['check_cpu']:.2f} s / {r['parse_cpu']:.2f} s | {r['cpu_ratio']:.2f} | "
                f"{r['rss_mb']:.0f} MB ({self.target_mb:.0f} MB) | {r['load']:.1f} |{extra}")


def headline(rows: list[Row]) -> str:
    """The worst row at 12 MB and more (CPU ratio) and the worst peak RSS against its target."""
    big = [row for row in rows if row.built.cpp_mb >= 10] or rows
    cpu = max(big, key=lambda row: row.r["cpu_ratio"])
    wall = max(big, key=lambda row: row.r["ratio"])
    rss = max(rows, key=lambda row: row.r["rss_mb"] / row.target_mb)
    return (f"Worst row at 12 MB and more: CPU ratio **{cpu.r['cpu_ratio']:.2f}** ({cpu.source}, "
            f"{cpu.built.cpp_mb:.0f} MB); wall ratio **{wall.r['ratio']:.2f}** ({wall.source}, "
            f"{wall.built.cpp_mb:.0f} MB); peak RSS **{rss.r['rss_mb']:.0f} MB** against a target of "
            f"{rss.target_mb:.0f} MB ({rss.source}, {rss.built.cpp_mb:.0f} MB).")


def markdown(rows: list[Row], command: str, repeat: int) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [f"{headline(rows)}", "",
             f"`{command}`, {when}, {os.cpu_count()} cores, medians of {repeat} (a shared machine: the load "
             "column is its 1-minute load average during the row; wall times there are mostly waiting for a core, "
             "CPU times are the ones to compare):", "",
             "| source | C++ | wall: check / floor | wall ratio | CPU: check / floor | CPU ratio | "
             "peak RSS (target) | load |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    if any("triton_cpu" in row.r for row in rows):  # --triton-floor: two more columns
        lines[-2] += " CPU: floor with Triton parsed | CPU ratio to it |"
        lines[-1] += " --- | --- |"
    lines += [row.markdown() for row in rows]
    return "\n".join(lines) + "\n"


def write_readme(text: str) -> None:
    readme = README.read_text()
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md has no {BEGIN} ... {END} block")
    README.write_text(readme[:start + len(BEGIN)] + "\n" + text + readme[end:])


def hostile(workdir: Path) -> None:
    """The three hostile texts of bench/hostile_text.py at full size, at default limits."""
    sys.path.insert(0, str(REPO / "bench"))
    import hostile_text

    print("\nhostile text (default limits):")
    for name, build_case in (("55 MiB of statements in a function nothing reads", lambda d: hostile_text.unread_statements(d, 55)),
                             ("1,000,000 AOTI_TORCH_CHECK lines in one kernel", lambda d: hostile_text.check_lines(d, 1_000_000)),
                             ("one 20 MB line", lambda d: hostile_text.long_line(d, 20))):
        path = build_case(workdir)
        wall, cpu, peak, out = run_child(check_argv(path), cwd=REPO)
        rules = sorted({f["rule"] for f in json.loads(out)["findings"]})
        print(f"  {name}: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {peak / 2**20:.0f} MB; rules {', '.join(rules)}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, nargs="+", default=None,
                        help="sources to replicate (default: one of each family, see SOURCES)")
    parser.add_argument("--mb", type=float, nargs="+", default=[1, 12, 50], help="wrapper sizes")
    parser.add_argument("--weights-gb", type=float, default=2.0)
    parser.add_argument("--assert-every", type=int, default=50,
                        help="one replicated kernel in N comes from a kernel with assertions")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "aoti-lint-bench")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest package")
    parser.add_argument("--readme", action="store_true", help="rewrite the README's generated table")
    parser.add_argument("--hostile", action="store_true", help="also run the three hostile texts at full size")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--timeout", type=float, default=None,
                        help="--timeout of every check (a loaded machine: wall time past the default 120 s)")
    parser.add_argument("--jobs", type=int, default=8, help="also time -j over this many packages (0: no)")
    parser.add_argument("--jobs-mb", type=float, default=4.0)
    parser.add_argument("--triton-floor", action="store_true",
                        help="also time a floor that parses each embedded Triton source with ast (more columns)")
    parser.add_argument("--no-weights-row", action="store_true", help="skip the 1 MB with/without weights row")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. an older commit) whose check is timed alongside")
    parser.add_argument("--baseline-env", action="append", default=[], metavar="KEY=VALUE",
                        help="set in the baseline's environment (AOTI_LINT_WORKER=0: the same code, serial)")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.timeout is not None:
        CHECK_EXTRA.extend(["--timeout", str(args.timeout)])
    sources = SOURCES if args.package is None else [(p.name.split(".")[0], p) for p in args.package]
    # `python -m analyzer` runs the checkout it is started in: this one, and --baseline.
    print(f"sources {', '.join(p.name for _, p in sources)}; weights {args.weights_gb:g} GiB per package; "
          f"medians of {args.repeat}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
          + (f"; baseline {args.baseline} {' '.join(args.baseline_env)}" if args.baseline else ""))
    header = (f"{'C++ MB':>7} {'largest':>7} {'kernels':>8} {'w/ check':>8} {'findings':>8} {'check_s':>8} "
              f"{'parse_s':>8} {'ratio':>6} {'check_cpu':>9} {'parse_cpu':>9} {'CPU ratio':>9} {'RSS MB':>7} "
              f"{'target':>7} {'wall/CPU':>8} {'CPU s/MB':>8} {'+CPU s/MB':>9} {'load':>5}"
              + (f" {'base ratio':>10} {'base CPU ratio':>14} {'base wall/CPU':>13} {'base RSS':>8}"
                 if args.baseline else "")
              + (f" {'triton_cpu':>10} {'triton ratio':>12}" if args.triton_floor else ""))
    rows: list[Row] = []
    built = None
    for label, src in sources:
        print(f"\n{label} ({src.relative_to(REPO) if src.is_relative_to(REPO) else src}):\n{header}")
        previous = None
        for mb in args.mb:
            built = build(src, mb, args.weights_gb, args.assert_every, args.workdir)
            # Bytecode is written by the first check; the larger sizes skip the untimed run.
            r = measure(built, args.repeat, args.baseline, dict(e.split("=", 1) for e in args.baseline_env),
                        warm=mb == args.mb[0], triton_floor=args.triton_floor)
            row = Row(label, built, r)
            rows.append(row)
            # Marginal CPU per MB against the previous size: the start-up (interpreter, imports, queries)
            # is paid once, so "flat time per MB" is this column.
            marginal = (r["check_cpu"] - previous[1]) / (built.cpp_mb - previous[0]) if previous else float("nan")
            previous = (built.cpp_mb, r["check_cpu"])
            print(f"{built.cpp_mb:>7.1f} {built.wrapper_mb:>7.1f} {built.kernels:>8} {built.asserting:>8} "
                  f"{r['findings']:>8} {r['check_s']:>8.2f} {r['parse_s']:>8.2f} {r['ratio']:>6.2f} "
                  f"{r['check_cpu']:>9.2f} {r['parse_cpu']:>9.2f} {r['cpu_ratio']:>9.2f} {r['rss_mb']:>7.0f} "
                  f"{row.target_mb:>7.0f} {r['wall_cpu']:>8.2f} {r['check_cpu'] / built.cpp_mb:>8.3f} "
                  f"{marginal:>9.3f} {r['load']:>5.1f}"
                  + (f" {r['base_ratio']:>10.2f} {r['base_cpu_ratio']:>14.2f} {r['base_wall_cpu']:>13.2f} "
                     f"{r['base_rss_mb']:>8.0f}" if "base_cpu_ratio" in r else "")
                  + (f" {r['triton_cpu']:>10.2f} {r['triton_cpu_ratio']:>12.2f}" if "triton_cpu" in r else ""),
                  flush=True)
    print("\n" + headline(rows))
    if args.readme:
        command = "python bench/bench.py " + " ".join(sys.argv[1:])
        write_readme(markdown(rows, command.strip(), args.repeat))
        print("(README.md's table rewritten)")
    if args.profile and built is not None:
        profile(built, args.top)
    first = sources[0][1]
    if args.weights_gb > 0 and not args.no_weights_row:
        weights(first, args, args.workdir)
    if args.jobs:
        jobs(first, args, args.workdir)
    if args.hostile:
        hostile(args.workdir)


if __name__ == "__main__":
    main()
