import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _oracles  # noqa: E402,F401  (codelex._reference from the source tree if the wheel lacks it)
from corpus import stdlib_corpus  # noqa: E402


@pytest.fixture(scope="session")
def stdlib_docs():
    """The stdlib corpus, read into memory once per session."""
    return stdlib_corpus()


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs the pure-Python reference (minutes on the full corpus)")
