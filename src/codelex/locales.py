"""Which human language a documentation file is written in, when a project keeps translations.

Projects lay translations out in two ways, both recognised:

- a directory per language: ``docs/en/…``, ``docs/de/…``, ``docs/pt-BR/…``
  (fastapi, MkDocs sites, Docusaurus' ``i18n/<lang>/``);
- a suffix per language: ``index.md`` beside ``index.de.md`` and ``index.fr.md``
  (mkdocs-static-i18n).

A directory name counts as a language only where it is one of several: at
least two sibling directories, under the same parent, are language tags (an
ISO 639-1 code, optionally with a region or script: ``pt-br``, ``zh-hant``,
``zh_CN``).  A lone ``docs/id/`` or ``src/it/`` is then never mistaken for
Indonesian or Italian.  A suffix counts where the same name also exists
without it or with another language's suffix.  Files in no language layout
are *neutral* (``""``): a root README, a changelog.

The *main* language is English where the layout has it, else the layout's
largest language unless neutral documents are more (see
:func:`file_languages`); a search keeps it and the neutral documents by
default, so translations of the same page do not fill the answer.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from codelex.languages import is_prose

__all__ = ["ALL_LANGUAGES", "Translations", "file_languages", "language_tag"]

#: The ``language`` argument that selects every language.
ALL_LANGUAGES = "all"

# ISO 639-1 (the two-letter codes).
_ISO_639_1 = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el
en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu
ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na
nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so
sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
""".split())
_TAG = re.compile(r"^([a-z]{2})(?:[-_]([a-z]{2}|[a-z]{4}))?$", re.IGNORECASE)
_SUFFIXED = re.compile(r"^(.+)\.([A-Za-z]{2}(?:[-_](?:[A-Za-z]{2}|[A-Za-z]{4}))?)(\.[^.]+)$")


def language_tag(name: str) -> str | None:
    """``name`` as a normalised language tag (``pt_BR`` → ``pt-br``), or None when it is not one."""
    m = _TAG.match(name)
    if not m or m.group(1).lower() not in _ISO_639_1:
        return None
    return name.lower().replace("_", "-")


def file_languages(paths: Iterable[str]) -> tuple[dict[str, str], str]:
    """``({path: language tag}, main language)`` for a project's documentation files.

    The mapping holds the paths written in a language of a translation layout (see the module docstring);
    paths left out are neutral.  The main language is English when the directory layout has it, else the
    layout's language with the most documents, or ``""`` when neutral documents are more (no directory
    layout, or translations beside a body of untranslated docs).  Suffixed translations count for neither:
    in a suffix layout the bare files are the site's default language, and they are neutral here.
    """
    paths = list(paths)
    # A directory level is a language level where two or more siblings are language tags.
    tags_under: dict[str, set[str]] = defaultdict(set)
    # A suffix is a language where the same stem appears bare or with another tag.
    stems: dict[tuple[str, str], set[str]] = defaultdict(set)
    parsed = []
    for path in paths:
        parts = path.split("/")
        directories = []
        for depth, part in enumerate(parts[:-1]):
            tag = language_tag(part)
            if tag is not None:
                parent = "/".join(parts[:depth])
                tags_under[parent].add(tag)
                directories.append((parent, tag))
        folder = "/".join(parts[:-1])
        m = _SUFFIXED.match(parts[-1])
        suffix = language_tag(m.group(2)) if m else None
        stem = (folder, m.group(1) + m.group(3)) if suffix is not None else (folder, parts[-1])
        stems[stem].add(suffix or "")
        parsed.append((path, directories, stem, suffix))
    languages: dict[str, str] = {}
    by_directory: Counter[str] = Counter()
    for path, directories, stem, suffix in parsed:
        language = None
        for parent, tag in directories:
            if len(tags_under[parent]) >= 2:
                language = tag  # the deepest language level wins
        by_directory[language or ""] += 1 if suffix is None or language else 0
        if suffix is not None and len(stems[stem]) >= 2:
            language = suffix
        if language is not None:
            languages[path] = language
    # English, when the layout has it, is the main language (the one the untranslated docs are usually in);
    # otherwise the layout's largest language, unless neutral documents are more (Linux's Documentation/,
    # whose translations/ hold a fraction of it): then the neutral ones alone.
    english = [tag for tag in by_directory if tag.startswith("en")]
    if english:
        main = min(english, key=lambda tag: (-by_directory[tag], tag))
    else:
        main = min(by_directory, key=lambda tag: (-by_directory[tag], tag != "", tag)) if by_directory else ""
    return languages, main


#: Fewer documents than this in other languages than the main one are taken for no translation at all.
MIN_TRANSLATED = 3


class Translations:
    """Which prose documents of a project are translations into another language than its main one.

    A project's search ranks them below the rest (``translations`` stage of
    :mod:`codelex.rank.pipeline`), so that the same page in ten languages
    does not fill an answer; only prose documents (the registry's prose
    kinds) are ever taken for translations, as :func:`file_languages` reads
    them (a code directory named ``ts/`` beside ``ml/`` is no language).
    The layout is read from the project's files the first time a document
    whose path could be a translation is asked about (a tree whose answers
    hold none never lists its files for it).

    Parameters
    ----------
    paths : iterable of str, or a callable returning one
        The project's files (those that are not prose are left out).
    """

    def __init__(self, paths) -> None:
        self._paths = paths
        self._layout: tuple[str, frozenset[str]] | None = None

    def _read(self) -> tuple[str, frozenset[str]]:
        if self._layout is None:
            paths = self._paths() if callable(self._paths) else self._paths
            languages, main = file_languages(p for p in paths if is_prose(p))
            others = frozenset(p for p, language in languages.items() if language != main)
            # (a couple of READMEs in code directories named like languages, ``ts/`` and ``ml/``, are no
            # translations: a translated documentation has a few pages at least)
            self._layout = (main, others if len(others) >= MIN_TRANSLATED else frozenset())
        return self._layout

    @property
    def main(self) -> str:
        """The main language (``""``: the neutral documents'; see :func:`file_languages`)."""
        return self._read()[0]

    @property
    def others(self) -> frozenset[str]:
        """The documents in another language than the main one."""
        return self._read()[1]

    def __call__(self, path: str) -> bool:
        """Whether ``path`` is a document in another language than the main one."""
        if not is_prose(path) or not _may_be_translated(path):
            return False
        return path in self._read()[1]


def _may_be_translated(path: str) -> bool:
    """Whether a path has a part that could make it a translation: a directory named as a language tag, or a
    language suffix before its extension (``docs/de/x.md``, ``x.de.md``)."""
    parts = path.split("/")
    if any(language_tag(part) is not None for part in parts[:-1]):
        return True
    m = _SUFFIXED.match(parts[-1])
    return m is not None and language_tag(m.group(2)) is not None
