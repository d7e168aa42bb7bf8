"""Derived dims: the relations `analyzer.query.relations` reads from real packages and their
exported programs, AOTI014's witnesses matched to their run-time records
(fixtures/real/runtime.derived.json, written by fixtures/real/probe_derived.py through
`aoti_load_package`), healthy multiples, AOTI002's witness, and the contract guard."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from analyzer.app import api
from analyzer.explain import contract, guard
from analyzer.link import derive
from analyzer.query import relations
from analyzer.query import witness as W
from analyzer.core.findings import Severity
from analyzer.core.model import DimRef, Enforcement, Evidence
from conftest import FIXTURES

REAL = FIXTURES / "real"
RUNTIME = REAL / "runtime.derived.json"

# model -> {dim: n}: every derived dim of the real packages (input 0 each time); OFFSET: `n*k + b` dims.
DERIVED = {"wav2vec2_fe": {1: 20}, "patch_embed": {2: 8, 3: 8}, "pairs": {0: 2}, "swin_merge": {1: 2, 2: 2},
           "unet_skip": {2: 2}}
OFFSET = {("unet_skip", 2): 1}


def _fits(name: str, dim: int, size: int) -> bool:
    return (size - OFFSET.get((name, dim), 0)) % DERIVED[name][dim] == 0


@lru_cache(maxsize=None)
def _load(name: str, cuda: bool = False, exported: bool = True):
    pkg = REAL / "cuda" / f"{name}.cuda.stripped.pt2" if cuda else REAL / f"{name}.cpu.stripped.pt2"
    if not pkg.exists():
        pytest.skip(f"{pkg} missing")
    ep = REAL / f"{name}.ep.pt2"
    options = api.Options(exported_program=str(ep) if exported else None)
    result = api.lint(str(pkg), options)
    return result.packages[0].models[0], result.findings


def _records(name: str) -> list[dict]:
    if not RUNTIME.exists():
        pytest.skip("fixtures/real/runtime.derived.json is missing")
    return [r for r in json.loads(RUNTIME.read_text()) if r["name"] == name]


def _record(name: str, label: str) -> dict:
    found = [r for r in _records(name) if r["label"] == label]
    assert len(found) == 1, (name, label, [r["label"] for r in _records(name)])
    return found[0]


def _wrong_or_accepted_where_eager_raises(record: dict) -> bool:
    """What AOTI014 predicts: the package returns, and its output differs from eager's (values or
    shape) or eager rejects the input."""
    return record["aoti"]["ok"] and (record["aoti"].get("matches_eager") is False or not record["eager"]["ok"])


# -- relations --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(DERIVED))
def test_relations_of_real_packages(name):
    model, _ = _load(name)
    got = {r.ref.dim: r.n for r in model.relations}
    assert got == DERIVED[name]
    assert {(name, r.ref.dim): r.offset for r in model.relations if r.offset} == \
        {k: v for k, v in OFFSET.items() if k[0] == name}
    for rel in model.relations:
        assert rel.ref.input == 0 and rel.enforced == Enforcement.ENV
        # the quotient in run_impl, the gated assert_size_stride's size, the exported `n*sK`
        assert {Evidence.QUOTIENT, Evidence.SIZE_CHECK, Evidence.EXPORTED} <= set(rel.evidence), rel
        assert relations.relation(model, rel.ref) is rel


def test_relation_symbol_range_from_range_constraints():
    model, _ = _load("wav2vec2_fe")
    (rel,) = model.relations
    assert (rel.symbol, rel.symbol_min, rel.symbol_max) == ("s6", 4, 800)
    assert model.inputs[0].dims[1].declared_expr == "20*s6"


@pytest.mark.parametrize("name, dim", [("wav2vec2_fe", 1), ("swin_merge", 2), ("patch_embed", 3)])
def test_stride_evidence(name, dim):
    """`{20L*s6, 1L}` (wav2vec2), `{64L*s39*s94, 32L*s94, 16L, 1L}` (swin: 32*s94 = 2*s94 * 16)."""
    model, _ = _load(name)
    assert Evidence.STRIDE in relations.relation(model, DimRef(0, dim)).evidence


def test_relations_without_the_exported_program():
    model, _ = _load("patch_embed", exported=False)
    assert {r.ref.dim: r.n for r in model.relations} == {2: 8, 3: 8}
    assert all(Evidence.EXPORTED not in r.evidence for r in model.relations)


CUDA = ("wav2vec2_fe", "patch_embed", "pairs", "swin_merge", "unet_skip")


@pytest.mark.parametrize("name", CUDA)
def test_cuda_builds_have_no_check_of_the_relation(name):
    """torch 2.11 CUDA wrappers emit no assert_size_stride: the relation is read from the quotient
    and the exported program, and nothing checks it, not even with AOTI_RUNTIME_CHECK_INPUTS=1."""
    model, findings = _load(name, cuda=True)
    assert {r.ref.dim: r.n for r in model.relations} == DERIVED[name]
    assert {r.enforced for r in model.relations} == {Enforcement.NONE}
    fixes = {f.fix_key for f in findings if f.code == "AOTI014"}
    assert fixes == {"unenforced-divisibility.none"}
    # the same dims and witnesses as the CPU build (torch 2.13)
    cpu = {(f.dim, f.witness) for f in _load(name)[1] if f.code == "AOTI014"}
    assert {(f.dim, f.witness) for f in findings if f.code == "AOTI014"} == cpu


@pytest.mark.parametrize("name", ["vit", "resnetish", "gpt2", "bert", "llama", "index_put", "resnetish_min2"])
def test_no_relations_without_derived_dims(name):
    model, findings = _load(name)
    assert model.relations == [] and not [f for f in findings if f.code == "AOTI014"]


@pytest.mark.parametrize("expr, expected", [
    ("trunc(0.05 * s)", ("s", 20, 0)), ("trunc((1.0 / 20.0) * s)", ("s", 20, 0)), ("floordiv(s, 8)", ("s", 8, 0)),
    ("s // 2", ("s", 2, 0)), ("trunc((-1.0 / 2.0) + (1.0 / 2.0) * s)", ("s", 2, 1)), ("floordiv(s - 1, 2)", ("s", 2, 1)),
    ("trunc(0.3 * s)", None), ("trunc(s * s)", None), ("s", None), ("floordiv(s, 1)", None),
    ("trunc(-0.3 + 0.5 * s)", None), ("floordiv(2 * s, 4)", None),
])
def test_quotient_forms(expr, expected):
    assert derive._quotient(expr) == expected


@pytest.mark.parametrize("expr, expected", [
    ("20*s6", ("s6", 20, 0)), ("2*s69 + 1", ("s69", 2, 1)), ("(-1) + 4*s6", ("s6", 4, -1)), ("s77", ("s77", 1, 0)),
    ("64*s39*s94", None), ("16", None), ("max(1, s6)", None),
])
def test_affine_forms(expr, expected):
    assert derive._affine(expr) == expected


# -- AOTI014 witnesses and what they do at run time -------------------------------------------------

def _aoti014(name: str) -> list:
    return [f for f in _load(name)[1] if f.code == "AOTI014"]


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_every_aoti014_witness_breaks_the_relation_inside_the_range(name):
    model, _ = _load(name)
    found = _aoti014(name)
    assert {f.dim for f in found} == set(DERIVED[name])
    for f in found:
        ((_, shape),) = W.parse_witness(f.witness)
        n, dim = DERIVED[name][f.dim], model.dim(DimRef(0, f.dim))
        assert f.severity == Severity.ERROR and not _fits(name, f.dim, shape[f.dim])
        assert dim.min <= shape[f.dim] <= (dim.max or shape[f.dim])
        # the other derived dims of the witness keep their relation
        assert all(_fits(name, d, shape[d]) for d in DERIVED[name] if d != f.dim)
        assert f"% {n} == {OFFSET.get((name, f.dim), 0)}" in f.fix and "aoti-lint contract" in f.fix


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_every_aoti014_witness_confirmed_at_run_time(name):
    """Each witness has its record: the package returns where eager differs or raises; with
    AOTI_RUNTIME_CHECK_INPUTS=1 the gated assert_size_stride rejects it."""
    records = {r["finding"]["witness"]: r for r in _records(name)
               if r["label"].startswith("witness:unenforced-divisibility:") and not r["env"]}
    checked = {r["finding"]["witness"]: r for r in _records(name)
               if r["label"].startswith("witness:unenforced-divisibility:") and r["env"]}
    for f in _aoti014(name):
        assert f.witness in records, (f.witness, sorted(records))
        assert _wrong_or_accepted_where_eager_raises(records[f.witness]), records[f.witness]
        rejected = checked[f.witness]["aoti"]
        assert not rejected["ok"] and "expected size" in rejected["error"], rejected


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_healthy_multiples_match_eager(name):
    healthy = [r for r in _records(name) if r["label"].startswith("healthy:")]
    assert len(healthy) >= 2
    for r in healthy:
        assert r["aoti"]["ok"] and r["aoti"]["matches_eager"] and r["eager"]["ok"], r


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_lower_bound_witness_is_a_multiple(name):
    """AOTI002's witness fails for its size, never only for breaking the multiple (not 79)."""
    for f in _load(name)[1]:
        if f.code == "AOTI002" and f.dim in DERIVED[name]:
            ((_, shape),) = W.parse_witness(f.witness)
            assert _fits(name, f.dim, shape[f.dim]), f.witness


def test_patch_embed_at_zero_and_one():
    """Never probed before: image height 0 and 1 (below the compiled 16 and the declared 8). Both
    raise ATen's convolution error, in eager and in the package (whose conv is an extern call); at 1
    the package's message shows the rounded size: it runs as 8*(1 // 8) = 0 rows."""
    for size in (0, 1):
        r = _record("patch_embed", f"hp:size={size}")
        assert not r["eager"]["ok"] and not r["aoti"]["ok"], r
        assert "Calculated padded input size per channel: (0 x 24)" in r["aoti"]["error"], r
        assert f"({size} x 24)" in r["eager"]["error"], r
        assert "too small" in _record("patch_embed", f"hp:size={size}+env")["aoti"]["error"]


def test_swin_merge_odd_sizes_diverge_from_eager():
    """Swin pads odd sizes in eager (`maybe_pad`); the package halves with floor: another shape."""
    for label in ("h:size=5", "h:size=129", "w:size=9"):
        r = _record("swin_merge", label)
        assert r["aoti"]["ok"] and r["eager"]["ok"] and r["aoti"]["matches_eager"] is False, r
        assert _record("swin_merge", label + "+env")["aoti"]["ok"] is False


# -- the contract guard ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, cuda", [(n, False) for n in sorted(DERIVED)] +
                         [(n, True) for n in CUDA])
def test_guard_rejects_aoti014_witnesses_and_accepts_healthy_sizes(name, cuda):
    model, findings = _load(name, cuda=cuda)
    built = contract.build(name, model, findings)
    namespace: dict = {}
    exec(compile(guard.render_python([built]), "<guard>", "exec"), namespace)  # our own generated code
    check = namespace["check_inputs"]

    class Shape:
        def __init__(self, shape):
            self.shape = shape

    for f in findings:
        if f.code == "AOTI014":
            ((_, shape),) = W.parse_witness(f.witness)
            with pytest.raises(ValueError, match=r"AOTI014"):
                check(Shape(shape))
    assert {c.kind for c in built.conditions if c.code == "AOTI014"} == {contract.Kind.MULTIPLE}
    for r in _records(name):
        if r["label"].startswith("healthy:"):
            args_shape = W.witness_shapes(model, {DimRef(0, d): r["sizes"][_dim_name(name, d)]
                                                  for d in DERIVED[name]})[0]
            check(Shape(args_shape))


def _dim_name(name: str, dim: int) -> str:
    return {"wav2vec2_fe": {1: "k"}, "patch_embed": {2: "hp", 3: "wp"}, "pairs": {0: "p"},
            "swin_merge": {1: "h", 2: "w"}, "unet_skip": {2: "k"}}[name][dim]


# -- inspect and contract show the relation ----------------------------------------------------------

def test_inspect_shows_the_relation():
    from analyzer.report import inspect

    pkg = api.load(str(REAL / "cuda" / "wav2vec2_fe.cuda.stripped.pt2"),
                   api.Options(exported_program=str(REAL / "wav2vec2_fe.ep.pt2")))
    doc = json.loads(inspect.render_json(pkg))
    dim = doc["models"][0]["inputs"][0]["dims"][1]
    assert dim["relation"] == {"n": 20, "symbol": "s6", "offset": 0, "enforced": "none",
                               "evidence": ["quotient", "exported"]}
    assert "multiple of 20 (20*s6, checked: never)" in inspect.render_text(pkg)


# -- `why` routes the gated assert_size_stride's failure to the relation -----------------------------

@pytest.mark.parametrize("name, log, dim, got", [
    ("wav2vec2_fe", "wav2vec2_fe.k_size=801+env.log", 1, "801"),
    ("wav2vec2_fe", "wav2vec2_fe.witness_unenforced-divisibility_1+env.log", 1, "81"),
    ("patch_embed", "patch_embed.witness_unenforced-divisibility_2+env.log", 3, "17"),
    ("pairs", "pairs.witness_unenforced-divisibility_1+env.log", 0, "5"),
    ("swin_merge", "swin_merge.h_size=5+env.log", 1, "5"),
    ("swin_merge", "swin_merge.w_size=9+env.log", 2, "9"),
    ("unet_skip", "unet_skip.k=6+env.log", 2, "6"),
])
def test_why_routes_size_check_failures_to_the_relation(name, log, dim, got):
    """The real logs of these sizes with AOTI_RUNTIME_CHECK_INPUTS=1 (`expected size 2==2, stride 801==800
    at dim=0; expected size 801==800, ... at dim=1`): the mismatching chunk, named as a multiple."""
    from analyzer.explain.why import explain_failure

    path = REAL / "logs" / log
    if not path.exists():
        pytest.skip(f"{path} missing")
    pkg = api.load(str(REAL / f"{name}.cpu.stripped.pt2"), api.Options(exported_program=str(REAL / f"{name}.ep.pt2")))
    result = explain_failure(pkg, path.read_text())
    (cand,) = result.candidates
    assert cand.key == "why.check.multiple" and cand.bound_sources == (DimRef(0, dim),)
    assert f"was {got}, not {_multiple_text(name, dim)}" in cand.cause and "AOTI014" in cand.cause


def _multiple_text(name: str, dim: int) -> str:
    n, b = DERIVED[name][dim], OFFSET.get((name, dim), 0)
    return f"{b} more than a multiple of {n}" if b else f"a multiple of {n}"


def test_fitting_sizes_stay_inside_the_range():
    model, _ = _load("wav2vec2_fe")
    ref = DimRef(0, 1)   # 20*s6 in [80, 16000]
    assert relations.fitting_at_least(model, ref, 81) == 100
    assert relations.fitting_at_least(model, ref, 15990) == 16000
    assert relations.fitting_at_least(model, ref, 16001) == 16000
    assert relations.fitting_below(model, ref, 80) == 60
    assert relations.breaking_size(model, ref) == 81
    odd, _ = _load("unet_skip")
    assert relations.fitting_below(odd, DimRef(0, 2), 5) == 3 and relations.breaking_size(odd, DimRef(0, 2)) == 6
    assert relations.fitting_at_least(model, DimRef(0, 0), 7) == 7   # no relation


@pytest.mark.parametrize("name, words", [("wav2vec2_fe", "not a multiple of 20"),
                                         ("unet_skip", "not 1 more than a multiple of 2")])
def test_headline_names_the_relation(name, words):
    (f, *_) = [f for f in _load(name)[1] if f.code == "AOTI014"]
    assert f.message == f"`x.shape[{f.dim}]` {words} silently returns wrong values", f.message
