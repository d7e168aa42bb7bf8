"""Rule framework: `Rule`, `Context`, the `@register` registry, selection and running.

Each rule is a small class in one of the family modules (`bounds`, `ranges`, `empty`, `package`)::

    @register
    class EmptyIndexBound(Rule):
        '''An index bound is an input dimension the package accepts as 0.

        ## What it does
        ...
        ## Why it matters
        ...
        ## Example
        ...
        ## Fix
        ...
        '''

        name = "empty-index-bound"
        code = "AOTI001"
        consequence = Consequence.FAILS     # its severity, error, follows (analyzer/severity.py)
        op = "the kernel's index check"

        def check(self, model, ctx):
            for a in model.assertions:
                yield self.finding(model, ctx, self.MESSAGES["empty-index-bound"].format(...), a.location,
                                   subject=a, fix=self.FIXES["empty-index-bound"].format(...), input=0, dim=0,
                                   key=...)

The docstring IS the documentation (`aoti-lint explain`, SARIF `help`): a one-line summary, then
the Markdown sections `## What it does`, `## Why it matters`, `## Example`, `## Fix`.

A rule's wording is its own: the class holds frozen `Catalog`s `HEADLINES`, `MESSAGES`, `FIXES`,
`CHAIN` (and `FRAGMENTS`, the messages filled into others), inherited from its class in
words_kernels.py / words_inputs.py, keyed `<rule-name>` or `<rule-name>.<variant>` (`register`
checks). `catalog()` builds once the one catalog of every rule's tables and the shared ones of
core/messages.py; nothing writes into a catalog after it is made, so import order cannot change it.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Iterator, Mapping, Sequence

from ..query import headline, source
from ..core import messages
from ..core.budget import poll
from ..core.findings import Finding, Location, Severity, changed
from ..query.severity import Consequence, severity_of
from .notes import EAGER_REJECTS_TIE, contract_note, eager_rejects_note
from . import merging

if TYPE_CHECKING:  # model.py is plain data; rules read it, the framework only passes it along
    from ..core.model import Model, Package

# The family modules, imported by `all_rules()`; each registers its rules on import.
RULE_MODULES: tuple[str, ...] = ("bounds", "ranges", "empty", "package", "reads", "derived", "datarange", "access",
                                  "strides", "exportguards", "traced")

DOC_SECTIONS: tuple[str, ...] = ("What it does", "Why it matters", "Example", "Fix")

_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
_CODE_RE = re.compile(r"^[A-Z]+[0-9]{3}$")
_SECTION_RE = re.compile(r"^##\s+(.+?)\s*$")


@dataclass(frozen=True)
class Context:
    """What a rule may need beyond the model: where the package is and what it will run on."""

    package: str = ""                 # the package path as the user gave it
    target_device: str | None = None  # "cpu" | "cuda" | None (unknown: rules stay quiet about it)
    target_sm: str | None = None      # compute capability digits, e.g. "80", "90a"
    # Codes of the rules run together (`run_rules` fills it; empty: unknown, read as every rule).
    # A rule that defers to another one (AOTI010 to AOTI002) asks `runs()` whether it runs.
    rules: frozenset[str] = frozenset()
    # Whether the deployment sets AOTI_RUNTIME_CHECK_INPUTS=1 (`--runtime-checks`): "on", "off", None
    # (not said). `run_rules` hands rules the package as deployed (sizes.as_deployed): with "on" the
    # checks the variable enables count as run at every call; "off" raises what they leave unchecked.
    runtime_checks: str | None = None

    def runs(self, code: str) -> bool:
        return not self.rules or code in self.rules


@dataclass(frozen=True)
class FailingCondition:
    """When a call fails in a way the package does not reject by default, as `aoti-lint contract`'s
    guard checks it: `expr` (over root size symbols) holds. `kind` is the contract's name for why
    (analyzer.explain.contract's `Kind` values: "empty-index-bound", "constant-table", ...), `reason`
    what happens, in words."""

    kind: str
    expr: str
    reason: str


@dataclass(frozen=True)
class Case:
    """A real package a rule is tested on (as Fixit's VALID/INVALID cases; tests/test_rule_cases.py).

    `package` is a path from the repository root (`fixtures/...`), or `shared/NAME.pt2` for the
    packages in ../shared/pt2. `edit` changes one member before the rule runs: `(member suffix,
    regex, replacement)` over its bytes, or `(member suffix, None, None)` to drop the member.
    `expect`: fields of `Finding` that one finding of the rule must have (INVALID cases only),
    e.g. `{"message_key": "empty-index-bound", "input": 0, "dim": 0}`. `runtime_checks`: the
    deployment setting the case assumes (`--runtime-checks`).
    """

    package: str
    expect: dict[str, Any] = field(default_factory=dict)
    exported: str | None = None
    target_device: str | None = None
    target_sm: str | None = None
    edit: tuple[str, bytes | None, bytes | None] | None = None
    runtime_checks: str | None = None   # `--runtime-checks on|off` for this case


class Rule:
    """Base class; subclasses set `name`, `code`, the `consequence` of what they find and the `op`
    it ties to (the severity follows from them: analyzer/severity.py), a documented docstring and
    their own `VALID` (no finding) and `INVALID` (at least one finding) cases on real packages."""

    name: ClassVar[str] = ""
    code: ClassVar[str] = ""
    consequence: ClassVar[Consequence] = Consequence.FAILS
    op: ClassVar[str | None] = None            # the operation a witness reaches, in words
    eager_rejects: ClassVar[bool] = False      # every witness is an input eager rejects the same way
    severity: ClassVar[Severity] = Severity.ERROR   # set by `register` from the three above
    # The user's ops (aten names) whose lowering can raise this rule's findings: source attribution
    # picks such a graph node behind the kernel, a headline names one from the kernel's name.
    # None: any op. Per finding, `user_ops_of(subject)` (a reduction's own op) may narrow it.
    user_ops: ClassVar[frozenset[str] | None] = None
    # The input guard `aoti-lint contract` writes rejects this rule's witnesses (its fix says so): each
    # finding's own failing condition (`guard_condition`), or with `range_guarded` the compiled ranges
    # the contract checks per dim anyway.
    guarded: ClassVar[bool] = False
    range_guarded: ClassVar[bool] = False
    VALID: ClassVar[tuple[Case, ...]] = ()
    INVALID: ClassVar[tuple[Case, ...]] = ()
    # The rule's own templates (keys `<name>` or `<name>.<variant>`), from its words class.
    HEADLINES: ClassVar[messages.Catalog] = messages.Catalog("HEADLINES", {})
    MESSAGES: ClassVar[messages.Catalog] = messages.Catalog("MESSAGES", {})
    FIXES: ClassVar[messages.Catalog] = messages.Catalog("FIXES", {})
    CHAIN: ClassVar[messages.Catalog] = messages.Catalog("CHAIN", {})
    FRAGMENTS: ClassVar[frozenset[str]] = frozenset()   # keys of MESSAGES filled into another message

    def check(self, model: "Model", ctx: Context) -> Iterable[Finding]:
        """Findings about one model of the package."""
        return ()

    def check_package(self, package: "Package", ctx: Context) -> Iterable[Finding]:
        """Findings about the package as a whole (its `problems`, missing models); run once."""
        return ()

    def user_ops_of(self, subject: Any) -> frozenset[str] | None:
        """The user's ops that can raise a finding about `subject` (the record it is about)."""
        return self.user_ops

    def guard_condition(self, model: "Model", finding: Finding) -> FailingCondition | None:
        """The condition under which `finding`'s call fails, for the contract's guard (a `guarded`
        rule's); None when it cannot be said as one over the input sizes (the guard then lists it as
        skipped)."""
        return None

    def finding(
        self,
        model: "Model | str",
        ctx: Context,
        message: str,
        location: Location,
        *,
        subject: Any = None,
        consequence: Consequence | None = None,
        op: str | None = None,
        outside_contract: bool = False,
        eager_rejects: str | None = None,
        contract: bool = True,
        **fields: Any,
    ) -> Finding:
        """A Finding with this rule's code and name, its severity from the policy (analyzer/severity.py),
        the model and package filled in, and `subject`, the model record it is about, with its user ops.

        `message` (the full explanation, kept as `detail`) and `fix` filled from the rule's templates
        (`self.MESSAGES[key].format(...)`) carry their key, which the finding keeps as `message_key` /
        `fix_key`; `run_rules` replaces `message` with the headline (HEADLINES[key]). `witness` is
        the primary witness, `witnesses` more of them. `consequence` and `op` override the rule's own
        for this finding; `outside_contract` says that its witnesses are outside the contract in a way
        the rule weighed itself (a max only AOTI_RUNTIME_CHECK_INPUTS=1 checks); else witnesses outside
        the exported program's declared range say so (`notes.contract_note`) unless `contract=False`.
        `eager_rejects` says how eager rejects the witness the same way (said in the detail and the
        chain): the finding is then at most info."""
        fix = fields.pop("fix", None)
        witnesses = tuple(dict.fromkeys(w for w in (fields.pop("witness", None), *fields.pop("witnesses", ())) if w))
        consequence = self.consequence if consequence is None else consequence
        op = self.op if op is None else op
        severity = severity_of(consequence, op=op, outside_contract=outside_contract)
        if contract and witnesses and not isinstance(model, str):
            message, severity, fields["chain"] = contract_note(model, witnesses, message, severity,
                                                           tuple(fields.get("chain", ())))
        eager = eager_rejects or (EAGER_REJECTS_TIE if self.eager_rejects else None)
        if eager:
            severity = severity_of(consequence, op=op, eager_rejects=True)
            message, fields["chain"] = eager_rejects_note(message, eager, severity, tuple(fields.get("chain", ())))
        return Finding(
            code=self.code,
            rule=self.name,
            severity=severity,
            message=str(message),
            detail=message if isinstance(message, messages.Text) else str(message),
            message_fields=getattr(message, "fields", None),
            model=model if isinstance(model, str) else model.name,
            location=location,
            package=ctx.package,
            fix=None if fix is None else _text(fix),
            witness=witnesses[0] if witnesses else None,
            witnesses=witnesses,
            message_key=getattr(message, "key", ""),
            fix_key=getattr(fix, "key", ""),
            subject=subject, user_ops=self.user_ops_of(subject),
            **fields,
        )

    # Documentation, read from the docstring.

    @classmethod
    def doc(cls) -> str:
        """The docstring, dedented (Markdown)."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The docstring's first line."""
        doc = cls.doc()
        return doc.splitlines()[0].strip() if doc else ""

    @classmethod
    def sections(cls) -> dict[str, str]:
        """`{"What it does": "...", ...}` from the `## ` headings of the docstring."""
        out: dict[str, str] = {}
        current: str | None = None
        lines: list[str] = []
        for line in cls.doc().splitlines()[1:]:
            match = _SECTION_RE.match(line)
            if match:
                if current is not None:
                    out[current] = "\n".join(lines).strip()
                current, lines = match.group(1), []
            elif current is not None:
                lines.append(line)
        if current is not None:
            out[current] = "\n".join(lines).strip()
        return out


def _text(text: str) -> str:
    """A fix as the finding keeps it: a filled template stays a Text (its key and fields are what the
    goldens record), a template used as is becomes one."""
    if isinstance(text, messages.Text):
        return text
    if isinstance(text, messages.Template):
        return messages.Text(str(text), text.key, {}, text.table)
    return str(text)


RULES: list[type[Rule]] = []


def register(rule: type[Rule]) -> type[Rule]:
    """Class decorator: validate the rule's identity and add it to RULES."""
    if not _NAME_RE.match(rule.name):
        raise TypeError(f"{rule.__qualname__}: rule name {rule.name!r} is not kebab-case")
    if not _CODE_RE.match(rule.code):
        raise TypeError(f"{rule.__qualname__}: rule code {rule.code!r} is not like 'AOTI001'")
    if not isinstance(rule.consequence, Consequence):
        raise TypeError(f"{rule.__qualname__}: consequence must be a Consequence")
    try:  # its own templates: keys in the grammar, each starting with the rule's name
        messages.build((), [(rule.name, wording(rule))])
    except ValueError as e:
        raise TypeError(f"{rule.__qualname__}: {e}") from None
    if not rule.FRAGMENTS <= set(rule.MESSAGES):
        raise TypeError(f"{rule.__qualname__}: FRAGMENTS not in its MESSAGES: {sorted(rule.FRAGMENTS - set(rule.MESSAGES))}")
    # The one place a rule's severity is decided: from what it finds, not set by hand.
    rule.severity = severity_of(rule.consequence, op=rule.op, eager_rejects=rule.eager_rejects)
    for i, other in enumerate(RULES):
        if _same_class(other, rule):  # a module reloaded (tests): replace, don't duplicate
            RULES[i] = rule
            return rule
        if other.name == rule.name or other.code == rule.code:
            raise TypeError(
                f"{rule.__qualname__}: {rule.code} {rule.name} clashes with "
                f"{other.__qualname__} ({other.code} {other.name})"
            )
    RULES.append(rule)
    return rule


def _same_class(a: type, b: type) -> bool:
    return a.__module__ == b.__module__ and a.__qualname__ == b.__qualname__


def all_rules() -> list[type[Rule]]:
    """Every registered rule, by code. Imports the family modules on first use."""
    for module in RULE_MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return sorted(RULES, key=lambda r: r.code)


def wording(rule: type[Rule]) -> tuple[messages.Catalog, ...]:
    """The rule's own template tables (HEADLINES, MESSAGES, FIXES, CHAIN)."""
    return tuple(getattr(rule, table) for table in messages.RULE_TABLES)


def build_catalog(rules: Iterable[type[Rule]]) -> Mapping[str, messages.Catalog]:
    """The shared tables and the templates of `rules`, joined (core/messages.py `build`: raises on a
    key outside the grammar or defined twice; the result is frozen and the same in any order)."""
    return messages.build(messages.shared(), [(rule.name, wording(rule)) for rule in rules])


@functools.cache
def catalog() -> Mapping[str, messages.Catalog]:
    """The one catalog of every registered rule's and the shared templates, by table name, built
    once (`catalog()["HEADLINES"]`)."""
    return build_catalog(all_rules())


def find_rule(text: str, rules: Sequence[type[Rule]] | None = None) -> type[Rule] | None:
    """The rule whose name or code (any case) is `text`, or None."""
    wanted = text.strip()
    for rule in all_rules() if rules is None else rules:
        if wanted == rule.name or wanted.upper() == rule.code:
            return rule
    return None


def _matches(selector: str, rule: type[Rule]) -> bool:
    if selector == "ALL":
        return True
    return selector == rule.name or rule.code.startswith(selector.upper())


def _specificity(selector: str, rules: Sequence[type[Rule]]) -> int:
    """ALL < shorter code prefix < longer code prefix < a full code or a name."""
    if selector == "ALL":
        return 0
    if any(selector == r.name or selector.upper() == r.code for r in rules):
        return 1000
    return len(selector)


def select_rules(
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    rules: Sequence[type[Rule]] | None = None,
) -> list[type[Rule]]:
    """The rules that `select` (default ALL) enables and `ignore` does not disable.

    Selectors are `ALL`, a rule name (`empty-index-bound`) or a code prefix (`AOTI`, `AOTI0`,
    `AOTI001`, any case). As in ruff, the more specific selector wins (`--select AOTI001
    --ignore AOTI` keeps AOTI001); at equal specificity `ignore` wins. An unknown selector is a
    ValueError.
    """
    universe = all_rules() if rules is None else sorted(rules, key=lambda r: r.code)
    select = [s.strip() for s in select if s.strip()] or ["ALL"]
    ignore = [s.strip() for s in ignore if s.strip()]
    for selector in [*select, *ignore]:
        if selector != "ALL" and not any(_matches(selector, r) for r in universe):
            raise ValueError(
                f"unknown rule selector {selector!r} (a rule name, a code prefix such as "
                f"'AOTI0', or 'ALL'; see `aoti-lint rules`)"
            )
    # Apply least specific first; at a tie, ignore after select so that it wins.
    ordered = sorted(
        [(s, True) for s in select] + [(s, False) for s in ignore],
        key=lambda item: (_specificity(item[0], universe), not item[1]),
    )
    enabled: set[str] = set()
    for selector, on in ordered:
        for rule in universe:
            if _matches(selector, rule):
                (enabled.add if on else enabled.discard)(rule.code)
    return [r for r in universe if r.code in enabled]


def sort_key(finding: Finding) -> tuple:
    """Deterministic order: package, member path, line, column, code, then the rest."""
    loc = finding.location
    return (
        finding.package,
        loc.path,
        loc.line,
        loc.column,
        finding.code,
        finding.model,
        -1 if finding.input is None else finding.input,
        -1 if finding.dim is None else finding.dim,
        finding.message,
    )


def run_rules(
    package: "Package",
    rules: Iterable[type[Rule] | Rule],
    ctx: Context | None = None,
) -> list[Finding]:
    """Run `rules` over every model of `package`: deduplicated, sorted by `sort_key`, and a check
    copied into several kernels reported once (merging.py)."""
    from ..query import sizes

    ctx = ctx or Context()
    if not ctx.package:
        ctx = replace(ctx, package=package.path)
    package = sizes.as_deployed(package, ctx.runtime_checks)
    instances = [rule() if isinstance(rule, type) else rule for rule in rules]
    ctx = replace(ctx, rules=frozenset(r.code for r in instances))
    from ..query import witness as W

    # A rule that built its Finding by hand may have left `package` empty; the source line under
    # the finding's location comes from the model (reporters never open the archive); then the
    # user's code behind each finding (source.py) and its headline (headline.py). One finding at a
    # time from its rule through these steps to the merge: a check copied into thousands of kernels
    # is held as one finding and its places.
    with W.memoized():  # the models are linked: witnesses of an assignment computed once
        located = _located(_produced(instances, package, ctx), package, ctx)
        filled = headline.fill(package.models, source.attribute(package.models, located), catalog()["HEADLINES"])
        return merging.merged(filled, sort_key)


def _produced(instances: list[Rule], package: "Package", ctx: Context) -> Iterator[Finding]:
    for instance in instances:
        yield from instance.check_package(package, ctx)
        for model in package.models:
            poll(f"running rule {instance.name}")
            yield from instance.check(model, ctx)


def _located(found: Iterable[Finding], package: "Package", ctx: Context) -> Iterator[Finding]:
    """Each of `found` with its package and source line."""
    models = {m.name: m for m in package.models}
    for f in found:
        changes: dict[str, Any] = {} if f.package else {"package": ctx.package}
        if not f.snippet and f.model in models:
            line = models[f.model].line_text(f.location)
            if line is not None:
                changes["snippet"] = (line,)
        yield changed(f, **changes) if changes else f
