"""The examples in the public docstrings run and are true."""

import doctest
import importlib

import pytest

MODULES = [
    "codelex",
    "codelex.text.tokenize",
    "codelex.lexical.index",
    "codelex.query.options",
    "codelex.persist.scheduler",
    "codelex.project.project",
    "codelex.render",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
