"""The examples in the public docstrings run and are true."""

import doctest

import pytest

import codelex
import codelex.index
import codelex.project
import codelex.store
import codelex.tokenize

MODULES = [codelex, codelex.tokenize, codelex.index, codelex.store, codelex.project]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
