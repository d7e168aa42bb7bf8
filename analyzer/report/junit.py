"""`--format junit`: JUnit XML for CI test views: one test suite per package, one failing test case
per finding (an accepted one is skipped, with its reason), one passing case for a clean package."""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence
from xml.etree import ElementTree as ET

from ..core.findings import Finding
from ..core.untrusted import xml_text
from .common import detail, position


# XML 1.0 cannot carry most control characters nor surrogates (a hostile member name can hold
# them), even escaped: untrusted.xml_text shows them as visible escapes.
_xml = xml_text


def _package_names(findings: Sequence[Finding], packages: Sequence[object]) -> list[str]:
    names = [str(getattr(p, "path", p)) for p in packages] + [f.package for f in findings]
    return list(dict.fromkeys(names))  # a package given twice is one suite


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[object] = (),  # unreadable packages: on stderr and in the exit code only
) -> str:
    by_package: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_package[f.package].append(f)
    root = ET.Element("testsuites", name="aoti-lint")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for name in _package_names(findings, packages):
        own = by_package.get(name, [])
        suite = ET.SubElement(root, "testsuite", name=_xml(name))
        failures = skipped = 0
        if not own:
            ET.SubElement(suite, "testcase", name="aoti-lint", classname=_xml(name))
        for f in own:
            case = ET.SubElement(suite, "testcase", name=_xml(f"{f.code} {f.rule} {position(f)}"), classname=_xml(name))
            body = "\n".join(x for x in (f.message, detail(f), *f.chain, f.witness and f"witness: {f.witness}",
                                         f.fix and f"fix: {f.fix}") if x)
            if f.accepted:
                skipped += 1
                ET.SubElement(case, "skipped", message=_xml(f"accepted: {f.accepted}")).text = _xml(body)
            else:
                failures += 1
                ET.SubElement(case, "failure", message=_xml(f.message), type=str(f.severity)).text = _xml(body)
        tests = max(len(own), 1)
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", str(skipped))
        totals["tests"] += tests
        totals["failures"] += failures
        totals["skipped"] += skipped
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
