#!/usr/bin/env python
"""Independent (regex-only) check of each AOTI_TORCH_CHECK bound in extracted CPU packages:
kernel params -> launch args in run_impl -> `int64_t sNN = argK_1_size[d]` / aliases.
    python stress/verify_links.py /tmp/sx/NAME ..."""
import re, sys, glob
for root in sys.argv[1:]:
    W = glob.glob(f"{root}/**/*.wrapper.cpp", recursive=True)[0]
    ks = glob.glob(f"{root}/**/*.kernel.cpp", recursive=True)
    w = open(W).read()
    binds = dict(re.findall(r"int64_t (\w+) = ([^;]+);", w.split("run_impl(")[-1]))
    info = dict(re.findall(r'inputs_info_\[(\d+)\]\.name = "(\w+)"', w))
    print(f"=== {root}  inputs_info_={info}")
    print("    bindings:", {k: v for k, v in binds.items() if not k.startswith(('int_array', 'tmp'))})
    src = w + "".join(open(k).read() for k in ks)
    for m in re.finditer(r'extern "C"\s+void\s+(\w+)\(([^)]*)\)\s*\{', src):
        name, params = m.group(1), [p.split()[-1] for p in m.group(2).split(",")]
        body = src[m.end(): src.find('extern "C"', m.end()) if src.find('extern "C"', m.end()) > 0 else len(src)]
        checks = re.findall(r'AOTI_TORCH_CHECK\(.*?"(index out of bounds:[^"]*)"', body)
        launches = [l for l in re.findall(rf"^\s*{name}\((.*)\);$", w, re.M)]
        if not checks:
            continue
        for l in launches:
            args = [a.strip() for a in re.split(r",(?![^()]*\))", l)]
            amap = {p: args[i] for i, p in enumerate(params) if i < len(args)}
            for c in sorted(set(checks)):
                bound = c.split("<")[-1].strip()
                kss = re.findall(r"ks\d+", bound)
                print(f"  {name}: {c!r}: " + ", ".join(f"{k}=arg{params.index(k)}={amap.get(k)} -> {binds.get(amap.get(k), '?')}" for k in kss))
