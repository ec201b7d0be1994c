"""Docs search on real layouts: Markdown as CommonMark reads it, Sphinx's anchors and labels, translations,
filters, and the docs store kept in line with the disk (the store = a fresh parse, after any edits)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codelex import QueryError
from codelex.docs import DocsIndex, search, sections_from_file, sections_from_markdown, sections_from_rst
from codelex.locales import file_languages, language_tag
from codelex.docs.sections import sphinx_id
from codelex.persist.docs import load_docs

# --- Markdown -------------------------------------------------------------------------------------------------


def test_fastapi_heading_attributes_are_the_anchor_not_part_of_it():
    md = ("# Dependencies with yield { #dependencies-with-yield }\n\nFastAPI supports dependencies.\n\n"
          "## A database dependency with `yield` { #a-database-dependency-with-yield }\n\nText.\n\n"
          "## Plain heading\n\nMore.\n\n## Braces {that are not attributes}\n")
    sections = sections_from_markdown("docs/en/docs/tutorial/dependencies.md", md)
    assert [(s.heading, s.anchor) for s in sections] == [
        ("Dependencies with yield", "dependencies-with-yield"),
        ("A database dependency with yield", "a-database-dependency-with-yield"),
        ("Plain heading", "plain-heading"),
        ("Braces {that are not attributes}", "braces-that-are-not-attributes"),
    ]
    assert sections[0].title == "Dependencies with yield"


def test_only_what_commonmark_calls_a_heading_splits_sections():
    md = ("---\ntitle: Guide\nlayout: page\n---\n"
          "Intro *emphasis* and [a link](x.md).\n\n"
          "Setext **bold** title\n=====================\n\nbody one\n\n"
          "```python\n# a comment, not a heading\n```\n\n"
          "    # indented code, not a heading\n\n"
          "<div>\n# inside an HTML block\n</div>\n\n"
          "> ## Quoted heading\n> quoted body\n\n"
          "!!! note \"Admonition\"\n    ### Inside an admonition\n    admonished\n\n"
          "- item\n\n  ## In a list item\n\n"
          "{#custom-block-id}\n## Block attributes\n\n"
          "#5 is not a heading\n#\tTabbed heading\n")
    sections = sections_from_markdown("docs/guide.md", md)
    headings = [(s.heading, s.anchor) for s in sections]
    assert headings == [
        ("Guide", ""),  # the preamble, titled by the front matter
        ("Setext bold title", "setext-bold-title"),
        ("Quoted heading", "quoted-heading"),
        ("Inside an admonition", "inside-an-admonition"),
        ("In a list item", "in-a-list-item"),
        ("Block attributes", "custom-block-id"),
        ("Tabbed heading", "tabbed-heading"),
    ]
    assert all(s.title == "Guide" for s in sections)
    preamble, setext = sections[0], sections[1]
    assert "layout" not in preamble.text and preamble.start_line == 5
    assert "# a comment, not a heading" in setext.text and "# inside an HTML block" in setext.text
    assert setext.start_line == 7 and setext.text.startswith("body one")


def test_duplicate_markdown_headings_get_github_suffixes_and_explicit_ids_stay():
    md = "## Setup\na\n## Setup\nb\n## Setup { #setup }\nc\n## Setup\nd\n"
    assert [s.anchor for s in sections_from_markdown("a.md", md)] == ["setup", "setup-1", "setup", "setup-2"]


def test_a_pathological_markdown_document_is_still_searchable():
    deep = "> " * 5000 + "# deep heading\n" + "[" * 20000 + "\n"
    sections = sections_from_markdown("deep.md", deep)
    assert sections and any("deep heading" in (s.heading + s.text) for s in sections)


# --- reStructuredText -----------------------------------------------------------------------------------------


def test_sphinx_ids():
    assert sphinx_id("How to use fixtures") == "how-to-use-fixtures"
    assert sphinx_id("The ``tmp_path`` fixture") == "the-tmp-path-fixture"
    assert sphinx_id("Über Straße") == "uber-strasze"  # (docutils folds ß to "sz")
    assert sphinx_id("2. Second step") == "second-step"  # leading digits dropped
    assert sphinx_id("日本語") == "" and sphinx_id("  --x--  ") == "x"
    assert sphinx_id("Łódź / øre") == "lodz-ore"


def test_rst_sections_carry_sphinx_anchors_and_labels():
    rst = (".. _top:\n\n========\nFixtures\n========\n\nIntro.\n\n"
           ".. _requesting-fixtures:\n.. _`Asking For Fixtures`:\n\n"
           "Requesting ``pytest.fixture`` fixtures\n--------------------------------------\n\nBody.\n\n"
           ".. _orphan-target:\n\nA paragraph after a target.\n\n"
           "Requesting ``pytest.fixture`` fixtures\n--------------------------------------\n\n"
           "日本語\n------\n\n:ref:`Links <requesting-fixtures>`\n------------------------------------\n")
    sections = sections_from_rst("doc/en/how-to/fixtures.rst", rst)
    got = [(s.heading, s.anchor, s.labels) for s in sections]
    assert got == [
        ("Fixtures", "fixtures", ("top",)),
        ("Requesting pytest.fixture fixtures", "requesting-pytest-fixture-fixtures",
         ("requesting-fixtures", "asking for fixtures")),
        ("Requesting pytest.fixture fixtures", "id1", ()),  # a duplicate title: docutils invents an id
        ("日本語", "id2", ()),
        ("Links", "links", ()),
    ]
    fixtures = sections[0]
    assert fixtures.text == "Intro." and ".. _requesting" not in fixtures.text  # the targets belong below
    assert ".. _orphan-target:" in sections[1].text  # a target above no title stays in its section


# --- translations ---------------------------------------------------------------------------------------------


def test_language_layouts():
    paths = ["README.md", "docs/en/docs/index.md", "docs/en/docs/a.md", "docs/de/docs/index.md",
             "docs/pt-BR/docs/index.md", "docs/zh_hant/docs/index.md", "src/it/notes.md", "docs/id/only.md",
             "site/page.md", "site/page.fr.md", "site/other.de.md", "CHANGELOG.md"]
    languages, main = file_languages(paths)
    assert main == "en"
    assert languages == {"docs/en/docs/index.md": "en", "docs/en/docs/a.md": "en", "docs/de/docs/index.md": "de",
                         "docs/pt-BR/docs/index.md": "pt-br", "docs/zh_hant/docs/index.md": "zh-hant",
                         "docs/id/only.md": "id", "site/page.fr.md": "fr"}
    # translations beside a larger body of untranslated docs (Linux's Documentation/): no main language
    linux = ["a.rst", "b.rst", "c.rst", "translations/zh_CN/a.rst", "translations/zh_CN/b.rst",
             "translations/it_IT/a.rst"]
    assert file_languages(linux)[1] == ""
    # a lone language-like directory is no layout; a suffix without its bare page is no translation
    assert file_languages(["src/it/x.md", "lib/id/y.md", "a.de.md"]) == ({}, "")
    assert language_tag("EN_us") == "en-us" and language_tag("js") is None and language_tag("xx") is None


@pytest.fixture
def translated(tmp_path):
    root = tmp_path / "site"
    page = "# Dependencies { #dependencies }\n\n## Dependencies with yield { #dependencies-with-yield }\n\n" \
           "Use dependencies with yield to run cleanup code after the response.\n"
    for lang in ("en", "de", "ko", "hi"):
        (root / "docs" / lang / "docs").mkdir(parents=True)
        (root / "docs" / lang / "docs" / "dependencies.md").write_text(page)
    (root / "docs/en/docs/extra.md").write_text("# Extra\n\nMore about dependencies.\n")
    (root / "README.md").write_text("# Project\n\nDependencies are injected.\n")
    return root


def test_translations_do_not_fill_the_answer(translated):
    index = DocsIndex.for_project(translated)
    assert index.main_language == "en"
    assert index.languages == {"en": 3, "de": 2, "hi": 2, "ko": 2, "": 1}
    paths = [h.section.path for h in index.search("dependencies with yield", 10)]
    assert paths and all(p.startswith("docs/en/") or p == "README.md" for p in paths)
    assert paths[0] == "docs/en/docs/dependencies.md"
    assert index.search("dependencies with yield", 1)[0].section.anchor == "dependencies-with-yield"
    german = [h.section.path for h in index.search("dependencies with yield", 10, language="de")]
    assert set(german) == {"docs/de/docs/dependencies.md", "README.md"}
    every = {h.section.path.split("/")[1] for h in index.search("yield", 20, language="all")}
    assert every == {"en", "de", "ko", "hi"}
    with pytest.raises(QueryError, match="unknown documentation language 'fr'.*de, en, hi, ko"):
        index.search("yield", language="fr")
    only = [h.section.path for h in index.search("dependencies", 10, paths="docs/en/docs/extra.md")]
    assert only == ["docs/en/docs/extra.md"]
    assert [h.section.path for h in index.search("dependencies", 10, paths=["docs/**/dependencies.md"],
                                                 language="ko")] == ["docs/ko/docs/dependencies.md"] * 2


def test_a_project_without_translations_takes_any_language(tmp_path):
    (tmp_path / "README.md").write_text("# Demo\n\nInstall it.\n")
    index = DocsIndex.for_project(tmp_path)
    assert index.main_language == ""
    assert [h.section.path for h in index.search("install", language="en")] == ["README.md"]


# --- the index, filtered, = the plain search over what the filters keep ----------------------------------------

_paths = st.sampled_from(["README.md", "docs/en/a.md", "docs/de/a.md", "docs/en/b.rst", "docs/fr/b.rst",
                          "guide/x.md", "guide/x.de.md", "notes/ünï.md"])
_words = st.sampled_from(["alpha", "beta", "gamma.delta", "Über", "straße", "ǅ", "x_y", "the", "İstanbul", "ß"])
_texts = st.lists(st.one_of(_words, st.sampled_from([" ", ", ", ". ", "\n", "-"])), max_size=14).map("".join)


@settings(max_examples=150, deadline=None)
@given(files=st.dictionaries(_paths, st.lists(st.tuples(_texts, _texts), min_size=1, max_size=4), max_size=6),
       query=st.lists(st.one_of(_words, st.just(" ")), min_size=1, max_size=4).map("".join),
       glob=st.sampled_from([None, "docs/**", "guide/*.md", "README.md"]),
       language=st.sampled_from([None, "all", "de"]), limit=st.integers(0, 6))
def test_filtered_index_agrees_with_plain_search(files, query, glob, language, limit):
    from codelex.docs.sections import Section
    from codelex.query.globs import paths_predicate

    corpus = [Section(path, "T", h, f"h{k}", k + 1, k + 1, t) for path in sorted(files)
              for k, (h, t) in enumerate(files[path])]
    index = DocsIndex(corpus)
    languages, main = file_languages(sorted(files))
    if language == "de" and languages and "de" not in languages.values():
        with pytest.raises(QueryError):
            index.search(query, limit, paths=glob, language=language)
        return
    tag = None if language == "all" else (language or main or None)
    keep = paths_predicate(glob)
    kept = [s for s in corpus if (tag is None or languages.get(s.path, "") in ("", tag))
            and (keep is None or keep(s.path))]
    want = [(h.section, h.score) for h in search(kept, query, limit)]
    got = [(h.section, h.score) for h in index.search(query, limit, paths=glob, language=language)]
    assert got == want


# --- the store follows the disk: after any edits it answers as a fresh parse ------------------------------------

_doc_names = st.sampled_from(["README.md", "docs/a.md", "docs/b.rst", "docs/en/c.md", "docs/de/c.md",
                              "docs/notes.txt", "guide/ü.md"])
_bodies = st.sampled_from([
    "# Alpha\n\nalpha beta\n\n## Beta { #b }\n\nbeta gamma\n",
    "Title\n=====\n\n.. _lab:\n\nSub\n---\n\nalpha sub text\n",
    "no heading at all, alpha\n",
    "# Gamma\n\n```\n# fenced\n```\ngamma alpha\n",
    "",
])
_ops = st.lists(st.tuples(st.sampled_from(["write", "remove"]), _doc_names, _bodies), min_size=1, max_size=8)


def _fresh(root: Path) -> list:
    from codelex.ingest import list_files
    from codelex.docs.sections import is_doc_path

    out = []
    for f in list_files(root, accept=is_doc_path).files:
        out.extend(sections_from_file(f.path, (root / f.path).read_bytes().decode("utf-8", "replace")))
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_ops)
def test_the_store_after_edits_equals_a_fresh_parse(ops):
    work = Path(tempfile.mkdtemp(prefix="codelex-docs-"))
    try:
        root = work / "repo"
        root.mkdir()
        previous = None
        for k, (op, name, body) in enumerate(ops):
            path = root / name
            if op == "write":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(body + f"\nrevision {k}\n")  # (the size changes whatever the mtime's resolution)
            elif path.exists():
                path.unlink()
            index = DocsIndex.for_project(root, previous=previous if k % 2 else None)
            fresh = _fresh(root)
            assert index.sections == fresh
            stored = load_docs(root / ".codelex")
            assert stored is not None and DocsIndex(tables=stored).sections == fresh
            for q in ("alpha", "beta gamma", "sub text", "revision"):
                want = [(h.section, h.score) for h in DocsIndex(fresh).search(q, 10, language="all")]
                assert [(h.section, h.score) for h in index.search(q, 10, language="all")] == want
            previous = index
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_store_is_owner_only_and_reused_unchanged(tmp_path):
    (tmp_path / "README.md").write_text("# Demo\n\nInstall it.\n")
    DocsIndex.for_project(tmp_path)
    store = tmp_path / ".codelex" / "docs.clx"
    before = store.stat()
    if os.name == "posix":
        assert before.st_mode & 0o077 == 0
    DocsIndex.for_project(tmp_path)
    assert store.stat().st_mtime_ns == before.st_mtime_ns  # an unchanged tree maps the store, never rewrites it


def test_hostile_headings_and_titles_cost_linear_time():
    import time

    started = time.perf_counter()
    sections = sections_from_markdown("x.md", "# " + "[" * 400_000 + "\n\nbody\n")
    assert sections[0].heading == "[" * 400_000 and sections[0].text == "body"  # taken as written
    # trailing spaces before a last word: the attribute list was looked for with a backtracking regex (139 s)
    assert sections_from_markdown("x.md", "# a" + " " * 500_000 + "b\n")[0].heading == "a b"
    # a reST title of escaped backquotes: the reference pattern was tried from each of them (189 s)
    title = "`" + "\\`" * 130_000
    assert sections_from_rst("x.rst", title + "\n" + "=" * len(title) + "\n")[0].heading.startswith("`")
    assert time.perf_counter() - started < 5.0


def test_a_byte_order_mark_does_not_hide_front_matter():
    sections = sections_from_markdown("x.md", "\ufeff---\ntitle: Front\n---\n# H {: #hid .c }\nx\n")
    assert [(s.title, s.heading, s.anchor) for s in sections] == [("Front", "H", "hid")]
    assert sections_from_rst("x.rst", "\ufeffTitle\n=====\n")[0].anchor == "title"


def test_a_query_of_too_many_words_is_a_named_error():
    index = DocsIndex(sections_from_markdown("a.md", "# A\n\nw1 w2\n"))
    with pytest.raises(QueryError, match="at most 64"):
        index.search(" ".join(f"w{i}" for i in range(65)))
    assert index.search(" ".join(f"w{i}" for i in range(64)))


def test_docs_follow_the_projects_ignore_rules_and_size_cap(tmp_path):
    import subprocess
    import sys

    (tmp_path / "kept.md").write_text("# Kept\n\nwidget\n")
    (tmp_path / "secret.md").write_text("# Secret\n\nwidget\n")
    (tmp_path / "big.md").write_text("# Big\n\nwidget\n" + "x" * 3000 + "\n")
    (tmp_path / ".codelexignore").write_text("secret.md\n")
    (tmp_path / ".codelex.toml").write_text("max_bytes = 2000\n")

    def docs(*extra):
        r = subprocess.run([sys.executable, "-m", "codelex", "docs", "widget", "--json", "--root", str(tmp_path),
                            *extra], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, CODELEX_NO_SERVER="1"))
        assert r.returncode in (0, 1), r.stderr
        import json

        return sorted(h["path"] for h in json.loads(r.stdout)["results"])

    assert docs() == ["kept.md"]
    assert docs("--max-bytes", "100000") == ["big.md", "kept.md"]


def test_a_miss_says_what_the_language_default_left_out(translated):
    import subprocess
    import sys

    (translated / "docs/de/docs/anleitung.md").write_text("# Anleitung\n\nSchritt für Schritt.\n")
    r = subprocess.run([sys.executable, "-m", "codelex", "docs", "Anleitung", "--root", str(translated)],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, CODELEX_NO_SERVER="1"))
    assert r.returncode == 1 and "left out: --language TAG or --language all" in r.stderr and "sections in de" in r.stderr


def test_concurrent_cold_callers_parse_the_tree_once(tmp_path, monkeypatch):
    import threading

    from codelex.docs import index as docs_index
    from codelex.project.pool import ProjectPool

    (tmp_path / "a.md").write_text("# A\n\nalpha\n")
    parsed = []
    real = docs_index.sections_from_file
    monkeypatch.setattr(docs_index, "sections_from_file",
                        lambda path, text: (parsed.append(path), __import__("time").sleep(0.2), real(path, text))[2])
    pool = ProjectPool()
    got = []
    threads = [threading.Thread(target=lambda: got.append(pool.docs(tmp_path.resolve()))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(got) == 4 and len({id(g) for g in got}) == 1 and parsed == ["a.md"]
