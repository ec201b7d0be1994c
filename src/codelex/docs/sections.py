"""Documentation sections: Markdown parsed by markdown-it-py, reStructuredText titles with Sphinx's ids.

Markdown goes through markdown-it-py's CommonMark parser (with mdit-py-plugins
for front matter, admonitions and block attributes), so a heading is exactly
what a CommonMark renderer makes one: ATX and Setext headings, headings inside
containers (block quotes, lists, admonitions, ``:::`` and ``///`` blocks), and
never a line inside fenced or indented code or HTML.  A heading's trailing
attribute list (``## Title { #custom-id .class }``, the form Python-Markdown's
``attr_list`` and MkDocs use) is parsed with mdit-py-plugins' attribute
parser: its ``#id`` is the section's anchor and the list leaves the heading's
text.  Other anchors are GitHub-style (``-1``, ``-2`` for duplicates), made
from the heading's plain text (emphasis, code and link markup removed).

reStructuredText titles are lines underlined (optionally also overlined) by
punctuation; their anchors are the ids Sphinx gives sections (docutils'
``make_id``: ASCII-folded, lowercase, runs of other characters to ``-``; a
title with no such id, or one seen before in the document, gets ``idN``), and
the ``.. _label:`` targets just above a title are the section's ``labels``
(what ``:ref:`` names).  Text before the first heading is a preamble section.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codelex.languages import is_documentation, kind_of

__all__ = ["Section", "is_doc_path", "sections_from_file", "sections_from_markdown", "sections_from_rst", "slug",
           "sphinx_id"]


@dataclass(frozen=True)
class Section:
    """One section of a document: its heading and the body under it.

    Attributes
    ----------
    path : str
        The document, relative to the project root (``/``-separated).
    title : str
        The document's title (its first top-level heading, the front matter's
        ``title``, else the file's stem).
    heading : str
        The heading's plain text.
    anchor : str
        The fragment that reaches the heading in rendered docs (``""`` for a preamble).
    start_line, end_line : int
        1-based lines: the heading's first line (1 for a preamble) and the section's last non-blank line.
    text : str
        The body as written, without the heading's lines.
    labels : tuple of str
        Other names that reach the section: reStructuredText ``.. _label:`` targets placed just above it.
    """

    path: str
    title: str
    heading: str
    anchor: str
    start_line: int
    end_line: int
    text: str
    labels: tuple[str, ...] = ()


# --- anchors -------------------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub-style anchor: lowercase, punctuation dropped, spaces to ``-``."""
    text = unicodedata.normalize("NFC", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _github_anchors(headings: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for heading in headings:
        base = slug(heading)
        n = seen.get(base, 0)
        out.append(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


# docutils folds these letters before dropping what is not ASCII (NFKD does not decompose them).
_ID_DIGRAPHS = str.maketrans({"ß": "sz", "æ": "ae", "œ": "oe", "ȸ": "db", "ȹ": "qp"})
_ID_LETTERS = str.maketrans({
    "ø": "o", "đ": "d", "ħ": "h", "ı": "i", "ł": "l", "ŧ": "t", "ƀ": "b", "ƃ": "b", "ƈ": "c", "ƌ": "d", "ƒ": "f",
    "ƙ": "k", "ƚ": "l", "ƞ": "n", "ƥ": "p", "ƫ": "t", "ƭ": "t", "ƴ": "y", "ƶ": "z", "ǥ": "g", "ȥ": "z", "ȴ": "l",
    "ȵ": "n", "ȶ": "t", "ȷ": "j", "ȼ": "c", "ȿ": "s", "ɀ": "z", "ɇ": "e", "ɉ": "j", "ɋ": "q", "ɍ": "r", "ɏ": "y",
})
_NON_ID = re.compile(r"[^a-z0-9]+")
_NON_ID_AT_ENDS = re.compile(r"^[-0-9]+|-+$")


def sphinx_id(text: str) -> str:
    """The id Sphinx (docutils' ``make_id``) gives a title or a target name; ``""`` when none is left.

    Lowercase, a few letters transliterated, accents and every other non-ASCII character dropped, runs of
    anything but ``a-z0-9`` to one ``-``, leading digits and hyphens and trailing hyphens removed.
    """
    folded = text.lower().translate(_ID_DIGRAPHS).translate(_ID_LETTERS)
    folded = unicodedata.normalize("NFKD", folded).encode("ascii", "ignore").decode("ascii")
    return _NON_ID_AT_ENDS.sub("", _NON_ID.sub("-", " ".join(folded.split())))


# --- assembling sections from heading marks --------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):  # (a byte order mark is no part of the first line: front matter, a title)
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@dataclass(frozen=True)
class _Mark:
    line: int  # 0-based first line of the heading
    span: int  # lines the heading takes
    level: int
    heading: str  # plain text
    anchor: str
    labels: tuple[str, ...] = ()
    body_end: int | None = None  # (reST) where the previous section's body stops: above this heading's targets


def _assemble(path: str, lines: list[str], marks: list[_Mark], title: str | None, body_start: int = 0) -> list[Section]:
    if title is None:
        title = next((m.heading for m in marks if m.level == 1), None) or Path(path).stem
    sections = []
    first = marks[0].line if marks else len(lines)
    if marks and marks[0].body_end is not None:
        first = marks[0].body_end
    preamble = "\n".join(lines[body_start:first]).strip("\n")
    if preamble.strip():
        sections.append(Section(path, title, title, "", body_start + 1, first, preamble))
    for k, mark in enumerate(marks):
        end = len(lines)
        if k + 1 < len(marks):
            following = marks[k + 1]
            end = following.body_end if following.body_end is not None else following.line
        begin = mark.line + mark.span
        end = max(end, begin)
        body = "\n".join(lines[begin:end]).strip("\n")
        last = end
        while last > begin and not lines[last - 1].strip():
            last -= 1
        sections.append(Section(path, title, mark.heading, mark.anchor, mark.line + 1, max(last, begin), body,
                                mark.labels))
    return sections


# --- Markdown --------------------------------------------------------------------------------------------------

_MARKDOWN = None
#: A heading's trailing attribute list (Python-Markdown ``attr_list``: ``{: #id .class key=value }``).
_FRONT_TITLE = re.compile(r"""^title[ \t]*[:=][ \t]*(["']?)(.+?)\1[ \t]*$""", re.MULTILINE)


def _markdown():
    """The shared parser: CommonMark plus tables, front matter, ``!!!`` admonitions and ``{#id}`` block
    attributes; the inline stage is off (only headings' inline text is parsed, one heading at a time)."""
    global _MARKDOWN
    if _MARKDOWN is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.admon import admon_plugin
        from mdit_py_plugins.attrs import attrs_block_plugin
        from mdit_py_plugins.front_matter import front_matter_plugin

        md = MarkdownIt("commonmark").enable("table")
        md.use(front_matter_plugin).use(admon_plugin).use(attrs_block_plugin)
        md.disable("inline")
        _MARKDOWN = md
    return _MARKDOWN


#: A heading longer than this is taken as written, not parsed for its inline markup (real headings are a line
#: of prose; a hostile one of brackets or emphasis markers costs the inline parser seconds).
MAX_PARSED_HEADING = 300


def _inline_text(md, source: str) -> str:
    """The plain text of inline Markdown (what a heading shows): markup dropped, code and link text kept."""
    if len(source) > MAX_PARSED_HEADING:
        return " ".join(source.split())
    out: list[str] = []

    def walk(tokens) -> None:
        for t in tokens:
            if t.type in ("text", "code_inline"):
                out.append(t.content)
            elif t.type in ("softbreak", "hardbreak"):
                out.append(" ")
            elif t.type == "image":
                walk(t.children or [])
            elif t.children:
                walk(t.children)

    tokens: list = []
    md.inline.parse(source, md, {}, tokens)  # (the core's inline stage is off: the inline parser, directly)
    walk(tokens)
    return " ".join("".join(out).split())


def _heading_attrs(content: str) -> tuple[str, dict]:
    """``(content without its trailing attribute list, the list's attributes)``: a heading that ends with
    ``{...}`` (Python-Markdown's ``attr_list``: ``{: #id .class key=value }``) whose body
    mdit-py-plugins' attribute parser reads whole.  Found from the end, in time linear in the heading."""
    body = content.rstrip(" \t")
    if not body.endswith("}"):
        return content, {}
    start = body.rfind("{")
    inner = body[start:]
    if start < 0 or "\n" in inner or len(inner) > MAX_PARSED_HEADING:
        return content, {}
    if inner.startswith("{:"):
        inner = "{" + inner[2:]
    from mdit_py_plugins.attrs.parse import ParseError, parse

    try:
        end, attrs = parse(inner)
    except ParseError:
        return content, {}
    if end != len(inner) - 1:
        return content, {}
    return body[:start].rstrip(" \t"), attrs


def sections_from_markdown(path: str, text: str) -> list[Section]:
    """Sections at the headings CommonMark finds (see the module docstring); front matter is no section."""
    lines = _lines(text)
    md = _markdown()
    try:
        tokens = md.parse("\n".join(lines))
    except RecursionError:  # (a pathological document: its text is still searchable, as one preamble)
        tokens = []
    body_start = 0
    title = None
    headings: list[tuple[int, int, int, str, str]] = []  # line, span, level, plain text, explicit id
    for i, t in enumerate(tokens):
        if t.type == "front_matter" and t.map:
            body_start = t.map[1]
            m = _FRONT_TITLE.search(t.content)
            if m and m.group(2).strip():
                title = m.group(2).strip()
        elif t.type == "heading_open" and t.map and i + 1 < len(tokens):
            content, attrs = _heading_attrs(tokens[i + 1].content)
            explicit = attrs.get("id") or t.attrs.get("id") or ""
            start, end = t.map
            headings.append((start, max(1, end - start), int(t.tag[1]), _inline_text(md, content),
                             str(explicit)))
    generated = iter(_github_anchors(h for *_, h, explicit in headings if not explicit))
    marks = [_Mark(line, span, level, heading, explicit or next(generated))
             for line, span, level, heading, explicit in headings]
    if title is None and not any(m.level == 1 for m in marks):
        title = Path(path).stem
    # Front matter lines stay out of every section, including the preamble.
    return _assemble(path, lines, marks, title, body_start)


# --- reStructuredText -------------------------------------------------------------------------------------------

_RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.!$%&(),/;?@\[\\\]{|}])\1{2,}[ \t]*$")
#: ``.. _label:`` (an internal hyperlink target; ``.. _`odd: label`:`` quoted; ``__`` is anonymous, no label).
_RST_TARGET = re.compile(r"^\.\. _(?!_)(`(?:[^`\\]|\\.)+`|(?:[^:\\]|\\.)+):[ \t]*$")
_RST_ROLE = re.compile(r":[\w.+-]+:`((?:[^`\\]|\\.)*?)`")
_RST_REFERENCE = re.compile(r"`((?:[^`\\]|\\.)+?)`__?")
_RST_LITERAL = re.compile(r"``(.+?)``")
_RST_EMPHASIS = re.compile(r"\*\*(.+?)\*\*|\*(.+?)\*")
_RST_TARGET_SUFFIX = re.compile(r"\s*<[^<>]*>$")


def _rst_plain(title: str) -> str:
    """A title's text as docutils reads it: literals, roles, references and emphasis reduced to their text (a
    title over :data:`MAX_PARSED_HEADING` characters is taken as written: the markup patterns backtrack)."""
    if len(title) > MAX_PARSED_HEADING:
        return " ".join(title.split())

    def reference(m: re.Match) -> str:  # `text <target>`_ → text
        shown = _RST_TARGET_SUFFIX.sub("", m.group(1))
        return shown or m.group(1)

    parts = []
    for k, piece in enumerate(_RST_LITERAL.split(title)):  # odd pieces: inside ``literals``, kept as written
        if k % 2 == 0:
            piece = _RST_ROLE.sub(reference, piece)
            piece = _RST_REFERENCE.sub(reference, piece)
            piece = _RST_EMPHASIS.sub(lambda m: m.group(1) or m.group(2), piece).replace("\\", "")
        parts.append(piece)
    return " ".join("".join(parts).split())


def _label_name(raw: str) -> str:
    """A target's reference name as Sphinx keeps it: backquotes and escapes dropped, whitespace collapsed,
    lowercase."""
    if raw.startswith("`") and raw.endswith("`"):
        raw = raw[1:-1]
    return " ".join(raw.replace("\\", "").split()).lower()


def sections_from_rst(path: str, text: str) -> list[Section]:
    """Sections at reStructuredText titles, anchored by Sphinx's ids, with the targets above them as labels."""
    lines = _lines(text)
    found: list[tuple[int, int, int, str]] = []  # line, span, level, plain title
    styles: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = _RST_ADORNMENT.match(line)
        if over and i + 2 < len(lines) and lines[i + 1].strip() and _RST_ADORNMENT.match(lines[i + 2]) \
                and lines[i + 2].strip()[0] == line.strip()[0] \
                and len(lines[i + 2].rstrip()) >= len(lines[i + 1].strip()):
            style = (line.strip()[0], True)
            if style not in styles:
                styles.append(style)
            found.append((i, 3, styles.index(style) + 1, _rst_plain(lines[i + 1].strip())))
            i += 3
            continue
        if line.strip() and not over and i + 1 < len(lines):
            under = _RST_ADORNMENT.match(lines[i + 1])
            if under and len(lines[i + 1].rstrip()) >= len(line.rstrip()) and not line.startswith((" ", "\t")):
                style = (lines[i + 1].strip()[0], False)
                if style not in styles:
                    styles.append(style)
                found.append((i, 2, styles.index(style) + 1, _rst_plain(line.strip())))
                i += 2
                continue
        i += 1
    marks: list[_Mark] = []
    used: set[str] = set()
    auto = 0
    for line, span, level, heading in found:
        anchor = sphinx_id(heading)
        if not anchor or anchor in used:  # docutils numbers the ids it has to invent, per document
            auto += 1
            while f"id{auto}" in used:
                auto += 1
            anchor = f"id{auto}"
        used.add(anchor)
        # The targets just above the title (blank lines between them allowed) name the section.
        labels: list[str] = []
        k = line - 1
        body_end = None
        while k >= 0 and (not lines[k].strip() or _RST_TARGET.match(lines[k])):
            m = _RST_TARGET.match(lines[k])
            if m:
                labels.append(_label_name(m.group(1)))
                body_end = k
            k -= 1
        if marks and body_end is not None and body_end < marks[-1].line + marks[-1].span:
            body_end = None  # (never above the previous title)
        marks.append(_Mark(line, span, level, heading, anchor, tuple(reversed(labels)) if body_end is not None
                           else (), body_end))
    return _assemble(path, lines, marks, None)


# --- which files ---------------------------------------------------------------------------------------------


def sections_from_file(path: str, text: str) -> list[Section]:
    """By kind: reStructuredText by its titles, anything else as Markdown."""
    return sections_from_rst(path, text) if kind_of(path) == "restructuredtext" else sections_from_markdown(path, text)


def is_doc_path(path: str) -> bool:
    """Whether the docs index a file: :func:`codelex.languages.is_documentation` (prose, and ``.txt`` files under
    a ``doc``/``docs``/``Documentation`` directory)."""
    return is_documentation(path)
