"""Path globs: the same answers as the backtracking translation they replace, in linear time."""

from __future__ import annotations

import random
import re
import time
import warnings

import pytest

from codelex.errors import QueryError
from codelex.query import SearchOptions, globs, paths_predicate
from codelex.query.globs import Glob, _Automaton, _expand, _normalise, _parse


def _old_regex(pattern: str) -> re.Pattern:
    """The translation globs.py used before (review finding 10): exponential backtracking on ``**a**a**b``."""
    i, n, out = 0, len(pattern), []
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                if j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    j += 1
                else:
                    out.append(".*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1: i + 2] in ("!", "^") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1: j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        return re.compile(re.escape(pattern))
    return re.compile("".join(out))


PIECES = ["a", "b", "/", ".", "*", "**", "**/", "?", "[ab]", "[!a]", "[a-b]", "[/]", "{a,b/}", "{,*}", "{a,{b,*}}",
          "{**/,x}", "x", "[.-b]"]


def _random_pattern(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))


def _random_path(rng: random.Random) -> str:
    return "".join(rng.choice("ab/.x") for _ in range(rng.randint(0, 9)))


def _automata_only(pattern: str):
    alternatives = [_normalise(a) for a in _expand(pattern, _parse(pattern))]
    return [_Automaton(a, re.DOTALL) for a in alternatives]


def test_globs_answer_as_the_backtracking_translation_did():
    rng = random.Random(7)
    checked = 0
    for _ in range(1500):
        pattern = _random_pattern(rng)
        old = _old_regex(pattern)
        glob = Glob(pattern)
        automata = _automata_only(pattern)
        for _ in range(40):
            path = _random_path(rng)
            want = old.fullmatch(path) is not None
            assert bool(glob.fullmatch(path)) == want, (pattern, path, want)
            assert any(a.fullmatch(path) for a in automata) == want, (pattern, path, want)
            checked += 1
    assert checked == 60_000


@pytest.mark.parametrize("pattern,yes,no", [
    ("**/*.py", ["a.py", "src/a.py", "a/b/c.py"], ["a.pyc", "src/a.py/x"]),
    ("src/**", ["src/a", "src/a/b"], ["srcx/a", "lib/src/a"]),
    ("src/*.ts", ["src/a.ts"], ["src/x/a.ts"]),
    ("**/foo/*.py", ["foo/a.py", "x/foo/foo/a.py"], ["foo/x/a.py"]),
    ("**a**/b", ["xa/ab", "a/b", "ab"], ["b", "x/b"]),
    ("{src,lib}/**/*.{js,ts}", ["src/a.js", "lib/x/y.ts"], ["src/a.py", "app/a.js"]),
    ("[]]", ["]"], ["a"]),
    ("[!]a]", ["b"], ["]", "a"]),
    ("[[:alpha:]]/*", ["[]/x", "a]/x"], ["b/x"]),
    ("a{b", ["a{b"], ["ab"]),
])
def test_glob_examples(pattern, yes, no):
    glob = Glob(pattern)
    assert all(glob.fullmatch(p) for p in yes), pattern
    assert not any(glob.fullmatch(p) for p in no), pattern


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern", ["**a**a**a**a**a**a**b", "*a*a*a*a*a*a*a*b", "**a*a**a*a**a*b",
                                     "**/a*a*a*a*a*a*b/**", "**a**/a**/a**/b", "[!x]*[!x]*[!x]*[!x]*[!x]*b"])
def test_glob_matching_takes_linear_time(pattern):
    """Regression (review finding 10): ``**a**a**a**a**a**a**b`` against a 120-character name ran > 60 s."""
    predicate = paths_predicate([pattern])
    for name in ("a" * 120, "a/" * 60, "a" * 4000, ("a" * 50 + "/") * 80):
        started = time.perf_counter()
        assert not predicate(name)
        assert time.perf_counter() - started < 0.5, (pattern, len(name))


def test_bad_globs_are_query_errors_not_tracebacks_nor_warnings():
    """Regression (review finding 10): ``[z-a]`` raised re.error (a 64-line traceback), ``[[:alpha:]]/*`` printed
    a FutureWarning."""
    for pattern in ("[z-a]", "x" * 5000, "{a,b}" * 9, "{" * 40 + "}" * 40):
        with pytest.raises(QueryError, match="glob"):
            SearchOptions(paths=[pattern])
    with pytest.raises(QueryError, match="too many"):
        SearchOptions(paths=[f"p{i}" for i in range(65)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        globs.glob_regex.cache_clear()
        assert SearchOptions(paths=["[[:alpha:]]/*"]).paths_predicate("a]/x")
