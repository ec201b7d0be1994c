"""Fixtures of the project tests: a small project of three Python files (a router, a password check, a parser)."""

import pytest

FILES = {
    "web/router.py": "class Router:\n    def add(self, path, handler):\n        self.table[path] = handler\n\n"
                     "    def dispatch(self, path):\n        return self.table[path]()\n",
    "auth.py": "def check(user, password):\n    return user.password == password\n",
    "conf.py": "def parse(file):\n    return read(file)\n",
}


@pytest.fixture
def project_root(tmp_path):
    for rel, text in FILES.items():
        p = tmp_path / "proj" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path / "proj"


@pytest.fixture
def project_files():
    """The paths and texts of :func:`project_root`'s files."""
    return dict(FILES)
