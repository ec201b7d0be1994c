"""The typed request (issue 40): a query is parsed once, at the surface; every layer below derives from it."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codelex.query.parse as parse_module
from codelex import Project, QueryError, WordIndex
from codelex.query import Request, SearchOptions, parse_request

DOCS = [("src/parse_config.py", "def parse_config(path):\n    return load(path)\n"),
        ("src/load.py", "def load(path):\n    return open(path).read()  # parse later\n"),
        ("tests/test_config.py", "from src.parse_config import parse_config\n\ndef test_parse(): parse_config('x')\n"),
        ("docs/config.md", "# Config\nHow to parse the config file and load it.\n")]

PIECES = ["parse", "config", "load", "path", "lang:py", "-file:test", "file:src/", "ext:md", "lang:markdown",
          "-lang:python", "std::vector", "TODO:fix"]


@pytest.fixture(scope="module")
def index():
    return WordIndex.build(DOCS)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5), st.integers(0, 5),
       st.sampled_from(["code", "classic"]))
def test_a_request_ranks_as_its_text_does(index, pieces, limit, ranking):
    text = " ".join(pieces)
    request = parse_request(text, limit=limit, ranking=ranking)
    assert index.search(request) == index.search(text, limit=limit, ranking=ranking)
    assert index.query_stats(request) == index.query_stats(text, ranking=ranking)


def test_a_derived_request_keeps_the_filters_and_echoes_the_text():
    request = parse_request("lang:py -file:test parse config", limit=3)
    sub = request.derive("load", limit=50)
    assert (sub.text, sub.terms, sub.filters, sub.options.limit) == (request.text, "load", request.filters, 50)
    assert request.derive() is request and request.derive("parse config") is request
    assert request.with_options(request.options) is request
    assert pickle.loads(pickle.dumps(sub)) == sub  # (crosses processes to a cluster's shards)


def test_a_request_is_checked_once_where_it_is_made():
    with pytest.raises(QueryError):
        parse_request("lang:klingon parse")
    with pytest.raises(TypeError):
        parse_request(b"parse")
    with pytest.raises(TypeError):  # a request carries its options
        parse_request(parse_request("parse"), SearchOptions(limit=2))
    assert parse_request(parse_request("parse"), None, {"limit": 2}).options.limit == 2
    with pytest.raises(TypeError):
        Request("x", parse_request("x").parsed, SearchOptions()).with_options({"limit": 1})


def test_a_project_search_parses_the_query_once(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    for path, text in DOCS:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    calls = []
    real = parse_module._parse_cached  # (every parse_query, wherever it is called from, goes through it)
    monkeypatch.setattr(parse_module, "_parse_cached", lambda text: calls.append(text) or real(text))
    with Project(root) as project:
        project.open()
        for query in ("parse config", "lang:py -file:test parse config", "where is the config parsed"):
            calls.clear()
            result = project.search(query, limit=5)
            assert result.available and result.results
            assert calls == [query], calls  # once, at the top; the pipeline's sub-requests are derived
        calls.clear()
        assert project.search(parse_request("parse config", limit=5)).results == \
            project.search("parse config", limit=5).results
