"""The served command's client side: no module heavier than the C parts of socket and json, the same bytes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex import server

_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
_values = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | _text,
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                       max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_dumps_is_json_dumps_and_loads_reads_it_back(value):
    text = server._dumps(value)
    assert text == json.dumps(value)
    assert text.isascii()
    assert server._loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize("data", [b"", b"{", b'{"a": 1} x', b'{"a": 1}{}', b"nul", b'"\\x"', b"[1,]", b"\xff"])
def test_loads_refuses_what_json_refuses(data):
    with pytest.raises(ValueError):
        json.loads(data)
    with pytest.raises(ValueError):
        server._loads(data)


def test_loads_reads_what_the_server_writes():
    answer = {"version": "1", "op": "done", "status": 0, "stdout": "a\u00e9\udcff\n\t\"x\"", "stderr": "",
              "n": 1.5, "deep": [[[{"k": None}]]]}
    line = json.dumps(answer).encode("utf-8", "surrogateescape")
    assert server._loads(line) == answer
    assert server._loads(b"  " + line + b"\r\n") == answer
    with pytest.raises(ValueError):
        server._loads(b"[" * 100_000)  # too deep: refused, never a crash


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX") or os.name != "posix", reason="Unix sockets")
def test_the_client_side_imports_nothing_heavy(tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    code = ("import sys\n"
            "from codelex._launch import main\n"
            "from codelex import server\n"
            "assert server.run_remote(['search', 'x']) is None\n"  # no server there: in-process, then
            "print(sorted(m for m in ('json', 'socket', 'numpy', 'codelex.cli', 'codelex.project')"
            " if m in sys.modules))\n")
    env = {k: v for k, v in os.environ.items() if k != "CODELEX_NO_SERVER"}
    env["XDG_RUNTIME_DIR"] = str(runtime)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
