"""`aoti-lint confirm PKG`: findings verified by RUNNING THE PACKAGE on their witnesses.

Opt-in and explicit. `check` never runs anything; `confirm` does: for each finding's witnesses, and
for every dynamic dim at 0, 1 and max + 1 (from a valid base shape), it starts one child process
(analyzer/explain/confirm_child.py: torch, `aoti_load_package`, the exported program as the eager reference
when given) with its own time and memory limits, so that an abort, a segfault or a CUDA device assert
ends only that child. This module itself never imports torch.

Each probe's outcome is `ran` (like eager, or without a reference: no crash, no NaN), `failed`
(a signal, an exception the reference does not raise, NaN or inf the reference does not have, another
shape, values off by more than rtol = atol = 1e-3), `invalid-input` (the reference rejects the input
too: not a package bug) or `not-run`. A finding is `confirmed` when one of its probes failed,
`not-reproduced` when all ran, `not-run` (with why) otherwise. A failed probe that no finding is
about (its dim and size) is an *unexplained failure*: reported, so that nobody has to guess.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..query import witness as W
from ..core.findings import Finding
from ..core.model import DimRef, Model
from ..query.sizes import effective_max, effective_min

TIMEOUT_S = 120.0
MAX_MEMORY = 16 * 2**30  # address space of a CPU probe; CUDA reserves far more virtual memory
MARK = "AOTI-LINT-PROBE "


class Verdict(enum.Enum):
    CONFIRMED = "confirmed"
    NOT_REPRODUCED = "not-reproduced"
    NOT_RUN = "not-run"


class Status(enum.Enum):
    RAN = "ran"
    FAILED = "failed"
    INVALID_INPUT = "invalid-input"
    NOT_RUN = "not-run"


@dataclass(frozen=True)
class Probe:
    label: str                              # `x.shape[0] = 0`, or a finding's witness
    shapes: tuple[tuple[int, ...], ...]
    ref: DimRef | None = None               # the dim a dim probe sets
    size: int | None = None
    # (input, kind, dtype): an input built in another layout than contiguous (a layout witness):
    # kind "transpose", "pad-last", "step", "channels_last" or "" (only the dtype differs).
    layouts: tuple[tuple[int, str, str | None], ...] = ()


@dataclass(frozen=True)
class Outcome:
    status: Status
    what: str                               # one line: `SIGABRT`, `RuntimeError: ...`, `NaN`, `ran like eager`
    signal: str | None = None
    message: str | None = None
    nan: bool = False
    max_abs_diff: float | None = None
    eager: str | None = None                # "ok", the reference's error, or None without a reference

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "what": self.what, "signal": self.signal, "message": self.message,
                "nan": self.nan, "max_abs_diff": self.max_abs_diff, "eager": self.eager}


@dataclass(frozen=True)
class Confirmation:
    verdict: Verdict
    probe: str | None
    outcome: Outcome | None
    reason: str | None = None               # why not run

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "probe": self.probe,
                "outcome": self.outcome.as_dict() if self.outcome else None, "reason": self.reason}


@dataclass
class ModelReport:
    model: str
    probes: list[tuple[Probe, Outcome]] = field(default_factory=list)
    unexplained: list[tuple[Probe, Outcome]] = field(default_factory=list)


@dataclass
class Report:
    package: str
    exported_program: str | None
    findings: list[Finding]
    confirmations: list[Confirmation]
    models: list[ModelReport]
    not_run: str | None = None               # why nothing ran at all


# -- planning ---------------------------------------------------------------------------------------

def _shapes(model: Model, text: str) -> tuple[tuple[int, ...], ...] | None:
    parsed = W.parse_witness(text)
    if [name for name, _ in parsed] != [i.display for i in model.inputs]:
        return None
    return tuple(shape for _, shape in parsed)


def dim_probes(model: Model) -> list[Probe]:
    """The base shape, then each dynamic dim at 0, 1 and max + 1 (a bounded max), the others valid."""
    probes = [Probe("valid sizes", tuple(W.witness_shapes(model)))]
    for inp in model.inputs:
        for d in inp.dims:
            if d.value is not None:
                continue
            ref = DimRef(inp.index, d.dim)
            sizes = [0, 1]
            top = effective_max(d)
            if top is not None and top < 2**31 - 1:
                sizes.append(top + 1)
            for size in sizes:
                if size == W.valid_size(d) and size >= effective_min(d):
                    continue
                shapes = tuple(W.witness_shapes(model, {ref: size}))
                probes.append(Probe(f"{inp.dim_display(d.dim)} = {size}", shapes, ref, size))
    return probes


_LAYOUT = re.compile(r"^(?P<name>\S+) = `(?P<expr>[^`]*)` \(shape \((?P<shape>[^)]*)\)")


def _layout_probe(model: Model, text: str) -> Probe | None:
    """A layout witness (x = `torch.randn(8, 3).t()` (shape (3, 8), ...)) as a structured probe:
    the text is read for its kind, never evaluated."""
    match = _LAYOUT.match(text)
    names = [i.display for i in model.inputs]
    if match is None or match["name"] not in names:
        return None
    index = names.index(match["name"])
    expr = match["expr"]
    kind = ("channels_last" if "channels_last" in expr else "transpose" if ".t()" in expr or ".transpose(" in expr
            else "step" if "[::2]" in expr else "pad-last" if re.search(r"\[(?::, )*:\d+\]$", expr) else "")
    dtype = re.search(r"dtype=torch\.(\w+)", expr)
    shapes = list(W.witness_shapes(model))
    shapes[index] = tuple(int(v) for v in match["shape"].replace(" ", "").split(",") if v)
    return Probe(text, tuple(shapes), layouts=((index, kind, dtype[1] if dtype else None),))


def finding_probes(model: Model, finding: Finding) -> list[Probe]:
    out = []
    for text in finding.witnesses or ((finding.witness,) if finding.witness else ()):
        layout = _layout_probe(model, text)
        if layout is not None:
            out.append(layout)
            continue
        shapes = _shapes(model, text)
        if shapes is not None:
            ref = DimRef(finding.input, finding.dim) if finding.input is not None and finding.dim is not None else None
            size = shapes[ref.input][ref.dim] if ref is not None and ref.input < len(shapes) \
                and ref.dim < len(shapes[ref.input]) else None
            out.append(Probe(text, shapes, ref, size))
    return out


# -- running ----------------------------------------------------------------------------------------

def _parse(stdout: str) -> dict[str, dict[str, Any]]:
    out = {}
    for line in stdout.splitlines():
        if line.startswith(MARK):
            try:
                data = json.loads(line[len(MARK):])
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("kind"), str):
                out[data["kind"]] = data
    return out


def _last_error(stderr: str) -> str | None:
    lines = [line.strip() for line in stderr.strip().splitlines()]
    # An uncaught C++ exception (`terminate called after throwing an instance of 'c10::Error'`)
    # prints its message on the `what():` line, then a stack whose frames name `c10::Error` too.
    for line in reversed(lines):
        if line.startswith("what():") and line[len("what():"):].strip():
            return line[len("what():"):].strip()[:500]
    for line in reversed(lines):
        if line and not _FRAME.match(line) and ("Error" in line or "assert" in line.lower()
                                                or "index out of bounds" in line):
            return line[:500]
    return None


_FRAME = re.compile(r"frame #\d+: ")


def run_probe(package: str, model: Model, probe: Probe, exported_program: str | None, *,
              timeout_s: float = TIMEOUT_S, max_memory: int | None = MAX_MEMORY, python: str | None = None,
              env: dict[str, str] | None = None) -> Outcome:
    spec = {"package": os.path.abspath(package), "shapes": [list(s) for s in probe.shapes],
            "dtypes": [(i.dtype or "float32") for i in model.inputs], "device": model.device or "cpu",
            "exported_program": os.path.abspath(exported_program) if exported_program else None, "seed": 0,
            "layouts": [list(layout) for layout in probe.layouts],
            # Set by the child itself before torch loads: a `preexec_fn` is not safe in the threads
            # that run the probes (the child can deadlock between fork and exec).
            "max_memory": max_memory if (model.device or "cpu") == "cpu" else None}
    # The deployment's default: without the variable, unless the caller asks for it.
    child_env = {k: v for k, v in os.environ.items() if k != "AOTI_RUNTIME_CHECK_INPUTS"}
    child_env.update(env or {})
    try:
        proc = subprocess.Popen([python or sys.executable, "-m", "analyzer.explain.confirm_child", json.dumps(spec)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                                env=child_env, stdin=subprocess.DEVNULL,
                                start_new_session=True)  # its own process group: a timeout kills torch's helpers too
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return Outcome(Status.FAILED, f"no answer within {timeout_s:g} s (a hang)", message="timeout")
    except OSError as exc:
        return Outcome(Status.NOT_RUN, f"the probe could not start: {exc.strerror or exc}")
    return _outcome(proc.returncode, stdout, stderr)


def _outcome(returncode: int, stdout: str, stderr: str) -> Outcome:
    """The verdict on what the child said (its JSON line) and how it ended."""
    said = _parse(stdout)
    eager = said.get("eager")
    eager_text = None if eager is None else ("ok" if eager.get("ok") else str(eager.get("error")))
    pkg = said.get("package")
    if returncode < 0:
        name = signal.Signals(-returncode).name
        message = _last_error(stderr)
        return Outcome(Status.FAILED, name + (f" ({message})" if message else ""), name, message, eager=eager_text)
    if pkg is None:
        message = _last_error(stderr) or f"exit {returncode}"
        if "aoti_load_package" in stderr or "Failed to load" in stderr or "No such file" in stderr:
            return Outcome(Status.NOT_RUN, f"the package could not be loaded: {message}", message=message,
                           eager=eager_text)
        return Outcome(Status.FAILED, message, message=message, eager=eager_text)
    if not pkg.get("ok"):
        error = str(pkg.get("error"))
        if eager is not None and not eager.get("ok"):
            return Outcome(Status.INVALID_INPUT, f"eager rejects it too ({eager_text})", message=error, eager=eager_text)
        return Outcome(Status.FAILED, error, message=error, eager=eager_text)
    return _values_outcome(pkg, eager, eager_text)


def _values_outcome(pkg: dict, eager: dict | None, eager_text: str | None) -> Outcome:
    """The verdict on a package run that returned: its values against eager's, where eager ran."""
    nan = bool(pkg.get("nan") or pkg.get("inf"))
    diff = pkg.get("max_abs_diff")
    if eager is not None and not eager.get("ok") and _range_check(eager_text):
        # The exported program checks its declared ranges as it runs: past them it is no reference.
        if nan:
            return Outcome(Status.FAILED, "returns NaN/inf (outside the exported program's declared range)", nan=True,
                           eager=eager_text)
        return Outcome(Status.RAN, "ran; outside the exported program's declared range, so no reference to compare "
                       "values with", eager=eager_text)
    if eager is not None and not eager.get("ok"):
        if nan:
            return Outcome(Status.FAILED, f"returns NaN/inf where eager raises ({eager_text})", nan=True,
                           eager=eager_text)
        if pkg.get("numel") == 0:  # an empty answer to an input eager rejects: no worse than eager
            return Outcome(Status.INVALID_INPUT, f"eager rejects it ({eager_text}); the package returns an empty "
                           "result", eager=eager_text)
        return Outcome(Status.FAILED, f"returns values where eager raises ({eager_text})", eager=eager_text)
    if eager is not None:
        eager_nan = bool(eager.get("nan") or eager.get("inf"))
        if pkg.get("shape_mismatch"):
            return Outcome(Status.FAILED, "returns another shape than eager", nan=nan, max_abs_diff=diff,
                           eager=eager_text)
        if nan and not eager_nan:
            return Outcome(Status.FAILED, "returns NaN/inf where eager does not", nan=True, max_abs_diff=diff,
                           eager=eager_text)
        if not pkg.get("close"):
            return Outcome(Status.FAILED, f"returns values off by up to {diff:.3g} from eager", nan=nan,
                           max_abs_diff=diff, eager=eager_text)
        return Outcome(Status.RAN, "ran like eager", nan=nan, max_abs_diff=diff, eager=eager_text)
    if nan:
        return Outcome(Status.FAILED, "returns NaN/inf", nan=True)
    return Outcome(Status.RAN, "ran (no crash, no NaN; no reference to compare values with)")


_RANGE_CHECKS = ("Expected input at", "Guard failed", "to be <=", "to be >=")


def _range_check(error: str | None) -> bool:
    """Whether the reference's error is the exported program's own range check, not the model's."""
    return bool(error) and any(word in error for word in _RANGE_CHECKS)  # type: ignore[operator]


# -- verdicts ---------------------------------------------------------------------------------------

def _verdict(outcomes: Sequence[tuple[Probe, Outcome]]) -> Confirmation:
    failed = [(p, o) for p, o in outcomes if o.status is Status.FAILED]
    if failed:
        probe, outcome = failed[0]
        return Confirmation(Verdict.CONFIRMED, probe.label, outcome)
    ran = [(p, o) for p, o in outcomes if o.status is Status.RAN]
    if ran:
        probe, outcome = ran[0]
        return Confirmation(Verdict.NOT_REPRODUCED, probe.label, outcome)
    invalid = [(p, o) for p, o in outcomes if o.status is Status.INVALID_INPUT]
    if invalid:
        probe, outcome = invalid[0]
        return Confirmation(Verdict.NOT_REPRODUCED, probe.label, outcome,
                            "the witness is an input eager rejects too: not a failure of the package")
    if outcomes:
        probe, outcome = outcomes[0]
        return Confirmation(Verdict.NOT_RUN, probe.label, outcome, outcome.what)
    return Confirmation(Verdict.NOT_RUN, None, None, "the finding has no witness to run")


def _explains(finding: Finding, probe: Probe) -> bool:
    if probe.ref is None:
        return False
    if (finding.input, finding.dim) == (probe.ref.input, probe.ref.dim):
        return True
    return any(_same(text, probe) for text in finding.witnesses or ((finding.witness,) if finding.witness else ()))


def _same(text: str, probe: Probe) -> bool:
    return tuple(shape for _, shape in W.parse_witness(text)) == probe.shapes


def runnable(package: str, models: Iterable[Model], binaries: Sequence[str], device_ok: dict[str, bool]) -> str | None:
    """Why nothing can run, or None."""
    if not os.path.isfile(package):
        return "only a .pt2 file can be loaded (an extracted folder cannot)"
    if not binaries:
        return "the package holds no compiled library (a stripped package): rebuild it whole to confirm"
    for model in models:
        if not device_ok.get(model.device or "cpu", False):
            return f"no {model.device} device here (the package was compiled for {model.device})"
    return None


def confirm(package: str, models: Sequence[Model], findings: Sequence[Finding], exported_program: str | None,
            binaries: Sequence[str], device_ok: dict[str, bool], jobs: int = 2, **run: Any) -> Report:
    why_not = runnable(package, models, binaries, device_ok)
    by_model = {m.name: m for m in models}
    confirmations: list[Confirmation] = []
    reports = []
    if why_not is not None:
        return Report(package, exported_program, list(findings),
                      [Confirmation(Verdict.NOT_RUN, None, None, why_not) for _ in findings], [], why_not)
    planned: dict[tuple[Any, ...], tuple[Model, Probe]] = {}
    per_finding = []
    for f in findings:
        model = by_model.get(f.model)
        probes = finding_probes(model, f) if model is not None else []
        per_finding.append((model, probes))
        if model is None:
            continue
        for p in probes:
            planned.setdefault((model.name, p.shapes, p.layouts), (model, p))
    per_model = [(model, dim_probes(model)) for model in models]
    for model, probes in per_model:
        for p in probes:
            planned.setdefault((model.name, p.shapes, p.layouts), (model, p))
    # Each probe is a child process (mostly waiting on torch's import and the package's load):
    # `jobs` of them at a time, each shape once.
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {key: pool.submit(run_probe, package, model, probe, exported_program, **run)
                   for key, (model, probe) in planned.items()}
        outcomes = {key: future.result() for key, future in futures.items()}
    for _, (model, probes) in zip(findings, per_finding):
        if model is None:
            confirmations.append(Confirmation(Verdict.NOT_RUN, None, None, "not about a model's inputs"))
            continue
        confirmations.append(_verdict([(p, outcomes[(model.name, p.shapes, p.layouts)]) for p in probes]))
    for model, probes in per_model:
        report = ModelReport(model.name)
        for probe in probes:
            result = outcomes[(model.name, probe.shapes, probe.layouts)]
            report.probes.append((probe, result))
            if result.status is Status.FAILED and not any(
                    _explains(f, probe) for f in findings if f.model == model.name):
                report.unexplained.append((probe, result))
        reports.append(report)
    return Report(package, exported_program, list(findings), confirmations, reports)


def with_confirmations(report: Report) -> list[Finding]:
    """The findings, each carrying its confirmation (every reporter shows it when present)."""
    return [dataclasses.replace(f, confirmation=c.as_dict()) for f, c in zip(report.findings, report.confirmations)]
