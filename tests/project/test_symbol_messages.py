"""What `show`/read_symbol says when a file shows no definitions (issue 41): none, or none readable, and why."""

from __future__ import annotations

import pytest

from codelex.errors import SymbolNotFoundError
from codelex.project.symbols import find_definition
from codelex.structure import FileStructure


@pytest.mark.parametrize("status, said", [
    ("unavailable", "pip install 'codelex[structure]'"),
    ("timeout", "could not be read (timeout)"),
    ("parsed", "the file has no definitions"),
])
def test_a_file_without_definitions_says_why(status, said):
    with pytest.raises(SymbolNotFoundError, match=said.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        find_definition(FileStructure("src/a.py", "python", status, 3), "load_user")
