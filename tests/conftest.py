"""Shared test helpers: tiny deterministic embedders (a model2vec StaticModel from a small matrix)."""

import os

import numpy as np
import pytest

# The test oracles (codelex._reference) are not in the wheel: against an installed wheel, the tests
# take that one package from the source tree beside this directory (a checkout or an unpacked sdist).
# Nothing else is: a module missing from the wheel stays missing, and its tests fail.
try:
    import codelex._reference  # noqa: F401
except ImportError:
    import importlib.util
    import sys

    import codelex

    _ORACLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "codelex",
                            "_reference")
    if os.path.isfile(os.path.join(_ORACLES, "__init__.py")):
        _spec = importlib.util.spec_from_file_location("codelex._reference", os.path.join(_ORACLES, "__init__.py"),
                                                       submodule_search_locations=[_ORACLES])
        _module = importlib.util.module_from_spec(_spec)
        sys.modules["codelex._reference"] = _module
        _spec.loader.exec_module(_module)
        codelex._reference = _module

# Command lines run by the tests work in-process: no background server is started or reached (the
# server's own tests start one explicitly, with a private socket directory).
os.environ["CODELEX_NO_SERVER"] = "1"

WORDS = ["py", "route", "routes", "handler", "register", "parse", "config", "user", "password", "check",
         "dispatch", "add", "path", "file", "read", "write", "def", "class", "return", "self"]


def static_model(dim: int = 16, seed: int = 0, words=WORDS):
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.normalizers import Lowercase
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[UNK]": 0, "[PAD]": 1, **{w: i + 2 for i, w in enumerate(words)}}
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = Lowercase()
    tok.pre_tokenizer = Whitespace()
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((len(vocab), dim)).astype(np.float32)
    # Routing words share one direction: a query about registering routes lands on the code that adds
    # handlers for paths, though it shares no word with it.
    topic = rng.standard_normal(dim).astype(np.float32) * 3
    for w in ("route", "routes", "register", "handler", "path", "add", "dispatch"):
        vectors[vocab[w]] = topic + 0.3 * vectors[vocab[w]]
    return StaticModel(vectors=vectors, tokenizer=tok, normalize=True)


class CountingEmbedder:
    """Wraps an embedder and counts the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.texts = 0
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture
def make_static_model():
    """``make_static_model(dim=16, seed=0)``: a tiny model2vec StaticModel (no download, no torch)."""
    pytest.importorskip("model2vec")
    return static_model


@pytest.fixture
def counting_embedder():
    """``counting_embedder(inner)``: wraps an embedder and counts the texts it embeds."""
    return CountingEmbedder


def _write_two_equal_files(root):
    (root / "lib").mkdir(parents=True)
    # (equal scores, yet no near-copies of each other: their second lines differ)
    (root / "lib/alpha.py").write_text("def parse_config(): pass\n# first variant here\n")
    (root / "lib/beta.py").write_text("def parse_config(): pass\n# second variant here\n")
    for i in range(3):
        (root / f"app{i}").mkdir()
        (root / f"app{i}/main.py").write_text("from lib import beta\n")


@pytest.fixture
def two_equal_files():
    """Writes, under a root, two files defining the same function, one of them imported by three others (the
    import graph's prior is all that tells them apart)."""
    return _write_two_equal_files
