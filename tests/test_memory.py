"""Checking a package leaves no reference cycles.

The command line runs with the cyclic collector off (analyzer/app/cli.py `main`): whatever a check
builds must be freed by reference counting alone. A cycle through the linker once kept every
kernel's facts and syntax trees alive until the collector ran, and made it traverse them (0.1 s of
CPU on a 12 MB wrapper); `ast.dump` leaves a closure cycle per call.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from analyzer.app import api

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = [
    "fixtures/small_transformer.cuda.stripped.pt2",   # Triton helpers, constants read by kernels
    "fixtures/real/bert.cpu.stripped.pt2",            # C++ kernels, read-past-constant
    "fixtures/stranger/roberta.cpu.stripped.pt2",     # buffer value ranges (the linker's BufferRanges)
    "fixtures/gather_dyn.cpu.cpponly.pt2",            # package_cpp_only layout
    "fixtures/versions/2.6/gather_dyn.cpu.stripped.pt2",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_a_check_leaves_no_reference_cycles(package: str) -> None:
    path = ROOT / package
    enabled = gc.isenabled()
    gc.disable()
    try:
        api.lint([path])          # the first check also fills the caches that live on
        gc.collect()
        result = api.lint([path])
        assert result.packages[0].models[0].launches   # it really read and linked something
        del result
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_a_chain_line_said_of_many_checks_is_held_once() -> None:
    """The bound's and the dims' lines of a check fused into several kernels are one object each
    (gpt2.cpu: 21 such lines, 3 distinct); a kernel's own line stays its own."""
    (model,) = api.load(str(ROOT / "fixtures" / "real" / "gpt2.cpu.stripped.pt2"), api.Options(pair=False)).models
    shared = [line for a in model.assertions for line in a.chain if getattr(line, "key", "") in ("range", "bound-constant")]
    assert len(shared) >= 20 and len({id(line) for line in shared}) == len(set(shared)) == 3
    own = [a.chain[0] for a in model.assertions]
    assert len({id(line) for line in own}) == len(own)


def test_the_cpp_texts_are_not_held_while_linking(monkeypatch) -> None:
    """A CPU package's kernel member (its largest object at 50 MB) and its wrapper are dropped once
    read: linking locates the facts by newline offsets, and the texts are streamed again after."""
    import tracemalloc
    import zipfile

    from analyzer.app import pipeline

    path = ROOT / "fixtures" / "real" / "bert.cpu.stripped.pt2"
    with zipfile.ZipFile(path) as z:
        sizes = {i.filename.rsplit(".", 2)[-2]: i.file_size for i in z.infolist() if i.filename.endswith(".cpp")}
    held: list[int] = []
    link = pipeline.link_model

    def linking(*args, **kwargs):
        snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, "*/read/archive.py", all_frames=True)])
        held.extend(trace.size for trace in snapshot.traces)
        return link(*args, **kwargs)

    monkeypatch.setattr(pipeline, "link_model", linking)
    tracemalloc.start(12)
    try:
        (model,) = api.load(str(path), api.Options(pair=False)).models
    finally:
        tracemalloc.stop()
    near = lambda n: any(n <= size <= n + 100 for size in held)  # a bytes object: its length and a header
    assert held and not near(sizes["wrapper"]) and not near(sizes["kernel"]), (sizes, sorted(held)[-5:])
    # ... and what the findings point at in them was still read (the line under an assertion, a launch).
    kernel = next(p for p in model.source_lines if p.endswith(".kernel.cpp"))
    assert any("AOTI_TORCH_CHECK" in line for line in model.source_lines[kernel].values())
    wrapper = next(p for p in model.source_lines if p.endswith(".wrapper.cpp"))
    assert any("cpp_fused_" in line for line in model.source_lines[wrapper].values())


def test_a_merged_repeat_releases_what_its_finding_built() -> None:
    """Of a check fused into many kernels only the first finding is kept whole: the others' messages
    (and the fields they hold) are released as they are merged, not held by their sort keys."""
    from analyzer.core.findings import Finding, Location, Severity
    from analyzer.rules import merging, sort_key

    released: list[int] = []

    class Held(str):  # a message (a str subclass, as the catalog's are) that says when it goes
        def __del__(self) -> None:
            released.append(self.k)

    def findings():
        for k in range(5):
            message = Held("index out of bounds in the table")
            message.k = k
            yield Finding(code="AOTI003", rule="r", severity=Severity.ERROR, message=message,
                          location=Location("k.cpp", 10 + k, 1), package="p.pt2", model="m", kernel=f"k{k}")
        during.extend(released)  # the merge is still running: the last one is in hand

    during: list[int] = []
    (merged,) = merging.merged(findings(), sort_key)
    assert len(merged.also) == 4 and merged.message.k == 0
    assert during == [1, 2, 3] and released == [1, 2, 3, 4]


def test_a_chain_line_has_no_instance_dict() -> None:
    """Chain lines are slotted `Text`s: a model holds one or two per check, and a `__dict__` was
    three quarters of each one's size."""
    (model,) = api.load(str(ROOT / "fixtures" / "real" / "gpt2.cpu.stripped.pt2"), api.Options(pair=False)).models
    lines = [line for a in model.assertions for line in a.chain]
    assert lines and all(type(line).__name__ == "Text" and not hasattr(line, "__dict__") for line in lines)


def test_kernels_of_one_head_share_their_types() -> None:
    """C++ kernels with the same parameters and types hold one dict of them (resnetish: two of six)."""
    (model,) = api.load(str(ROOT / "fixtures" / "real" / "resnetish.cpu.stripped.pt2"), api.Options(pair=False)).models
    by_types: dict[tuple, set[int]] = {}
    for kernel in model.kernels.values():
        by_types.setdefault(tuple(kernel.param_types.items()), set()).add(id(kernel.param_types))
    assert len(by_types) < len(model.kernels) and all(len(ids) == 1 for ids in by_types.values())


def test_equal_source_lines_are_held_once() -> None:
    """The lines kept for snippets: equal texts (a check's line in each kernel that copies it) are one
    string (gpt2.cpu: 145 lines, 118 distinct)."""
    (model,) = api.load(str(ROOT / "fixtures" / "real" / "gpt2.cpu.stripped.pt2"), api.Options(pair=False)).models
    texts = [text for lines in model.source_lines.values() for text in lines.values()]
    assert len(set(texts)) < len(texts) and len({id(text) for text in texts}) == len(set(texts))


def test_equal_parameter_maps_are_one_dict(monkeypatch) -> None:
    """Linking maps each launch's size parameters to expressions; launches that pass the same sizes
    share one map (a package with 26,000 launches held as many dicts until linking ended)."""
    from analyzer.link.context import LinkContext

    seen: list[dict] = []
    param_map = LinkContext.param_map

    def recorded(self, facts, launch_index):
        seen.append(param_map(self, facts, launch_index))
        return seen[-1]

    monkeypatch.setattr(LinkContext, "param_map", recorded)
    api.load(str(ROOT / "fixtures" / "real" / "gpt2.cpu.stripped.pt2"), api.Options(pair=False))
    distinct = {tuple(m.items()) for m in seen}
    assert len({id(m) for m in seen}) == len(distinct) < len(seen)


def _linked_facts(monkeypatch, package: str) -> list:
    """The kernel facts a check hands to the linker."""
    from analyzer.app import pipeline

    handed: list = []
    link = pipeline.link_model

    def linking(name, metadata, wrapper, kernels, **kwargs):
        handed.extend(kernels)
        return link(name, metadata, wrapper, kernels, **kwargs)

    monkeypatch.setattr(pipeline, "link_model", linking)
    api.load(str(ROOT / package), api.Options(pair=False))
    return handed


def _untupled(facts) -> list[str]:
    """The collections of `facts` that are not tuples (what a reader left as a list)."""
    found = [f"{facts.name}.defs[{name}]" for name, entries in facts.defs.items() if type(entries) is not tuple]
    found += [f"{facts.name}.extents[{var}]" for var, spans in facts.extents.items() if type(spans) is not tuple]
    for name in ("assertions", "divisions", "reductions", "messages", "strides"):
        if type(getattr(facts, name)) is not tuple:
            found.append(f"{facts.name}.{name}")
    if facts.stores is not None and type(facts.stores) is not tuple:
        found.append(f"{facts.name}.stores")
    return found


@pytest.mark.parametrize("package, by_tree", [
    ("fixtures/real/bert.cpu.stripped.pt2", False),          # C++ kernels read line by line
    ("fixtures/real/bert.cpu.stripped.pt2", True),           # ... and each parsed whole
    ("fixtures/real/resnetish.cpu.stripped.pt2", False),     # reductions, divisions
    ("fixtures/small_transformer.cuda.stripped.pt2", False),  # Triton: the fast path and walks
])
def test_kernel_facts_hold_tuples_not_lists(monkeypatch, package: str, by_tree: bool) -> None:
    """Linking holds every kernel's facts at once: each reader stores its collections as tuples (a
    list grown by `append` is 40 bytes more; 26,000 small kernels hold about ten each)."""
    from analyzer.parse import cpplines

    if by_tree:
        monkeypatch.setattr(cpplines, "read", lambda *args, **kwargs: None)
    handed = _linked_facts(monkeypatch, package)
    assert handed and any(f.defs for f in handed) and any(f.assertions or f.stores for f in handed)
    assert [where for f in handed for where in _untupled(f)] == []


def test_triton_facts_from_the_worker_hold_tuples(monkeypatch) -> None:
    """The same for kernels the helper worker read in its own process and sent back."""
    from analyzer.parse import helper_worker

    started: list = []
    start = helper_worker.start
    monkeypatch.setattr(helper_worker, "start", lambda *a, **k: started.append(start(*a, **k)) or started[-1])
    monkeypatch.setenv("AOTI_LINT_WORKER", "always")
    handed = _linked_facts(monkeypatch, "fixtures/small_transformer.cuda.stripped.pt2")
    assert [job for job in started if job is not None]
    assert handed and [where for f in handed for where in _untupled(f)] == []


def test_kernels_of_one_member_share_one_locate(monkeypatch) -> None:
    """C++ kernels read from one member locate their positions through one function (one per kernel
    was two objects each), and kernels without scan helpers share one empty `combines`."""
    handed = [f for f in _linked_facts(monkeypatch, "fixtures/real/bert.cpu.stripped.pt2") if f.kind == "cpp"]
    assert len(handed) > 1 and len({id(f.locate) for f in handed}) == 1
    assert len({id(f.combines) for f in handed}) == 1 and not handed[0].combines


def test_an_expression_s_input_dims_are_one_tuple() -> None:
    """`LinkContext.sources` gives one tuple per expression (the checks and reads of every kernel
    bounded by it hold it), and answers again once more root symbols are declared."""
    from analyzer.core.model import DimRef, Model
    from analyzer.link.context import LinkContext

    ctx = LinkContext(Model(name="m"), None, {})  # type: ignore[arg-type]
    ctx.root["s0"] = DimRef(0, 1)
    first = ctx.sources("2*s0 + s1")
    assert first == (DimRef(0, 1),) and ctx.sources("2*s0 + s1") is first
    ctx.root["s1"] = DimRef(1, 0)
    assert ctx.sources("2*s0 + s1") == (DimRef(0, 1), DimRef(1, 0))
