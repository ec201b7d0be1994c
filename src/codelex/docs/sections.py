"""Documentation sections: Markdown (ATX and Setext headings) and reStructuredText titles.

Fenced code and front matter are skipped; anchors are GitHub-style (``-1``,
``-2`` for duplicates); text before the first heading is a preamble section.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Section", "is_doc_path", "sections_from_file", "sections_from_markdown", "sections_from_rst", "slug"]


@dataclass(frozen=True)
class Section:
    """One section of a document: its heading line and the body under it."""

    path: str
    title: str  # the document's title
    heading: str
    anchor: str
    start_line: int  # 1-based: the heading's line (1 for a preamble)
    end_line: int
    text: str  # the body, without the heading line


def slug(heading: str) -> str:
    """GitHub-style anchor: lowercase, punctuation dropped, spaces to ``-``."""
    text = unicodedata.normalize("NFC", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(headings: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for heading in headings:
        base = slug(heading)
        n = seen.get(base, 0)
        out.append(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after YAML (---) or TOML (+++) front matter, else 0."""
    if lines and lines[0].strip() in ("---", "+++"):
        fence = lines[0].strip()
        for i in range(1, len(lines)):
            if lines[i].strip() in (fence, "...") :
                return i + 1
    return 0


def _assemble(path: str, lines: list[str], marks: list[tuple[int, int, str, int]]) -> list[Section]:
    """marks: (heading line index, level, heading text, lines the heading takes)."""
    stem = Path(path).stem
    title = next((h for _, level, h, _ in marks if level == 1), stem) if marks else stem
    anchors = _anchors(h for _, _, h, _ in marks)
    sections = []
    first = marks[0][0] if marks else len(lines)
    preamble = "\n".join(lines[:first]).strip("\n")
    if preamble.strip():
        sections.append(Section(path, title, title, "", 1, first, preamble))
    for k, (index, _level, heading, span) in enumerate(marks):
        end = marks[k + 1][0] if k + 1 < len(marks) else len(lines)
        body = "\n".join(lines[index + span:end]).strip("\n")
        last = end
        while last > index + span and not lines[last - 1].strip():
            last -= 1
        sections.append(Section(path, title, heading, anchors[k], index + 1, max(last, index + span), body))
    return sections


def sections_from_markdown(path: str, text: str) -> list[Section]:
    """Sections at ATX (``#``…``######``) and Setext headings, ignoring fenced code and front matter."""
    lines = _lines(text)
    start = _front_matter_end(lines)
    marks: list[tuple[int, int, str, int]] = []
    fence: str | None = None
    previous_paragraph = False
    for i in range(start, len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            previous_paragraph = False
            continue
        if m:
            fence = m.group(1)
            previous_paragraph = False
            continue
        atx = _ATX.match(line)
        if atx:
            marks.append((i, len(atx.group(1)), (atx.group(2) or "").strip(), 1))
            previous_paragraph = False
            continue
        setext = _SETEXT.match(line)
        if setext and previous_paragraph and (not marks or marks[-1][0] != i - 1):
            level = 1 if setext.group(1)[0] == "=" else 2
            marks.append((i - 1, level, lines[i - 1].strip(), 2))
            previous_paragraph = False
            continue
        previous_paragraph = bool(line.strip()) and not line.startswith("    ")
    # Front matter lines stay out of every section, including the preamble.
    return _assemble(path, [""] * start + lines[start:], marks)


_RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.!$%&(),/;?@\[\\\]{|}])\1{2,}[ \t]*$")


def sections_from_rst(path: str, text: str) -> list[Section]:
    """Sections at reStructuredText titles: a line underlined (optionally also overlined) by punctuation."""
    lines = _lines(text)
    marks: list[tuple[int, int, str, int]] = []
    styles: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = _RST_ADORNMENT.match(line)
        if over and i + 2 < len(lines) and lines[i + 1].strip() and _RST_ADORNMENT.match(lines[i + 2]) \
                and lines[i + 2].strip()[0] == line.strip()[0] and len(lines[i + 2].rstrip()) >= len(lines[i + 1].strip()):
            style = (line.strip()[0], True)
            if style not in styles:
                styles.append(style)
            marks.append((i, styles.index(style) + 1, lines[i + 1].strip(), 3))
            i += 3
            continue
        if line.strip() and not over and i + 1 < len(lines):
            under = _RST_ADORNMENT.match(lines[i + 1])
            if under and len(lines[i + 1].rstrip()) >= len(line.rstrip()) and not line.startswith((" ", "\t")):
                style = (lines[i + 1].strip()[0], False)
                if style not in styles:
                    styles.append(style)
                marks.append((i, styles.index(style) + 1, line.strip(), 2))
                i += 2
                continue
        i += 1
    return _assemble(path, lines, marks)


def sections_from_file(path: str, text: str) -> list[Section]:
    """By extension: ``.rst`` → reStructuredText, anything else → Markdown."""
    return sections_from_rst(path, text) if path.lower().endswith(".rst") else sections_from_markdown(path, text)


def is_doc_path(path: str) -> bool:
    """``.md``, ``.mdx``, ``.markdown``, ``.rst``, and ``.txt`` under a ``doc``/``docs``/``Documentation`` directory."""
    low = path.lower()
    if low.endswith((".md", ".mdx", ".markdown", ".rst")):
        return True
    parts = low.split("/")
    return low.endswith(".txt") and any(p in ("doc", "docs", "documentation") for p in parts[:-1])
