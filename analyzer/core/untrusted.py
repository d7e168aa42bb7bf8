"""Text from inputs, and the one escaping layer per output medium.

Every string read from a package (member and model folder names, metadata values, assertion
messages, source lines), an exported program (input names, stack traces), a config or a baseline
(accept reasons), a log or a file name is untrusted: it may hold terminal escapes, newlines that
start CI log commands, markdown or HTML, bidi overrides, lone surrogates. Such strings are
composed into a finding's prose (`message`, `detail`, `fix`, `chain`, `witness`, ...), so a
reporter treats every string field of a Finding, a Model, a Contract or a why result as
`Untrusted`, and only its own literals as trusted. Each medium has one renderer here, and the
reporters call it on each field where the field enters their output:

- `terminal` (each field) and `terminal_lines` (each report): text, concise, inspect, contract,
  why and every stderr line;
- `md_text`, `md_code`, `md_fence`, `md_cell`: the pull-request comment, SARIF `message.markdown`,
  reviewdog messages;
- `html_text`: the HTML report and HTML inside markdown;
- `json_dumps`: every JSON document (valid UTF-8 whatever the strings hold);
- `xml_text`: JUnit;
- `workflow_data`, `workflow_property`: GitHub Actions workflow commands;
- `uri`: SARIF artifact locations (a non-UTF-8 file name keeps its bytes, percent-encoded).

Each renderer leaves ordinary text (printable, no markup that could open or close anything)
unchanged, so reports on ordinary packages do not change byte for byte.
"""

from __future__ import annotations

import bisect
import html
import json
import re
from typing import Any
from urllib.parse import quote


class Untrusted(str):
    """A string read from an input; a marker for readers of the code. Rendering never trusts a
    plain `str` field either (prose around an input's text is a plain str), so the type is a
    promise of the reader, not a switch of the renderers."""

    __slots__ = ()


# Characters never written raw into a line of human-readable output: C0 controls (newline, CR and
# tab included: a field never splits or realigns a line), DEL, C1 controls, bidi embeddings,
# overrides, isolates and marks (Trojan Source), the line and paragraph separators that some
# viewers break lines on, the BOM, and lone surrogates (a non-UTF-8 file name decoded with
# surrogateescape, or an escaped surrogate in JSON), which no UTF-8 writer can encode.
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
                     "\ud800-\udfff]")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _show(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep: str = "") -> str:
    """`text` with every hidden character written as a visible escape (`\\x1b`, `\\u202e`,
    `\\udcff`), except those in `keep` (e.g. "\\t" where the layout allows tabs)."""
    text = str(text)
    if not keep:
        return _HIDDEN.sub(_show, text)
    return _HIDDEN.sub(lambda m: m.group() if m.group() in keep else _show(m), text)


def terminal(text: object) -> str:
    """A field of terminal output: no escape sequence, no line break, no bidi reordering, no
    `##[` (a CI log command anywhere in a line; see `terminal_lines`)."""
    return no_v1_command(visible(str(text)))


def no_v1_command(text: str) -> str:
    """`text` with no `##[` (a v1 CI log command, obeyed anywhere in a line): `#\\x23[`."""
    return _COMMAND_V1.sub(r"\\x23", text) if "##[" in text else text


# GitHub's runner obeys a workflow command on any line of a job's log that starts with `::` after
# leading whitespace (`::add-mask::x`, `::stop-commands::t`), and a v1 command `##[add-mask]x`
# anywhere in a line. A terminal report is often such a log: its fields are one line each
# (`terminal`), and this pass over its lines breaks both forms wherever input text put them.
_COMMAND_START = re.compile(r"^([ \t]*):(?=:)", re.MULTILINE)
_COMMAND_V1 = re.compile(r"#(?=#\[)")


def terminal_lines(text: str) -> str:
    """The final pass of a terminal report (fields already through `terminal`): no line can be
    read as a CI workflow command. `\\x3a` and `\\x23` are the escapes of `:` and `#`."""
    if "::" not in text and "##[" not in text:
        return text
    text = _COMMAND_V1.sub(r"\\x23", text)
    return _COMMAND_START.sub(lambda m: m.group(1) + "\\x3a", text)


# -- markdown (GitHub-flavoured) ----------------------------------------------------------------------

# `<` that CommonMark could read as raw HTML (an open tag `<double>`, a closing tag, a comment such as
# the Action's marker, a declaration, a processing instruction) or an autolink (`<scheme:...>`,
# `<a@b>`); `<=`, `< ks0` and `static_cast<int64_t>` (no tag: `_` cannot follow a tag name) stay.
_TAG_OPEN = re.compile(r"<(?=[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$)|/[A-Za-z]|[!?]|[A-Za-z][A-Za-z0-9+.-]{1,31}:"
                       r"|[^\s<>@]+@)")
# `]` that could end a link's (or an image's) text: `](`. Without a definition nothing else links,
# and a definition needs a line that starts with `[`, which `md_text` never leaves (see there).
_LINK_CLOSE = re.compile(r"\](?=\()")
# `&` that starts an entity reference: `&#64;someone` would render as a live mention.
_ENTITY = re.compile(r"&(?=#|[A-Za-z][A-Za-z0-9]*;)")
# What GitHub turns into a link or a notification: URLs (and `www.` autolinks), `@user` mentions
# and e-mail addresses, `#123` / `owner/repo#123` / `GH-123` references. Such a word is put in a code
# span, where GitHub links nothing.
_LINKISH = re.compile(r"://|\bwww\.|@[\w-]|#\d|\bGH-\d", re.IGNORECASE)
_WORD = re.compile(r"[^\s`\\]+")
_BACKTICKS = re.compile("`+")
_BLOCK_START = set("#>-+*=_~|")
_ORDERED = re.compile(r"(\d{1,9})[.)]")


def _code_segments(text: str) -> list[tuple[bool, str]]:
    """`text` split as CommonMark splits a line into code spans and the rest: (is_code, text),
    where a code segment includes its fences. A backtick run opens a span closed by the next run
    of the same length (backslashes are literal inside, so closers are whole runs); outside code
    a backslash escapes the backtick after it. Literal backticks come back escaped. Linear in the
    number of runs (a run's closer is found by bisection), whatever the input."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    if not runs:
        return [(False, text)] if text else []
    by_length: dict[int, list[int]] = {}
    for index, (first, last) in enumerate(runs):
        by_length.setdefault(last - first, []).append(index)
    out: list[tuple[bool, str]] = []
    plain, index = 0, 0  # plain: where the text not yet emitted starts
    while index < len(runs):
        first, last = runs[index]
        slashes = first
        while slashes > plain and text[slashes - 1] == "\\":
            slashes -= 1
        if (first - slashes) % 2:  # the first backtick is escaped: a literal
            first += 1
        length = last - first
        if length == 0:
            index += 1
            continue
        closers = by_length.get(length, [])
        k = bisect.bisect_right(closers, index)
        if k == len(closers):  # no closing run of the same length: literal backticks, escaped so
            # that they cannot pair with a run further along the line
            out.append((False, text[plain:first] + "\\`" * length))
            plain, index = last, index + 1
            continue
        close = runs[closers[k]][1]
        if first > plain:
            out.append((False, text[plain:first]))
        out.append((True, text[first:close]))
        plain, index = close, closers[k] + 1
    if plain < len(text):
        out.append((False, text[plain:]))
    return out


def _inert(plain: str) -> str:
    """Text outside code spans: link-like words into code spans, then no HTML, link or entity."""
    parts, last = [], 0
    for word in _WORD.finditer(plain):
        if not _LINKISH.search(word.group()):
            continue
        before = plain[last:word.start()]
        parts.append(_escape_plain(before))
        # A backslash right before the span would escape its opening backtick.
        parts.append((" " if before.endswith("\\") else "") + md_code(word.group()))
        last = word.end()
    parts.append(_escape_plain(plain[last:]))
    return "".join(parts)


def _escape_plain(text: str) -> str:
    text = _ENTITY.sub("&amp;", text)
    text = _TAG_OPEN.sub("&lt;", text)
    return _LINK_CLOSE.sub("&#93;", text)


def _one_line(text: object) -> str:
    """Line breaks (and every other hidden character) as visible escapes: input text never
    starts a markdown line, so it can open no block (HTML, table, heading, fence, list)."""
    return visible(str(text))


def md_text(text: object) -> str:
    """Text for a markdown paragraph or table cell, which may mix the tool's own code spans with
    untrusted text: code spans are kept, everything outside them is made inert (no raw HTML, no
    link, no mention or reference, no entity), and it stays on one line."""
    out = []
    for is_code, segment in _code_segments(_one_line(text)):
        out.append(segment if is_code else _inert(segment))
    text = "".join(out)
    # Placed at the start of a line, the text must open no block either: a link definition
    # (`[label]: url`, for the whole comment), a `~~~` fence (it would swallow the rest of the
    # comment, `</details>` included), a heading, quote, list, table, thematic break or an
    # indented code block.
    indent = len(text) - len(text.lstrip(" "))
    if indent >= 4:  # an indented code block
        text, indent = text[indent:], 0
    rest = text[indent:]
    if rest[:1] == "[":
        return text[:indent] + "&#91;" + rest[1:]
    if rest[:1] and rest[0] in _BLOCK_START:
        return text[:indent] + "\\" + rest
    numbered = _ORDERED.match(rest)
    if numbered:
        return text[:indent] + numbered.group(1) + "\\" + rest[numbered.end(1):]
    return text


def md_code(text: object) -> str:
    """`text` as one inline code span, with a fence longer than any backtick run inside it."""
    text = _one_line(text)
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_fence(lines: list[str] | tuple[str, ...], info: str = "") -> list[str]:
    """A fenced code block of `lines`: each line shown as it is (tabs kept, every other hidden
    character escaped, so no line break inside a line), the fence longer than any backtick run."""
    body = [visible(line, keep="\t") for line in lines]
    longest = max((len(run) for line in body for run in re.findall("`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body, fence]


def md_cell(markdown: str) -> str:
    """Markdown (already rendered by md_text/md_code) safe inside a table cell: pipes escaped
    (even in code spans, as GFM requires), no line break."""
    return markdown.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


# -- HTML, JSON, XML, workflow commands, URIs ----------------------------------------------------------


def html_text(text: object, keep: str = "\t\n") -> str:
    """Text or an attribute value in HTML: `&<>"'` as entities, hidden characters as visible
    escapes (tabs and newlines kept where `keep` says; `keep=""` inside an HTML block of markdown,
    where a blank line would end the block)."""
    return html.escape(visible(str(text), keep=keep), quote=True)


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_dumps(doc: Any, **kwargs: Any) -> str:
    """`json.dumps` with non-ASCII kept readable, and lone surrogates (which only strings can
    hold) written as `\\udcff` escapes, so the document is always encodable as UTF-8."""
    text = json.dumps(doc, ensure_ascii=False, **kwargs)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def xml_text(text: object) -> str:
    """Text or an attribute value for XML 1.0: the characters it cannot carry even escaped (most
    controls, surrogates) and the other hidden ones as visible escapes; newlines and tabs kept."""
    return _NOT_XML.sub(_show, visible(str(text), keep="\t\n"))


_NOT_XML = re.compile("[\ufffe\uffff]")


def workflow_data(text: object) -> str:
    """The message of a workflow command, as actions/toolkit's `escapeData` (`%`, CR and LF
    percent-encoded, so nothing in it starts a line of the log), hidden characters made visible."""
    return visible(str(text), keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: object) -> str:
    """A `key=value` property of a workflow command: `workflow_data` plus `:` and `,`, which
    delimit properties."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def uri(path: str) -> str:
    """A relative URI reference for a path: a name decoded with surrogateescape gets its original
    bytes back (`%FF`); any other lone surrogate its UTF-8 code-point bytes."""
    try:
        return quote(path, safe="/", errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(path, safe="/", errors="surrogatepass")


def utf8(text: str) -> bytes:
    """`text` as bytes to hash: lone surrogates encoded as themselves instead of failing."""
    return text.encode("utf-8", "surrogatepass")
