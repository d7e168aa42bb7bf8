#!/usr/bin/env python
"""Run aoti-lint inspect/check (json) on every package in a folder; print a compact summary.
    python stress/lint_all.py DIR [GLOB]     (default GLOB '*.cpu.pt2')"""
import json, subprocess, sys
from pathlib import Path
LINT = str(Path(sys.executable).parent / "aoti-lint")
d = Path(sys.argv[1]); glob = sys.argv[2] if len(sys.argv) > 2 else "*.cpu.pt2"
out = {}
for pkg in sorted(d.glob(glob)):
    if pkg.name.endswith(".stripped.pt2") and glob == "*.cpu.pt2":
        continue
    rec = {}
    for cmd in ("inspect", "check"):
        r = subprocess.run([LINT, cmd, str(pkg), "--format", "json"], capture_output=True, text=True)
        rec[cmd + "_rc"] = r.returncode
        if "Traceback" in r.stderr or r.returncode == 2:
            print(f"!!! {pkg.name} {cmd} rc={r.returncode} stderr: {r.stderr[-2000:]}")
        try:
            rec[cmd] = json.loads(r.stdout)
        except Exception:
            rec[cmd] = None
    out[pkg.name] = rec
    print(f"=== {pkg.name}  inspect rc={rec['inspect_rc']} check rc={rec['check_rc']}")
    ins = rec["inspect"]
    if ins:
        for m in ins["models"]:
            for i in m["inputs"]:
                dims = ", ".join(f"{x.get('symbol') or ''}{'='+str(x['value']) if 'value' in x and x.get('value') is not None else ''}[{x.get('min')},{x.get('max')}]{x.get('enforced') or ''}" for x in i["dims"])
                print(f"  in{i['index']} {i['name']} {i.get('dtype')}: {dims}")
            for a in m["assertions"]:
                print(f"  A {a['kernel']}: {a['message']!r} bound_expr={a['bound_expr']} bs={[(s['input'], s['dim']) for s in a['bound_sources']]} is={[s['input'] for s in a['index_sources']]} ext={a.get('index_extent')} linked={a['linked']} {a.get('unlinked_reason') or ''}")
                for c in a["chain"]:
                    print(f"       | {c}")
            for p in m.get("problems", []):
                print(f"  PROBLEM {p}")
    chk = rec["check"]
    if chk:
        for f in chk["findings"]:
            print(f"  F {f['code']} {f['severity']} in{f['input']} d{f['dim']} {f['symbol']} {f['kernel']}: {f['message'][:260]}")
            if f.get("witness"):
                print(f"       witness: {f['witness']}")
json.dump(out, open(d / f"lint_{glob.replace('*','all').replace('.pt2','')}.json", "w"), indent=1)
