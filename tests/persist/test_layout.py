"""Where index directories live: the per-user cache directory is platformdirs' answer, with or without it."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from codelex.persist import layout


@pytest.mark.parametrize("env", [{"HOME": "/home/someone"}, {"HOME": "/home/someone/"},
                                 {"HOME": "/home/someone", "XDG_CACHE_HOME": "/var/cache/x"},
                                 {"HOME": "/home/someone", "XDG_CACHE_HOME": ""},
                                 {"HOME": "relative/home"}, {}])
def test_user_cache_dir_is_platformdirs(monkeypatch, env):
    # The Linux fast path (no platformdirs import) answers only the plain case; every case agrees.
    for name in ("HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if "HOME" not in env and sys.platform != "win32":
        monkeypatch.setenv("HOME", str(Path.home()))  # (platformdirs needs one)
    want = Path(platformdirs.user_cache_dir("codelex", appauthor=False)) / "projects"
    assert layout.user_cache_dir() == want
