"""`aoti-lint why` output: the candidate causes as a readable report or the `aoti-lint.why/1` JSON."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from ..core.messages import WHY
from ..explain.why import Candidate, Failure, WhyResult
from ..core.untrusted import terminal as t, terminal_lines
from ..explain.why.evidence import Observed
from .common import location_json

SCHEMA = "aoti-lint.why/1"


def to_json(result: WhyResult) -> dict:
    return {
        "schema": SCHEMA,
        "package": result.package,
        "matched": result.matched,
        "failures": [_failure_json(f) for f in result.failures],
        "candidates": [_candidate_json(c) for c in result.candidates],
        "text_hits": [location_json(h) for h in result.text_hits],
        # The failing call's arguments as the log shows them (analyzer/explain/why/evidence.py).
        "observed": [_observed_json(o) for o in result.evidence.args],
    }


def _observed_json(o: Observed) -> dict:
    return {"position": o.position, "name": o.name, "shape": list(o.shape) if o.shape is not None else None,
            "min": o.low, "max": o.high, "text": o.text}


def render_json(result: WhyResult) -> str:
    return json.dumps(to_json(result), indent=2) + "\n"


def _candidate_json(c: Candidate) -> dict:
    return {
        "kind": c.kind,
        "model": c.model,
        "kernel": c.kernel,
        "message": c.message,
        "bound_sources": [{"input": r.input, "dim": r.dim} for r in c.bound_sources],
        "index_sources": [{"input": i} for i in c.index_sources],
        "cause": c.cause,
        "fix": c.fix,
        "location": location_json(c.location),
        "chain": list(c.chain),
        "evidence": {"facts": c.evidence, "ruled_out": c.ruled_out} if c.evidence else None,
    }


def _failure_json(f: Failure) -> dict:
    out = {"kind": f.kind, "message": f.message, "count": f.count}
    for name in ("index_var", "lower", "bound", "kernel", "file", "line", "check", "input", "dim",
                 "expected", "got"):
        value = getattr(f, name)
        if value is not None:
            out[name] = value
    if f.devices:
        out["devices"] = list(f.devices)
    return out


def _basename(path: str) -> str:
    return PurePosixPath(path.replace("\\", "/")).name


def _failure_line(f: Failure) -> str:
    if f.lost:
        return WHY["why.report.lost-cpu" if f.lost_on_cpu else "why.report.lost-cuda"].format(raw=t(f.raw))
    extra = []
    if f.count > 1:
        extra.append(f"{f.count} threads")
    if f.kernel:
        extra.append(f"kernel {t(f.kernel)}")
    if f.file:
        extra.append(t(f"{_basename(f.file)}:{f.line}" if f.line else _basename(f.file)))
    return t(f.message) + (f" ({'; '.join(extra)})" if extra else "")


def render_text(result: WhyResult) -> str:
    if not result.failures and not result.candidates:
        return WHY["why.report.nothing"] + "\n"
    lines: list[str] = [WHY["why.report.failure"].format(failure=_failure_line(f)) for f in result.failures]
    if not result.candidates and result.text_hits:
        lines.append(WHY["why.report.unlinked-text"].format(
            package=t(result.package), where=", ".join(t(h) for h in result.text_hits)))
        return terminal_lines("\n".join(lines) + "\n")
    if not result.candidates:
        lines.append(WHY["why.report.no-match"].format(package=t(result.package)))
        return terminal_lines("\n".join(lines) + "\n")
    lines.append(WHY["why.report.count"].format(count=len(result.candidates), package=t(result.package)))
    for n, c in enumerate(result.candidates, 1):
        head = f"{n}. [{c.kind}] model '{t(c.model)}'"
        if c.kernel:
            head += f", {t(c.kernel)}"
        if c.location is not None:
            head += f" at {t(c.location)}"
        lines.append("")
        lines.append(head)
        lines.append(f"   message: {t(c.message)}")
        lines.append(f"   cause:   {t(c.cause)}")
        lines.append(f"   fix:     {t(c.fix)}")
        if c.chain:
            lines.append("   chain:")
            lines.extend(f"     {t(step)}" for step in c.chain)
    return terminal_lines("\n".join(lines) + "\n")
