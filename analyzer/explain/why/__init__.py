"""`aoti-lint why`: route a runtime failure (a message or a whole crash log) to its candidate causes.

Three steps, three modules: `parse` recognises failure lines in untrusted log text (linear-time
patterns, a deadline between lines), `explain` matches them against the linked model and ranks
candidate causes, and `analyzer.report.why` renders the result as text or JSON.
"""

from __future__ import annotations

from .explain import Candidate, WhyResult, explain_failure
from .parse import CheckKind, Failure, FailureKind, parse_failure

__all__ = ["Candidate", "CheckKind", "Failure", "FailureKind", "WhyResult", "explain_failure", "parse_failure"]
