"""Docs section search: the seed's scoring, section parsing, the index, and the surfaces."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex.docs import (
    DocsIndex,
    Section,
    score,
    search,
    sections_from_markdown,
    sections_from_rst,
    slug,
    snippet,
    terms,
)
from codelex.persist.docs import load_docs


def sec(heading: str, text: str, path: str = "a.md") -> Section:
    return Section(path, "Doc", heading, slug(heading), 1, 1, text)


# --- terms -----------------------------------------------------------------------------


def test_terms():
    assert terms("How do I Parse the CONFIG file?") == ["parse", "config", "file"]
    assert terms("Option.unwrapOr vs option.unwrapor") == ["option.unwrapor", "vs"]
    assert terms("snake_case, kebab-case;  x") == ["snake_case", "kebab", "case", "x"]
    assert terms("the of and") == []
    assert terms("") == []
    assert terms("café naïve") == ["café", "naïve"]
    with pytest.raises(TypeError):
        terms(None)


# --- score (hand-computed) ---------------------------------------------------------------


def test_score_rules():
    q = "parse config"
    w = terms(q)
    # phrase in heading +40, each term in heading +10 ×2, all present +15
    assert score(sec("How to parse config files", ""), q, w) == 40 + 10 + 10 + 15
    # phrase in text +12, occurrences +2 each: parse ×1, config ×1; all present +15
    assert score(sec("Intro", "You parse config here."), q, w) == 12 + 2 + 2 + 15
    # occurrences are capped at 5: config ×7 → +10; parse absent → no +15
    assert score(sec("Intro", "config " * 7), q, w) == 10
    # a term absent from a section adds nothing
    assert score(sec("Intro", "nothing relevant"), q, w) == 0
    # occurrences are non-overlapping substrings of the lowercased text
    assert score(sec("x", "aaaa"), "aa", ["aa"]) == 2 * 2 + 15
    # a phrase shorter than 3 characters does not count as a phrase
    assert score(sec("ab", "ab"), "ab", ["ab"]) == 10 + 2 + 15
    # heading and text are lowercased
    assert score(sec("PARSE", "CONFIG"), q, w) == 10 + 2 + 15


def test_search_order_limit_and_edges():
    sections = [sec("One", "alpha"), sec("Two", "beta"), sec("Three", "alpha"), sec("Alpha", "alpha alpha")]
    hits = search(sections, "alpha", 10)
    assert [h.section.heading for h in hits] == ["Alpha", "One", "Three"]  # equal scores keep corpus order
    assert [h.score for h in hits] == [40 + 12 + 10 + 4 + 15, 12 + 2 + 15, 12 + 2 + 15]
    assert search(sections, "alpha", 0) == []
    assert search(sections, "alpha", -1) == []
    assert search(sections, "the and of", 10) == []  # only stop words: nothing, not everything
    assert search(sections, "gamma", 10) == []
    assert len(search(sections, "alpha", 2)) == 2


# --- parsing -----------------------------------------------------------------------------


def test_markdown_sections():
    md = (
        "---\ntitle: Front\n---\n"
        "Preamble words.\n\n"
        "# User Guide\n\nIntro.\n\n"
        "## Install & Setup!\nRun it.\n\n"
        "```sh\n# not a heading\n```\n\n"
        "Setext Two\n----------\nUnder setext.\n\n"
        "## Install & Setup!\nAgain.\n"
        "    # indented code, not a heading\n"
    )
    sections = sections_from_markdown("docs/guide.md", md.replace("\n", "\r\n"))
    assert [s.heading for s in sections] == ["Front", "User Guide", "Install & Setup!", "Setext Two",
                                             "Install & Setup!"]
    assert [s.anchor for s in sections] == ["", "user-guide", "install--setup", "setext-two", "install--setup-1"]
    assert all(s.title == "Front" for s in sections)  # the front matter's title, as MkDocs shows it
    pre, guide, install, setext, again = sections
    assert pre.text == "Preamble words." and "title" not in pre.text
    assert guide.start_line == 6 and guide.text == "Intro."
    assert "# not a heading" in install.text and install.start_line == 10
    assert setext.text == "Under setext." and setext.start_line == 17
    assert again.text.startswith("Again.")
    assert "\r" not in install.text


def test_markdown_title_defaults_to_stem_and_closing_hashes():
    sections = sections_from_markdown("notes/Release-Notes.md", "## Fixed ##\nbugs\n### Deep\nmore\n")
    assert [s.heading for s in sections] == ["Fixed", "Deep"]
    assert sections[0].title == "Release-Notes"
    assert sections_from_markdown("e.md", "") == []


def test_rst_sections():
    rst = "=======\nManual\n=======\n\nIntro.\n\nSection A\n---------\ntext a\n\nSub A\n~~~~~\ntext sub\n\nNot a title\n--\n"
    sections = sections_from_rst("doc/manual.rst", rst)
    assert [s.heading for s in sections] == ["Manual", "Section A", "Sub A"]
    assert [s.title for s in sections] == ["Manual"] * 3
    assert sections[1].anchor == "section-a" and sections[1].text == "text a"
    assert sections[2].text.startswith("text sub")  # a too-short underline is not a title


def test_snippet():
    s = sec("H", "x" * 500 + " the parse config step " + "y" * 500)
    text = snippet(s, "parse config")
    assert "parse config" in text and len(text) <= 242 and text.startswith("…") and text.endswith("…")
    assert snippet(sec("H", "short text"), "nothing") == "short text"


# --- the index agrees with the plain function --------------------------------------------

_words = st.sampled_from(["alpha", "beta", "gamma.delta", "alp", "ha", "x_y", "Beta", "the", "a", "ALPHA"])
_text = st.lists(st.one_of(_words, st.sampled_from([" ", ", ", ". ", "\n", "-", "alphabet"])), max_size=20).map("".join)


@settings(max_examples=200, deadline=None)
@given(sections=st.lists(st.tuples(_text, _text), max_size=12),
       query=st.lists(st.one_of(_words, st.sampled_from([" ", "?", "."])), min_size=1, max_size=5).map("".join),
       limit=st.integers(0, 8))
def test_index_agrees_with_plain_search(sections, query, limit):
    corpus = [sec(h, t, f"f{i}.md") for i, (h, t) in enumerate(sections)]
    want = [(h.section, h.score) for h in search(corpus, query, limit)]
    got = [(h.section, h.score) for h in DocsIndex(corpus).search(query, limit)]
    assert got == want


# --- the project's docs and the surfaces ----------------------------------------------------


@pytest.fixture
def docs_repo(tmp_path):
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\n\n## Installation\nRun pip install demo to install it.\n")
    (root / "docs/usage.rst").write_text("Usage\n=====\n\nConfigure the parser\n--------------------\n"
                                         "Call parse_config with a path.\n")
    (root / "docs/notes.txt").write_text("# Notes\nThe parser reads config files.\n")
    (root / "notes.txt").write_text("not documentation (outside docs/)\n")
    (root / "node_modules").mkdir()
    (root / "node_modules/x.md").write_text("# Vendored\nparse config\n")
    return root


def test_docs_index_for_project(docs_repo):
    index = DocsIndex.for_project(docs_repo)
    paths = {s.path for s in index.sections}
    assert paths == {"README.md", "docs/usage.rst", "docs/notes.txt"}
    hits = index.search("parse config", 5)
    assert hits[0].section.heading == "Configure the parser" and hits[0].section.path == "docs/usage.rst"
    store = docs_repo / ".codelex" / "docs.clx"
    assert store.is_file() and (docs_repo / ".codelex" / ".gitignore").read_text().strip().endswith("*")
    if os.name == "posix":
        assert stat.S_IMODE(store.stat().st_mode) & 0o077 == 0  # the owner's only
    assert DocsIndex.for_project(docs_repo, previous=index) is index  # nothing changed: the same object
    (docs_repo / "docs/notes.txt").write_text("# Notes\nNothing here any more.\n")
    again = DocsIndex.for_project(docs_repo, previous=index)
    assert again is not index
    assert [h.section.path for h in again.search("parser", 5)] == ["docs/usage.rst"]
    stored = DocsIndex(tables=load_docs(docs_repo / ".codelex"))
    notes = [s for s in stored.sections if s.path == "docs/notes.txt"]
    assert notes[0].text == "Nothing here any more."
    assert stored.sections == again.sections


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "codelex", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def test_cli_docs(docs_repo):
    r = _cli("docs", "install demo", "--root", docs_repo, "--color", "never")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("  1. README.md#installation — Demo › Installation")
    assert "pip install demo" in r.stdout.splitlines()[1]
    j = json.loads(_cli("docs", "parse config", "--root", docs_repo, "--json").stdout)
    assert j["results"][0]["path"] == "docs/usage.rst" and j["results"][0]["anchor"] == "configure-the-parser"
    assert set(j["results"][0]) >= {"path", "anchor", "title", "heading", "startLine", "endLine", "score", "snippet"}
    none = _cli("docs", "kubernetes", "--root", docs_repo)
    assert none.returncode == 1 and "try other words" in none.stderr and "codelex search" in none.stderr
    stop = _cli("docs", "the of", "--root", docs_repo)
    assert stop.returncode == 2 and "no searchable words" in stop.stderr


def test_a_damaged_docs_store_is_never_believed(docs_repo):
    """A flipped letter, a cut, garbage or a foreign header: the docs are parsed again, the answer unchanged."""
    from codelex.docs import DocsIndex

    clean = [(h.section.path, h.section.heading, h.score) for h in DocsIndex.for_project(docs_repo).search("parse")]
    store = docs_repo / ".codelex" / "docs.clx"
    raw = store.read_bytes()
    flips = [raw.replace(b"arse", b"arsf", 1)] + [raw[:k] + bytes([raw[k] ^ 0x41]) + raw[k + 1:]
                                                   for k in range(0, len(raw), max(1, len(raw) // 40))]
    for damaged in (*flips, raw[: len(raw) // 2], b"", b"{}", b"CODELEX\x00" + b"\xff" * 64):
        store.write_bytes(damaged)
        os.chmod(store, 0o600)
        got = [(h.section.path, h.section.heading, h.score) for h in DocsIndex.for_project(docs_repo).search("parse")]
        assert got == clean
        assert load_docs(docs_repo / ".codelex") is not None  # (rewritten whole)
