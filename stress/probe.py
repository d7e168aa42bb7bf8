#!/usr/bin/env python
"""Run the complete CPU stress packages and route failures back with `aoti-lint why`.

    python stress/probe.py --pkgdir /tmp/stress [--only NAME ...] --json OUT.json

For each package: (a) every probe in models.SPECS (normal / empty dims / out-of-range indices),
(b) every check finding that carries a witness: inputs built from the witness shapes (dtypes of the
example inputs; integer inputs zero-filled, float randn, bool False), run in a subprocess.
Each failing run's raw stderr goes to PKGDIR/logs/NAME.LABEL.log and is fed to
`aoti-lint why PKG --log FILE --format json`; the top candidate is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
LINT = str(Path(sys.executable).parent / "aoti-lint")


def _summ(o):
    import torch

    if isinstance(o, (list, tuple)):
        return [_summ(x) for x in o]
    d = {"shape": list(o.shape), "dtype": str(o.dtype).replace("torch.", "")}
    if o.is_floating_point() and o.numel():
        d["nan"] = int(torch.isnan(o).sum())
    return d


def _witness_inputs(name, witness, order):
    """witness 'arg0_1.shape = (0, 8), arg1_1.shape = (3,)'; order: input name -> position."""
    import torch
    from models import SPECS

    ex = list(SPECS[name].example())
    shapes = dict(ex and {})
    for m in re.finditer(r"(\w+)\.shape = \(([^)]*)\)", witness):
        dims = tuple(int(x) for x in m.group(2).replace(" ", "").split(",") if x)
        shapes[order[m.group(1)]] = dims
    args = []
    for i, e in enumerate(ex):
        shp = shapes.get(i, tuple(e.shape))
        if e.dtype == torch.bool:
            args.append(torch.zeros(shp, dtype=torch.bool))
        elif e.is_floating_point():
            args.append(torch.randn(shp, dtype=e.dtype))
        else:
            args.append(torch.zeros(shp, dtype=e.dtype))
    return tuple(args)


def _child(pkg, name, kind, arg, order_json, result):
    import torch
    from models import SPECS

    spec = SPECS[name]
    torch.manual_seed(1)
    if kind == "probe":
        args = dict(spec.probes)[arg]()
    else:
        args = _witness_inputs(name, arg, json.loads(order_json))
    res = {"inputs": [list(a.shape) for a in args]}
    torch.manual_seed(0)
    model = spec.model().eval()
    try:
        with torch.no_grad():
            res["eager"] = {"ok": True, "out": _summ(model(*args))}
    except Exception as e:  # noqa: BLE001
        res["eager"] = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    Path(result).write_text(json.dumps(res))
    compiled = torch._inductor.aoti_load_package(pkg)
    try:
        out = compiled(*args)
    except Exception as e:  # noqa: BLE001
        res["aoti"] = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        Path(result).write_text(json.dumps(res))
        raise
    res["aoti"] = {"ok": True, "out": _summ(out)}
    Path(result).write_text(json.dumps(res))


def run_case(pkg, name, kind, arg, order, logdir, label):
    with tempfile.TemporaryDirectory() as td:
        rf = Path(td) / "r.json"
        cmd = [sys.executable, __file__, "--_child", str(pkg), name, kind, arg, json.dumps(order), str(rf)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, err = "timeout", (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        res = json.loads(rf.read_text()) if rf.exists() else {}
    res.update(name=name, kind=kind, label=label, arg=arg, rc=rc)
    if "aoti" not in res:
        tail = [ln for ln in err.splitlines() if ln.strip() and "NumPy" not in ln and "_conversion_method" not in ln]
        res["aoti"] = {"ok": False, "error": f"process rc={rc}", "stderr_tail": tail[-4:]}
    if rc != 0 or not res["aoti"]["ok"]:
        logdir.mkdir(parents=True, exist_ok=True)
        log = logdir / f"{name}.{label}.log"
        log.write_text(err)
        res["log"] = str(log)
        w = subprocess.run([LINT, "why", str(pkg), "--log", str(log), "--format", "json"], capture_output=True, text=True)
        res["why_rc"] = w.returncode
        try:
            wj = json.loads(w.stdout)
            c = wj.get("candidates") or []
            res["why_top"] = {k: c[0].get(k) for k in ("kernel", "message", "bound_sources", "index_sources", "cause")} if c else None
            res["why_n"] = len(c)
            res["why_failure"] = wj.get("failure")
        except Exception:  # noqa: BLE001
            res["why_raw"] = (w.stdout + w.stderr)[-1500:]
    return res


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--_child":
        _child(*sys.argv[2:8])
        return 0
    from models import SPECS

    p = argparse.ArgumentParser()
    p.add_argument("--pkgdir", default="/tmp/stress")
    p.add_argument("--only", nargs="+")
    p.add_argument("--json", default="/tmp/stress/probe_results.json")
    p.add_argument("--no-probes", action="store_true")
    p.add_argument("--no-witness", action="store_true")
    a = p.parse_args()
    d = Path(a.pkgdir)
    allres = []
    for name in a.only or SPECS:
        pkg = d / f"{name}.cpu.pt2"
        if not pkg.exists():
            print(f"{name}: no package")
            continue
        ins = json.loads(subprocess.run([LINT, "inspect", str(pkg), "--format", "json"], capture_output=True, text=True).stdout)
        order = {i["name"]: i["index"] for i in ins["models"][0]["inputs"]}
        cases = []
        if not a.no_probes:
            cases += [("probe", lab, lab) for lab, _ in SPECS[name].probes]
        if not a.no_witness:
            chk = json.loads(subprocess.run([LINT, "check", str(pkg), "--format", "json"], capture_output=True, text=True).stdout)
            seen = set()
            for k, f in enumerate(chk["findings"]):
                if f.get("witness") and f["witness"] not in seen:
                    seen.add(f["witness"])
                    cases.append(("witness", f["witness"], f"w{k}_{f['code']}"))
        for kind, arg, label in cases:
            r = run_case(pkg, name, kind, arg, order, d / "logs", label)
            allres.append(r)
            ao, ea = r["aoti"], r.get("eager", {})
            aw = "ok " + json.dumps(ao["out"]) if ao["ok"] else ao["error"] + " " + " | ".join(ao.get("stderr_tail", []))[-200:]
            ew = "ok" if ea.get("ok") else ea.get("error")
            why = ""
            if "why_top" in r or "why_raw" in r:
                wt = r.get("why_top")
                why = f"\n      why rc={r['why_rc']} n={r.get('why_n')} top={json.dumps(wt)[:400] if wt else r.get('why_raw', '')[-300:]}"
            print(f"{name:18s} {label:22s} {r['inputs'] if 'inputs' in r else ''} rc={r['rc']} aoti: {aw[:300]} | eager: {ew}{why}", flush=True)
    Path(a.json).write_text(json.dumps(allres, indent=1))


if __name__ == "__main__":
    sys.exit(main())
