#!/usr/bin/env python
"""Build the stress corpus: python stress/build.py --device cpu|cuda --out DIR [--only N ...] [--jobs N]

Each model is exported (dynamic shapes on every input that can be dynamic) and compiled with
aoti_compile_and_package in its own subprocess; failures are logged to DIR/build_logs/NAME.DEV.log
and summarised in DIR/build_summary.DEV.json. With --strip a NAME.DEV.stripped.pt2 (no .so/.cubin/.o/
weights) is written beside the complete NAME.DEV.pt2 (fixtures/generate.py's strip_package).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures"))


def _to(obj, device):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    return obj


def build_one(name, device, out: Path, strip: bool) -> dict:
    import torch
    from models import SPECS

    spec = SPECS[name]
    torch.manual_seed(0)
    model = spec.model().eval().to(device)
    args = _to(spec.example(), device)
    rec = {"name": name, "device": device}
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, args, dynamic_shapes=spec.dynamic())
    rec["export_s"] = round(time.time() - t0, 1)
    rec["range_constraints"] = {str(k): str(v) for k, v in ep.range_constraints.items()}
    if device == "cpu":
        torch.export.save(ep, str(out / f"{name}.ep.pt2"))
    pkg = out / f"{name}.{device}.pt2"
    t0 = time.time()
    torch._inductor.aoti_compile_and_package(ep, package_path=str(pkg))
    rec["compile_s"] = round(time.time() - t0, 1)
    if strip:
        from generate import strip_package

        rec["dropped"] = strip_package(pkg, out / f"{name}.{device}.stripped.pt2")
    return rec


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="+")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--strip", action="store_true")
    p.add_argument("--timeout", type=int, default=400)
    p.add_argument("--_child", action="store_true")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a._child:
        name = a.only[0]
        try:
            rec = build_one(name, a.device, out, a.strip)
            rec["ok"] = True
        except Exception as e:  # noqa: BLE001
            import traceback

            traceback.print_exc()
            rec = {"name": name, "device": a.device, "ok": False, "error": f"{type(e).__name__}: {e}"[:3000]}
        (out / f".{name}.{a.device}.json").write_text(json.dumps(rec, indent=1))
        return 0
    from models import SPECS

    names = a.only or list(SPECS)
    logs = out / "build_logs"
    logs.mkdir(exist_ok=True)

    def run(name):
        t0 = time.time()
        cmd = [sys.executable, __file__, "--_child", "--device", a.device, "--out", str(out), "--only", name]
        if a.strip:
            cmd.append("--strip")
        with open(logs / f"{name}.{a.device}.log", "w") as fh:
            try:
                rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, timeout=a.timeout).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        rf = out / f".{name}.{a.device}.json"
        rec = json.loads(rf.read_text()) if rf.exists() else {"name": name, "ok": False, "error": f"child rc={rc}, no result"}
        rf.unlink(missing_ok=True)
        rec["wall_s"] = round(time.time() - t0, 1)
        print(f"[{rec['wall_s']:6.1f}s] {name}.{a.device}: {'ok' if rec['ok'] else 'FAILED ' + rec['error'][:300]}", flush=True)
        return rec

    with ThreadPoolExecutor(a.jobs) as ex:
        res = list(ex.map(run, names))
    sf = out / f"build_summary.{a.device}.json"
    if a.only and sf.exists():
        prev = [r for r in json.loads(sf.read_text()) if r["name"] not in names]
        res = prev + res
    sf.write_text(json.dumps(res, indent=1))
    print(f"built {sum(r['ok'] for r in res)}/{len(res)}")


if __name__ == "__main__":
    sys.exit(main())
