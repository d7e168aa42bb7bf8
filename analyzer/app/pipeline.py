"""Loading one package: archive -> parsers -> linker -> linked model, under the package's budget, and
the error policy around it (a member that cannot be parsed becomes a Problem; an unexpected exception
an InternalError naming where). Used by both the single-package API (api.py) and the many-package
runner (many.py).

Long module: loading a model (members, helpers, the exported program) and the error policy around it
are one pipeline; splitting it would hand the policy around as callbacks.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
from dataclasses import dataclass, field
from typing import cast

from ..read import archive, layout
from ..core import budget
from ..parse import cppkernel, helper_worker, helpertext, kernels, loadstrides, wrappertext, triage, tritonsrc, ts, wrapper
from ..core.findings import Location
from ..link.link import link_model
from ..query import zeros as Z
from . import parsing
from ..core.model import Model, Package, Problem, ProblemKind



@dataclass(frozen=True)
class Options:
    limits: archive.Limits = field(default_factory=archive.Limits)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target_device: str | None = None
    target_sm: str | None = None
    runtime_checks: str | None = None  # "on" | "off" | None: whether production sets AOTI_RUNTIME_CHECK_INPUTS=1
    exported_program: str | None = None
    input_names: tuple[str, ...] = ()
    keep_sources: bool = False  # keep every line of the parsed sources (the HTML report shows kernels)
    source_root: str | None = None     # where the model's source files are (primary locations)
    # Skip the walk of Triton kernels a text scan proves empty (triage.py). Results are the same
    # either way; AOTI_LINT_FAST_PATH=0 turns it off for comparison.
    fast_path: bool = field(default_factory=lambda: os.environ.get("AOTI_LINT_FAST_PATH", "1") != "0")
    # Read a large wrapper's Triton helpers in a forked worker while this process parses the rest
    # (helper_worker.py). Results are the same either way; AOTI_LINT_WORKER=0 turns it off.
    worker: helper_worker.Mode = field(default_factory=helper_worker.mode_from_env)
    # Use the exported program beside a package (`X.ep.pt2` for `X.pt2`) when none is given;
    # `paired`: `exported_program` was found that way (its mismatch message says so).
    pair: bool = True
    paired: bool = False
    exclude: tuple[str, ...] = ()   # globs a folder walk leaves out


def deadline(path: str | os.PathLike[str], options: Options) -> "budget.Deadline":
    """One package's time and memory budget, from opening it to its last rule."""
    shown = os.fspath(path)
    return budget.Deadline(options.limits.timeout_s, shown if shown.isprintable() else repr(shown),
                            options.limits.max_memory)


def load_package(path: str | os.PathLike[str], options: Options, deadline: "budget.Deadline") -> Package:
    with _no_gc(), budget.polling(deadline), archive.open_package(path, options.limits, deadline) as pkg:
        result = Package(path=str(path))
        with unexpected(pkg.label):
            annotate = None
            if options.exported_program or options.input_names or pkg.exported_programs:
                from ..read import exported_apply  # imported only where there is one to apply

                annotate = exported_apply.annotation(result, pkg, options.exported_program, options.input_names,
                                                     options.limits, paired=options.paired)
        sources: dict[str, bytes] = {}
        dropped: dict[str, bool] = {}  # members whose bytes went before linking -> whether they define run_impl
        marks: dict[str, layout.WrapperMarks] = {}  # what each wrapper's text says of the producing torch
        for members in pkg.models:
            pkg.deadline.check(f"reading model {members.name}")
            result.models.append(_load_model(pkg, members, options.limits, annotate, sources,
                                             options.fast_path, options.worker, dropped, marks))
        with unexpected(pkg.label):
            made_by = layout.producer(pkg, result.models, marks)
            result.torch, result.torch_evidence = made_by.torch, made_by.evidence
            source_members = layout.account(pkg, result, sources, dropped)
            for members, model in zip(pkg.models, result.models):
                layout.keep_source_lines(pkg, model, sources, dropped)
                if options.keep_sources:
                    _keep_all_lines(model, {p: sources[p] if p in sources else pkg.read_bytes(p)
                                            for p in [*sources, *dropped] if p.startswith(members.prefix)})
        _refuse_unknown_layout(pkg, result, sources, source_members, any(dropped.values()))
        return result


def _refuse_unknown_layout(pkg: "archive.Package", result: Package, sources: dict[str, bytes],
                           source_members: list[str], dropped_run_impl: bool = False) -> None:
    """No model recognised (no wrapper defining run_impl) but source present: the layout is not
    understood, and that is never a clean pass."""
    if dropped_run_impl or any(layout.defines_run_impl(data) for data in sources.values()):
        return  # a wrapper was recognised (a parse failure in it is an unparsed-member finding)
    if source_members:
        raise budget.ArchiveError(
            f"{pkg.label}: {len(source_members)} member(s) hold C++/Triton source (first: {source_members[0]!r}) but "
            "none defines an AOTInductor wrapper (AOTInductorModel::run_impl): this package layout is not "
            "understood, so nothing in it was checked")


class InternalError(Exception):
    """An exception the analyzer did not expect (a bug): `where` names the package and member, and
    `__cause__` keeps the original for `--debug`. The command line prints one line and exits 2."""

    def __init__(self, where: str, exc: BaseException) -> None:
        self.where = where
        text = " ".join(str(exc).split())[:300]
        super().__init__(f"internal error in {where}: {type(exc).__name__}" + (f": {text}" if text else ""))


# Hostile content one member's parsers cannot represent (a number past Python's 4300-digit
# conversion limit, nesting past its recursion limit): the member is skipped with an
# `unparsed-member` finding and the rest of the package is analysed.
_MEMBER_ERRORS = (ValueError, OverflowError, RecursionError)


@contextlib.contextmanager
def unexpected(where: str):
    """Turn any exception that is not an ArchiveError into an InternalError naming `where`."""
    try:
        yield
    except (budget.ArchiveError, InternalError):
        raise
    except Exception as exc:
        raise InternalError(where, exc) from exc


def _member_guard(pkg: "archive.Package", member: str, problems: list[Problem]):
    """Run one member's parsing: content errors become a Problem on that member (returns None);
    a time or archive limit ends the package; anything else is an InternalError naming the member."""
    @contextlib.contextmanager
    def guard():
        try:
            yield
        except budget.MemoryLimitError as exc:
            problems.append(Problem(f"not analysed: {str(exc).split(': ', 1)[-1]}", Location(member),
                                    kind=ProblemKind.LIMIT))
        except (budget.ArchiveError, InternalError):
            raise
        except _MEMBER_ERRORS as exc:
            problems.append(Problem(f"cannot be analysed: {_content_reason(exc)}", Location(member),
                                    kind=ProblemKind.LIMIT))
        except Exception as exc:
            raise InternalError(f"{pkg.label}: {member}", exc) from exc
    return guard()


def _content_reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if "integer string conversion" in text:
        return "a number with more than 4300 digits"
    if isinstance(exc, RecursionError):
        return "nested too deeply for the analyzer"
    return (text or type(exc).__name__)[:200]


@contextlib.contextmanager
def _no_gc():
    """Analysis builds millions of small, acyclic objects (AST nodes, facts) that stay alive until
    linking ends; the cyclic collector would rescan them over and over (quadratic on wrappers with
    thousands of kernels). Reference counting frees them; the collector runs once afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_model(pkg: "archive.Package", members: "archive.ModelMembers", limits: "archive.Limits",
                annotate=None, sources: dict[str, bytes] | None = None, fast_path: bool = True,
                worker: helper_worker.Mode = helper_worker.Mode.OFF, dropped: dict[str, bool] | None = None,
                marks: dict[str, "layout.WrapperMarks"] | None = None) -> Model:
    problems: list[Problem] = []
    sources = {} if sources is None else sources
    metadata = _metadata(pkg, members, problems)
    kernel_facts: list[kernels.KernelFacts] = []
    wrapper_facts = None
    with unexpected(f"{pkg.label}: {members.prefix.rstrip('/')}"):
        sourced = layout.pick_sources(members, lambda m: _read(pkg, m, sources))
    _missing_wrapper(members, sourced, problems)
    for member in sourced.wrappers[:1]:
        with _member_guard(pkg, member, problems):
            facts, found = _wrapper_member(pkg, member, limits, sources, fast_path, worker)
            wrapper_facts = facts
            kernel_facts.extend(found)
    for member in sourced.wrappers[1:]:
        problems.append(Problem("more than one wrapper in one model folder; only the first was analysed",
                                Location(member), kind=ProblemKind.PARSE))
    for member in sourced.kernels if sourced.wrappers else ():
        with _member_guard(pkg, member, problems):
            parsing.refuse_many_checks(_read(pkg, member, sources))
            tree = _parse(pkg, member, sources, apart := cppkernel.Apart())
            if tree is None:  # a member of kernels alone: each is parsed on its own
                planned = cppkernel.plan_apart(member, limits.max_nesting, apart)
            else:
                planned = cppkernel.plan_cpp(tree, member, limits.max_nesting, None, sources[member], apart)
            del tree  # the kernels parsed apart need only their own trees
            kernel_facts.extend(planned.read())
            apart.data = apart.parse = None
    _add_text_facts(kernel_facts, wrapper_facts, sources)
    for member in sourced.wrappers[:1]:
        if marks is not None and member in sources:
            marks[member] = layout.WrapperMarks(sources[member])
    if dropped is not None and sourced.wrappers:
        # Linking locates the kernels' facts by their newlines alone and reads the wrapper's facts:
        # the texts (a CPU package's largest objects) are read again after linking, a MiB at a time
        # (layout.account, keep_source_lines). Not a wrapper with Triton helpers: there the peak is
        # before linking (its kernels' sources), and reading it again costs a tenth of a second per 12 MB.
        triton = wrapper_facts is not None and bool(wrapper_facts.helpers)
        for member in [*sourced.kernels, *(sourced.wrappers[:1] if not triton else ())]:
            if marks is not None and member in marks:
                marks[member].settle()
            if member in sources:  # not bound to a name here: that would hold it through linking
                dropped[member] = layout.defines_run_impl(sources.pop(member))
    binaries = tuple(members.binaries)
    cpp_only = members.cmake is not None and not any(b.endswith(".so") for b in binaries)
    with unexpected(f"{pkg.label}: {members.prefix.rstrip('/')}"):
        model = link_model(members.name, metadata, wrapper_facts, kernel_facts,
                           kernel_paths=tuple(sourced.kernels if sourced.wrappers else ()), binaries=binaries,
                           cpp_only=cpp_only, problems=problems, annotate=_with_minimums(wrapper_facts, annotate))
    model.metadata_path = members.metadata[0] if members.metadata else None
    if wrapper_facts is not None:
        # A check of a size expression (not one symbol) is kept where it can never fail: it then
        # covers its line; one that can fail stays an unlinked check (unlinked-assertion).
        model.zero_checks = [z for z in wrapper_facts.zero_checks
                             if z[0] in model.symbols or (not _SYMBOL.fullmatch(z[0]) and Z.never_zero(model, z[0]))]
    return model


_SYMBOL = re.compile(r"[A-Za-z_]\w*")


def _add_text_facts(found: list[kernels.KernelFacts], facts: "wrapper.WrapperFacts | None",
                    sources: dict[str, bytes]) -> None:
    """What kernels' text gives beside their parse: an adaptive pooling kernel's bins (named so by
    Inductor's descriptive names; C++ or Triton) and a C++ kernel's loads stepped by two strides. C++
    kernels are cut at each `extern "C"` of their member, one pass over it."""
    by_path: dict[str, dict[str, kernels.KernelFacts]] = {}
    for k in found:
        if k.kind == "triton":
            helper = facts.helpers.get(f"call_{k.name}") if facts is not None else None
            if "adaptive_" in k.name and "pool" in k.name and helper is not None:
                k.pool_bins = kernels.pool_bins(helper.triton_source or "")
            if helper is not None and helper.triton_source:
                k.strides = (*k.strides, *loadstrides.triton_stride_pairs(
                    helper.triton_source, k.location.path, helper.source_first_line, helper.source_indent))
        else:
            by_path.setdefault(k.location.path, {})[k.name] = k
    for path, named in by_path.items():
        data = sources.get(path, b"")
        if b"div_floor_integer" not in data and not any("adaptive_" in name for name in named):
            continue  # neither fact can be there: the member is not decoded
        # Each kernel decoded alone (a whole member's text was a 50 MB package's peak): cut at an
        # ASCII text, the pieces decode as the whole would, with the same newlines.
        starts = [m.start() for m in _EXTERN.finditer(data)]
        line, pos, loads = 1, 0, loadstrides.MAX_MEMBER_LOADS
        for start, end in zip(starts, starts[1:] + [len(data)]):
            line, pos = line + data.count(b"\n", pos, start), start
            chunk = data[start:end].decode("utf-8", "replace")
            head = _KERNEL_NAME.match(chunk)
            kernel = named.get(head.group(1)) if head else None
            if kernel is None:
                continue
            # A declaration (`extern "C" void k(...);`) yields nothing: the definition's facts are kept.
            if "adaptive_" in kernel.name and "pool" in kernel.name:
                kernel.pool_bins = kernel.pool_bins or kernels.pool_bins(chunk)
            if loads > 0:
                pairs, read = loadstrides.stride_pairs(chunk, path, line, loads)
                kernel.strides = (*kernel.strides, *pairs)
                loads -= read


_EXTERN = re.compile(rb'extern "C"')
_KERNEL_NAME = re.compile(r'extern "C"\s+void\s+(\w+)\s*\(')


def _metadata(pkg: "archive.Package", members: "archive.ModelMembers", problems: list[Problem]) -> dict:
    """The model's metadata members merged (the first to give a key wins); unreadable ones are problems."""
    metadata: dict = {}
    for member in members.metadata:
        try:
            data = json.loads(pkg.read_text(member))
        except budget.ArchiveError:
            raise
        except (ValueError, RecursionError) as exc:
            problems.append(Problem(f"metadata is not valid JSON ({type(exc).__name__})", Location(member),
                                    kind=ProblemKind.UNREADABLE))
            continue
        if isinstance(data, dict):
            for key, value in data.items():
                metadata.setdefault(str(key), value)
    return metadata


def _missing_wrapper(members: "archive.ModelMembers", sourced, problems: list[Problem]) -> None:
    """The problem of a model folder without a wrapper: only binaries, or sources nothing links."""
    if not sourced.wrappers and members.binaries and not sourced.kernels:
        problems.append(Problem(
            f"no wrapper source in the package: only binaries ({len(members.binaries)} file(s)) are present, "
            "so nothing can be linked", Location(members.prefix), kind=ProblemKind.NO_SOURCE))
    elif not sourced.wrappers:
        # Sources without a recognisable wrapper are reported by layout.account (member by member).
        problems.append(Problem(
            "no wrapper (a C++ member defining AOTInductorModel::run_impl) in the model folder"
            + (f"; {len(sourced.kernels)} other C++ member(s) cannot be linked without it" if sourced.kernels else
               "; it holds no source and no binaries"), Location(members.prefix), kind=ProblemKind.PARSE))


def _wrapper_member(pkg: "archive.Package", member: str, limits: "archive.Limits", sources: dict[str, bytes],
                    fast_path: bool, worker: helper_worker.Mode
                    ) -> tuple[wrapper.WrapperFacts, list[kernels.KernelFacts]]:
    """The wrapper's facts and every kernel it holds: C++ kernels appended to it, Triton kernels of
    its helpers."""
    # The fast path: helpers of Inductor's shape are read from the text, not parsed; a
    # worker process reads them while this one parses the rest (helper_worker.py).
    parsed, texts = _split_wrapper(pkg, member, sources, fast_path)
    job = helper_worker.start(texts, member, worker)
    try:
        # Kernels parsed apart; on the fast path, the constructor's tables and run_impl's launches
        # read from the text.
        text = wrappertext.WrapperText(limits.max_nesting) if fast_path else None
        tree = parsing.parse_bytes(pkg, member, parsed, apart := cppkernel.Apart(), text=text)
        # One search of the tree for both readers (made already where run_impl was checked).
        functions = text.functions if text is not None and text.functions is not None else ts.functions(tree.root_node)
        facts = wrapper.parse(tree, member, limits.max_nesting, functions, text)
        # package_cpp_only CPU builds and some versions append C++ kernels to the wrapper itself.
        planned = cppkernel.plan_cpp(tree, member, limits.max_nesting, functions, parsed, apart)
        del functions, parsed
        if text is not None:
            text.functions = None  # its nodes would keep the tree alive
        del tree  # before the kernels and the helpers' sources are read: the largest thing held
        found = planned.read()
        if job is not None:
            job.share(pkg.deadline)  # the last helpers read here while the child reads the first
        reads = job.result(pkg.deadline) if job is not None else None
    finally:
        if job is not None:
            job.close()
    # `_add_helpers` drops each text once read (None in its place).
    ready = _add_helpers(facts, cast("list[helpertext.HelperText | None]", texts), reads) if texts else {}
    found.extend(_triton_kernels(pkg, member, facts, ready, fast_path))
    return facts, found


def _triton_kernels(pkg: "archive.Package", member: str, facts: wrapper.WrapperFacts, ready: dict,
                    fast_path: bool) -> list[kernels.KernelFacts]:
    """The kernel facts of each helper's embedded Triton source: read by the worker (`ready`), by
    the fast path's triage, or walked here."""
    out: list[kernels.KernelFacts] = []
    # read-past-constant reads the loads of every kernel given a constant (their definitions).
    constant_names = {e.get("name") or f"constant{i}" for i, e in facts.constants.items()}
    given_constants = {c.function for c in facts.calls if constant_names.intersection(c.args)}
    for helper in facts.helpers.values():
        pkg.deadline.check(f"parsing Triton kernel {helper.name}")
        if helper.triton_source is not None:
            name = helper.name[len("call_"):]
            read = ready.get(id(helper), (None, None))[1]
            # The fast path: most kernels hold nothing the rules read (see triage.py).
            if read is not None:
                light = read.light
            else:
                light = triage.light_triton(name, helper.triton_source, member, helper.source_first_line,
                                            helper.source_indent) if fast_path else None
            if light is not None and helper.name in given_constants:
                # read-past-constant reads its loads: their definitions, from the function alone.
                light = triage.with_definitions(light, name, helper.triton_source,
                                                helper.source_first_line, helper.source_indent)
            walked = helper_worker.restore(read, member) if read is not None and light is None else None
            if light is None and walked is None:
                walked = triage.walk_triton(name, helper.triton_source, member, helper.source_first_line,
                                            helper.source_indent, helper.params, fast_path)
                if fast_path:  # expressions shared between kernels, as the worker's are
                    walked = helper_worker.shared(walked, helper.triton_source, member,
                                                  helper.source_first_line, helper.source_indent)
            kernel = light or walked
            assert kernel is not None  # walked where there is no light read
            out.append(kernel)
    return out


def _keep_all_lines(model: Model, sources: dict[str, bytes]) -> None:
    """Every line of the model's source members (for the HTML report)."""
    for path, data in sources.items():
        # Numbered by "\n" only, as tree-sitter and the locations count lines.
        text = data.decode("utf-8", "replace").split("\n")
        model.source_lines[path] = {n: line.rstrip("\r") for n, line in enumerate(text, start=1)}


def _add_helpers(facts: "wrapper.WrapperFacts", texts: list["helpertext.HelperText | None"],
                 reads: "list[helper_worker.HelperRead | None] | None" = None) -> dict[int, tuple]:
    """Helpers read from the text join those read from the tree, in document order; `texts` is
    emptied on the way. With `reads` (the worker's, one per text) their sources come from there.
    Returns id(helper) -> (helper, its read) for the helpers that have one."""
    helpers = list(facts.helpers.values())
    ready: dict[int, tuple] = {}
    for i, text in enumerate(texts):
        assert text is not None  # each text is read once
        read = reads[i] if reads is not None else None
        if read is None:
            source, first_line, indent, problem = tritonsrc.triton_comment(text.comment, text.comment_row)
        else:
            source, first_line, indent, problem = read.source, read.first_line, read.indent, read.problem
        helper = wrapper.Helper(text.name, text.params, Location(facts.path, text.line, 1),
                                source, first_line, indent, problem)
        helpers.append(helper)
        if read is not None:
            ready[id(helper)] = (helper, read)  # the helper kept alive: its id stays its own
        texts[i] = None  # its comment is read: let it go (a 50 MB wrapper holds 30 MB of them)
    helpers.sort(key=lambda h: (h.location.line, h.location.column))
    facts.helpers = {}
    for helper in helpers:  # as the tree gives them: first place, last value for a repeated name
        facts.helpers[helper.name] = helper
    return ready


def _parse(pkg: "archive.Package", member: str, sources: dict[str, bytes],
           kernels: "cppkernel.Apart") -> "ts.Tree | None":
    """One tree-sitter parse of a kernel member, stopped once the package's time or memory budget
    is spent; None for a member of kernels alone (each parsed on its own).

    Always stoppable: adversarial C++ parses at 0.05 MB/s and costs up to ~1.5 KB of memory per
    input byte, so neither the time nor the memory a parse needs can be told from its size."""
    pkg.deadline.check(f"parsing {member}")
    data = _read(pkg, member, sources)
    return parsing.parse_bytes(pkg, member, data, kernels, whole=False)


def _split_wrapper(pkg: "archive.Package", member: str, sources: dict[str, bytes],
                   split_helpers: bool) -> tuple[bytes, list["helpertext.HelperText"]]:
    """The wrapper's bytes to parse; with `split_helpers`, the helpers of Inductor's shape are read
    from the text and reduced to their newlines in the copy tree-sitter parses (same lines and
    columns)."""
    pkg.deadline.check(f"parsing {member}")
    data = _read(pkg, member, sources)
    if not split_helpers:
        return data, []
    return helpertext.split_helpers(data)


def _with_minimums(wrapper_facts, annotate):
    """Run layout.infer_minimums once the inputs exist and before any chain quotes their ranges."""
    def run(model: Model) -> None:
        layout.infer_minimums(model, wrapper_facts)
        if annotate is not None:
            annotate(model)

    return run


def _read(pkg: "archive.Package", member: str, sources: dict[str, bytes]) -> bytes:
    """A member's bytes, read once per package."""
    data = sources.get(member)
    if data is None:
        data = sources[member] = pkg.read_bytes(member)
    return data


