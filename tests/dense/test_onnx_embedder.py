"""Issue 29: the ONNX Runtime embedder computes the model's own vectors, without torch.

A tiny BERT (random weights, a word-piece tokenizer of a few words) is written as a sentence-transformers
folder in the test; its vectors through ONNX Runtime are compared with the numpy oracle
(codelex._reference.bert), for any batch of texts.  The real model's check against sentence-transformers is
benchmarks/embed_throughput.py --compare-st.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("safetensors")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from codelex._reference.bert import bert_mean_embedding  # noqa: E402
from codelex.dense import OnnxEmbedder, embedder_loader  # noqa: E402
from codelex.dense.bert_graph import read_bert_folder  # noqa: E402
from codelex.errors import EmbedderError  # noqa: E402
from codelex.persist import trust  # noqa: E402

WORDS = ["parse", "config", "file", "read", "write", "user", "route", "handler", "def", "class", "return", "self",
         "##s", "##ing", "(", ")", ":", "."]


def tiny_bert(folder, *, seed=0, hidden=8, heads=2, layers=2, intermediate=16, positions=40, window=12,
              config_changes=None):
    """A sentence-transformers BERT folder with random weights; returns its path."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer
    from tokenizers.processors import TemplateProcessing

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, **{w: i + 4 for i, w in enumerate(WORDS)}}
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = BertNormalizer(lowercase=True)
    tok.pre_tokenizer = BertPreTokenizer()
    tok.post_processor = TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(folder / "tokenizer.json"))
    config = {"model_type": "bert", "hidden_size": hidden, "num_attention_heads": heads,
              "num_hidden_layers": layers, "intermediate_size": intermediate, "max_position_embeddings": positions,
              "layer_norm_eps": 1e-12, "hidden_act": "gelu", "vocab_size": len(vocab), "type_vocab_size": 2}
    config.update(config_changes or {})
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": window}))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    rng = np.random.default_rng(seed)

    def r(*shape, scale=0.5):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {"embeddings.word_embeddings.weight": r(len(vocab), hidden),
         "embeddings.position_embeddings.weight": r(positions, hidden),
         "embeddings.token_type_embeddings.weight": r(2, hidden),
         "embeddings.LayerNorm.weight": 1 + r(hidden, scale=0.1), "embeddings.LayerNorm.bias": r(hidden, scale=0.1)}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for k in ("query", "key", "value"):
            t[p + f"attention.self.{k}.weight"] = r(hidden, hidden)
            t[p + f"attention.self.{k}.bias"] = r(hidden, scale=0.1)
        t[p + "attention.output.dense.weight"] = r(hidden, hidden)
        t[p + "attention.output.dense.bias"] = r(hidden, scale=0.1)
        t[p + "attention.output.LayerNorm.weight"] = 1 + r(hidden, scale=0.1)
        t[p + "attention.output.LayerNorm.bias"] = r(hidden, scale=0.1)
        t[p + "intermediate.dense.weight"] = r(intermediate, hidden)
        t[p + "intermediate.dense.bias"] = r(intermediate, scale=0.1)
        t[p + "output.dense.weight"] = r(hidden, intermediate)
        t[p + "output.dense.bias"] = r(hidden, scale=0.1)
        t[p + "output.LayerNorm.weight"] = 1 + r(hidden, scale=0.1)
        t[p + "output.LayerNorm.bias"] = r(hidden, scale=0.1)
    save_file(t, str(folder / "model.safetensors"))
    return folder


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert") / "tiny")


@pytest.fixture(scope="module")
def embedder(model_dir):
    return OnnxEmbedder(model_dir, cache=False)


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A fresh per-user cache directory (and key) for this test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    trust._reset()
    yield tmp_path / "cache" / "codelex"
    monkeypatch.undo()
    trust._reset()


def oracle(model_dir, embedder, texts):
    weights = read_bert_folder(model_dir)
    out = []
    for ids in embedder._encode(texts):
        a = np.array([ids], dtype=np.int64)
        out.append(bert_mean_embedding(weights, a, np.ones_like(a))[0])
    return np.array(out)


def cosines(a, b):
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


texts_strategy = st.lists(st.lists(st.sampled_from(["parse", "configs", "reading", "user", "route", "handler",
                                                     "def", "class", "(", ")", ":", "self", "zebra", "."]),
                                   min_size=0, max_size=20).map(" ".join), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_strategy)
def test_vectors_equal_the_oracle_for_any_batch(model_dir, embedder, texts):
    got = embedder.embed(texts)
    want = oracle(model_dir, embedder, texts)
    assert got.shape == (len(texts), 8) and got.dtype == np.float32
    assert cosines(got, want).min() >= 0.9999
    np.testing.assert_allclose(got, want, atol=2e-4)


def test_padding_and_batching_do_not_change_a_vector(model_dir):
    one_thread = OnnxEmbedder(model_dir, cache=False, threads=1)
    two = OnnxEmbedder(model_dir, cache=False, threads=2)
    texts = [("parse config " * (i % 9)) + "user" for i in range(300)]  # many batches of several lengths
    alone = np.array([one_thread.embed([t])[0] for t in texts[:20]])
    np.testing.assert_allclose(one_thread.embed(texts)[:20], alone, atol=1e-5)
    np.testing.assert_allclose(two.embed(texts), one_thread.embed(texts), atol=1e-5)


def test_a_small_call_is_split_over_the_threads_and_a_background_callers_workers_yield(model_dir, monkeypatch):
    """A query's few on-demand chunks (one batch by the token budget) run on every thread, with the same
    vectors; a caller whose thread yields (the background pass) starts its workers at its niceness."""
    import sys
    import threading

    from codelex import runtime

    one_thread = OnnxEmbedder(model_dir, cache=False, threads=1)
    two = OnnxEmbedder(model_dir, cache=False, threads=2)
    texts = [f"parse config {i}" for i in range(5)]
    seen: list[str] = []
    run = two._run
    monkeypatch.setattr(two, "_run", lambda rows: (seen.append(threading.current_thread().name), run(rows))[1])
    np.testing.assert_allclose(two.embed(texts), one_thread.embed(texts), atol=1e-5)
    assert len(seen) == 2 and all(name.startswith("codelex-embed") for name in seen)
    if sys.platform.startswith("linux"):
        worker_niceness: list[int] = []
        monkeypatch.setattr(two, "_run", lambda rows: (worker_niceness.append(runtime.thread_niceness()),
                                                       run(rows))[1])

        def background() -> None:
            runtime.yield_this_thread(7)
            two.embed(texts)

        t = threading.Thread(target=background)
        t.start()
        t.join(30)
        assert worker_niceness == [7, 7] and runtime.thread_niceness() == 0  # (this thread untouched)


def test_a_long_text_is_cut_at_the_window_as_sentence_transformers_does(model_dir, embedder):
    long = "parse config " * 50
    ids = embedder._encode([long])[0]
    assert len(ids) == embedder.max_tokens == 12 and ids[0] == 2 and ids[-1] == 3
    shorter = OnnxEmbedder(model_dir, cache=False, max_tokens=6)
    assert len(shorter._encode([long])[0]) == 6 and shorter.name != embedder.name and shorter.name.endswith(":t6")


def test_batches_group_similar_lengths_under_the_token_budget(embedder):
    from codelex.dense.onnx_embedder import BATCH_ROWS, BATCH_TOKENS

    lengths = [5, 300, 7, 6, 300, 120] * 40
    groups = embedder.batches(lengths)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for g in groups:
        assert len(g) <= BATCH_ROWS and len(g) * max(lengths[i] for i in g) <= max(BATCH_TOKENS, max(lengths))
        assert max(lengths[i] for i in g) - min(lengths[i] for i in g) <= 120


def test_the_graph_is_made_once_and_kept_for_this_user_only(model_dir, own_cache, monkeypatch):
    import codelex.dense.bert_graph as bert_graph

    first = OnnxEmbedder(model_dir)
    files = list((own_cache / "models").glob("*.onnx"))
    assert len(files) == 1
    assert oct(os.lstat(files[0]).st_mode & 0o777) == oct(0o600)

    def no_build(weights):
        raise AssertionError("the cached model should have been used")

    monkeypatch.setattr(bert_graph, "build_bert_graph", no_build)
    again = OnnxEmbedder(model_dir)
    np.testing.assert_allclose(again.embed(["parse config"]), first.embed(["parse config"]), atol=1e-6)


def test_a_forged_or_linked_model_file_is_never_loaded(model_dir, own_cache, tmp_path, monkeypatch):
    import codelex.dense.bert_graph as bert_graph

    OnnxEmbedder(model_dir)
    (cached,) = (own_cache / "models").glob("*.onnx")
    built = []
    real = bert_graph.build_bert_graph
    monkeypatch.setattr(bert_graph, "build_bert_graph", lambda w: built.append(1) or real(w))
    data = bytearray(cached.read_bytes())
    data[-10] ^= 0xFF  # a changed weight with the old MAC
    cached.write_bytes(bytes(data))
    OnnxEmbedder(model_dir)
    assert built == [1]
    target = tmp_path / "elsewhere.onnx"
    target.write_bytes(cached.read_bytes())
    cached.unlink()
    cached.symlink_to(target)
    OnnxEmbedder(model_dir)
    assert built == [1, 1]
    assert target.read_bytes() == cached.read_bytes() or not cached.is_symlink()


def test_without_a_key_nothing_is_kept(model_dir, own_cache, monkeypatch):
    monkeypatch.setattr(trust, "user_key", lambda: None)
    OnnxEmbedder(model_dir).embed(["parse"])
    assert not list((own_cache / "models").glob("*.onnx"))


@pytest.mark.parametrize("change, message", [
    ({"model_type": "roberta"}, "bert only"),
    ({"hidden_act": "relu"}, "gelu"),
    ({"num_attention_heads": 3}, "multiple"),
    ({"hidden_size": "8"}, "positive integer"),
])
def test_an_unsupported_model_is_a_named_error(tmp_path, change, message):
    folder = tiny_bert(tmp_path / "m", config_changes=change)
    with pytest.raises(EmbedderError, match=message):
        OnnxEmbedder(folder, cache=False)


def test_missing_or_wrong_weights_are_a_named_error(tmp_path):
    from safetensors.numpy import load_file, save_file

    folder = tiny_bert(tmp_path / "m")
    weights = load_file(str(folder / "model.safetensors"))
    weights["encoder.layer.1.intermediate.dense.weight"] = np.zeros((3, 3), np.float32)
    save_file(weights, str(folder / "model.safetensors"))
    with pytest.raises(EmbedderError, match="shape"):
        OnnxEmbedder(folder, cache=False)
    (folder / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(EmbedderError, match="cannot read"):
        OnnxEmbedder(folder, cache=False)
    (folder / "model.safetensors").unlink()
    with pytest.raises(EmbedderError, match="model.safetensors"):
        OnnxEmbedder(folder, cache=False)


def test_the_spec_names_an_onnx_folder(model_dir, own_cache):
    embedder = embedder_loader(f"onnx:{model_dir}")()
    assert isinstance(embedder, OnnxEmbedder) and embedder.name.startswith("onnx:tiny:")
    with pytest.raises(EmbedderError, match="no model"):
        embedder_loader(f"onnx:{model_dir}-missing")


def test_int8_weights_stay_close(model_dir, own_cache):
    exact = OnnxEmbedder(model_dir, cache=False)
    small = OnnxEmbedder(model_dir, precision="int8", cache=False)
    texts = ["parse config file", "user route handler", "def read ( self ) : return"]
    assert small.name.endswith(":int8") and small.name != exact.name
    assert cosines(small.embed(texts), exact.embed(texts)).min() > 0.9
    with pytest.raises(ValueError):
        OnnxEmbedder(model_dir, precision="fp16")


def test_quantizing_says_nothing_on_the_terminal(model_dir, own_cache):
    """ONNX Runtime's quantizer advises pre-processing the graph on the root logger: its first use configures
    logging for the whole process (a handler on stderr), and a one-shot command's user would see it."""
    code = ("import logging\nfrom codelex.dense import OnnxEmbedder\n"
            f"OnnxEmbedder({str(model_dir)!r}, precision='int8', cache=False)\n"
            "assert not logging.getLogger().handlers, logging.getLogger().handlers  # (no basicConfig done)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_no_torch_is_imported_and_no_thread_outlives_a_call(model_dir, own_cache):
    code = ("import sys, threading; from codelex.dense import OnnxEmbedder\n"
            f"e = OnnxEmbedder({str(model_dir)!r}, threads=2)\n"
            "e.embed(['parse config'] * 500)\n"
            "assert 'torch' not in sys.modules and 'sentence_transformers' not in sys.modules\n"
            "assert [t.name for t in threading.enumerate()] == ['MainThread'], threading.enumerate()\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "XDG_CACHE_HOME": str(own_cache.parent)})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    assert out.stderr == ""  # (ONNX Runtime's notices are not printed)


@pytest.mark.parametrize("text", ["[1, 2]", "[" * 100_000 + "]" * 100_000, '{"model_type": "bert"'])
def test_a_config_that_is_no_json_object_is_a_named_error(tmp_path, text):
    """Review finding: a list or a deeply nested config.json raised AttributeError / RecursionError."""
    folder = tiny_bert(tmp_path / "m")
    (folder / "config.json").write_text(text)
    with pytest.raises(EmbedderError, match="config.json"):
        OnnxEmbedder(folder, cache=False)


def test_a_tokenizer_larger_than_the_weights_is_a_named_error(tmp_path):
    """Review finding: a tokenizer giving ids past the word embeddings failed inside ONNX Runtime."""
    folder = tiny_bert(tmp_path / "m")
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = 5
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(EmbedderError, match="word embeddings"):
        OnnxEmbedder(folder, cache=False)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.timeout(30)
def test_a_file_swapped_for_a_fifo_after_the_check_is_never_waited_on(tmp_path, monkeypatch):
    """Review finding: the folder was checked, then read with a blocking open (a FIFO put there meanwhile hung)."""
    import codelex.dense.onnx_embedder as module

    folder = tiny_bert(tmp_path / "m")
    monkeypatch.setattr(module, "check_model_folder", lambda path: path)  # (the swap happens after the check)
    (folder / "tokenizer.json").unlink()
    os.mkfifo(folder / "tokenizer.json")
    with pytest.raises(EmbedderError, match="not a regular file"):
        OnnxEmbedder(folder, cache=False)


def test_the_cached_graph_follows_the_contents_and_is_believed_only_under_its_name(model_dir, own_cache, tmp_path):
    import shutil

    first = OnnxEmbedder(model_dir)
    (cached,) = (own_cache / "models").glob("*.onnx")
    os.utime(model_dir / "model.safetensors", (1, 1))  # touched, not changed: the same graph
    again = OnnxEmbedder(model_dir)
    assert list((own_cache / "models").glob("*.onnx")) == [cached] and again.name == first.name
    # Renamed to another model's or precision's name, a file is not believed (its MAC covers its name).
    other = cached.with_name(cached.name.replace("-fp32", "-int8"))
    shutil.copy(cached, other)
    from codelex.persist.models import load_model_file

    assert load_model_file(cached.name) is not None and load_model_file(other.name) is None
    other.unlink()
    changed = tiny_bert(tmp_path / "tiny", seed=7)  # same name, other weights: a new graph replaces the old
    assert OnnxEmbedder(changed).name != first.name
    names = [p.name for p in (own_cache / "models").glob("tiny-*-fp32.onnx")]
    assert len(names) == 1 and names[0] != cached.name


def test_a_named_model_is_loaded_once_while_anything_holds_it(tmp_path, monkeypatch, own_cache):
    """A warm server opening another root answers with the model it has: the named model (the default,
    from its package) is one object process-wide while held, per precision; released, it is loaded again."""
    import gc
    import importlib
    import weakref

    from codelex.dense import model_folder

    package = tmp_path / "site" / model_folder.DEFAULT_MODEL_MODULE
    tiny_bert(package / "model")
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, model_folder.DEFAULT_MODEL_MODULE, raising=False)
    importlib.invalidate_caches()
    from codelex.dense import live_embedder

    assert live_embedder(None) is None  # (asking loads nothing)
    first = embedder_loader(None)()
    assert live_embedder(None) is first and live_embedder("minilm") is None
    assert embedder_loader("minilm-int8")() is first
    assert first.name.endswith(":int8")
    other = embedder_loader("minilm")()
    assert other is not first and not other.name.endswith(":int8")
    # A folder the user names is loaded from it every time (its files may have changed).
    assert embedder_loader(f"onnx:{package / 'model'}")() is not other
    gone = weakref.ref(first)
    del first
    gc.collect()
    assert gone() is None and live_embedder(None) is None
    assert embedder_loader(None)().name.endswith(":int8")
