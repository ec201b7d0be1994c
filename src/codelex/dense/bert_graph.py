"""A BERT encoder with mean pooling as an ONNX graph, written from a model folder's weights without torch.

A sentence-transformers folder of a BERT-family model (``config.json``,
``model.safetensors``, ``tokenizer.json``, a mean-pooling module) holds
everything inference needs; the graph is made here with ``onnx``'s helpers
and ONNX Runtime's fused CPU operators (``com.microsoft`` Attention,
SkipLayerNormalization, BiasGelu), so neither torch nor an exporter is
involved.  The arithmetic is the model's own: embeddings (word + position +
token type 0) and LayerNorm; per layer, self-attention with the padding
masked, output projection, residual LayerNorm, the GELU (erf) feed-forward,
residual LayerNorm; then the mean of the unmasked tokens.
:mod:`codelex._reference.bert` is the same computation in numpy, the
oracle of the tests.

Only :func:`build_bert_graph` needs ``onnx``; it runs once per model (the
result is kept in the user cache by :mod:`codelex.dense.onnx_embedder`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codelex.errors import EmbedderError

__all__ = ["BertConfig", "BertWeights", "build_bert_graph", "quantize_graph", "read_bert_config", "read_bert_folder"]

#: The opset of the standard operators the graph uses (LayerNormalization is opset 17).
OPSET = 17


@dataclass(frozen=True)
class BertConfig:
    """What the graph's shape depends on (from ``config.json`` and the sentence-transformers files)."""

    hidden: int
    heads: int
    layers: int
    intermediate: int
    positions: int
    layer_norm_eps: float
    max_tokens: int  # the model's window: sentence_bert_config.json's max_seq_length
    vocabulary: int  # rows of the word embeddings: every token id the tokenizer gives must be below it


@dataclass(frozen=True)
class BertWeights:
    """A BERT model's tensors by their Hugging Face names (``bert.`` prefix removed)."""

    config: BertConfig
    tensors: dict[str, np.ndarray]

    def get(self, name: str) -> np.ndarray:
        try:
            return self.tensors[name]
        except KeyError:
            raise EmbedderError(f"the model's weights have no tensor {name!r}") from None


def _json(path: Path) -> dict:
    """A configuration file of the folder as a JSON object ({} when absent); an EmbedderError for anything else."""
    from codelex.dense.model_folder import MAX_CONFIG_FILE, read_model_file

    raw = read_model_file(path, MAX_CONFIG_FILE)
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise EmbedderError(f"cannot read {path}: not valid JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise EmbedderError(f"{path} is not a JSON object")
    return data


def _positive(config: dict, key: str, path: Path) -> int:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EmbedderError(f"{path}: {key} must be a positive integer, not {value!r}")
    return value


def read_bert_config(folder: str | os.PathLike[str]) -> BertConfig:
    """The configuration of a sentence-transformers BERT folder (weights not read); an EmbedderError for anything else.

    The folder must hold a BERT-family ``config.json`` (absolute positions,
    GELU), ``model.safetensors`` and mean pooling (the default when
    ``1_Pooling/config.json`` is absent).
    """
    folder = Path(folder)
    config = _json(folder / "config.json")
    if not config:
        raise EmbedderError(f"{folder} has no config.json: not a transformer model folder")
    kind = config.get("model_type")
    if kind != "bert":
        raise EmbedderError(f"{folder}: model_type {kind!r} is not supported by the ONNX embedder (bert only); "
                            "use --embedder st:PATH for other architectures")
    if config.get("position_embedding_type", "absolute") != "absolute" or \
            config.get("hidden_act", "gelu") != "gelu":
        raise EmbedderError(f"{folder}: only absolute positions and gelu are supported by the ONNX embedder")
    pooling = _json(folder / "1_Pooling" / "config.json")
    if pooling and (not pooling.get("pooling_mode_mean_tokens") or any(
            pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                     "pooling_mode_mean_sqrt_len_tokens"))):
        raise EmbedderError(f"{folder}: only mean pooling is supported by the ONNX embedder")
    positions = _positive(config, "max_position_embeddings", folder / "config.json")
    st_config = _json(folder / "sentence_bert_config.json")
    max_tokens = st_config.get("max_seq_length", positions)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 2:
        raise EmbedderError(f"{folder}: max_seq_length must be an integer of at least 2, not {max_tokens!r}")
    hidden = _positive(config, "hidden_size", folder / "config.json")
    heads = _positive(config, "num_attention_heads", folder / "config.json")
    if hidden % heads:
        raise EmbedderError(f"{folder}: hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    eps = config.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise EmbedderError(f"{folder}: layer_norm_eps must be a small positive number, not {eps!r}")
    return BertConfig(hidden=hidden, heads=heads, layers=_positive(config, "num_hidden_layers", folder / "config.json"),
                      intermediate=_positive(config, "intermediate_size", folder / "config.json"),
                      positions=positions, layer_norm_eps=float(eps), max_tokens=min(max_tokens, positions),
                      vocabulary=_positive(config, "vocab_size", folder / "config.json"))


def read_bert_folder(folder: str | os.PathLike[str]) -> BertWeights:
    """The configuration and weights of a sentence-transformers BERT folder (:func:`read_bert_config`)."""
    folder = Path(folder)
    cfg = read_bert_config(folder)
    from codelex.dense.model_folder import MAX_WEIGHTS_FILE, read_model_file

    weights_file = folder / "model.safetensors"
    data = read_model_file(weights_file, MAX_WEIGHTS_FILE)
    if data is None:
        raise EmbedderError(f"{folder} has no model.safetensors (the ONNX embedder reads safetensors weights only)")
    try:
        from safetensors.numpy import load
    except ImportError:
        raise EmbedderError("safetensors is not installed: pip install 'codelex[embed]'") from None
    try:
        raw = load(data)
    except Exception as exc:  # a truncated or forged file: say which
        raise EmbedderError(f"cannot read {weights_file}: {exc}") from None
    del data
    tensors = {(k[5:] if k.startswith("bert.") else k): v for k, v in raw.items()}
    weights = BertWeights(cfg, tensors)
    _check_shapes(weights, folder)
    return weights


def _check_shapes(w: BertWeights, folder: Path) -> None:
    c = w.config
    expected = {
        "embeddings.position_embeddings.weight": (c.positions, c.hidden),
        "embeddings.LayerNorm.weight": (c.hidden,),
        "embeddings.LayerNorm.bias": (c.hidden,),
    }
    for i in range(c.layers):
        p = f"encoder.layer.{i}."
        for part in ("query", "key", "value"):
            expected[p + f"attention.self.{part}.weight"] = (c.hidden, c.hidden)
            expected[p + f"attention.self.{part}.bias"] = (c.hidden,)
        expected[p + "attention.output.dense.weight"] = (c.hidden, c.hidden)
        expected[p + "attention.output.dense.bias"] = (c.hidden,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            expected[p + norm + ".weight"] = (c.hidden,)
            expected[p + norm + ".bias"] = (c.hidden,)
        expected[p + "output.dense.bias"] = (c.hidden,)
        expected[p + "intermediate.dense.weight"] = (c.intermediate, c.hidden)
        expected[p + "intermediate.dense.bias"] = (c.intermediate,)
        expected[p + "output.dense.weight"] = (c.hidden, c.intermediate)
    for name, shape in expected.items():
        if tuple(w.get(name).shape) != shape:
            raise EmbedderError(f"{folder}: tensor {name} has shape {w.get(name).shape}, expected {shape}")
    words = w.get("embeddings.word_embeddings.weight")
    if words.ndim != 2 or words.shape[1] != c.hidden or words.shape[0] != c.vocabulary:
        raise EmbedderError(f"{folder}: the word embeddings have shape {words.shape}, expected "
                            f"({c.vocabulary}, {c.hidden}) (config.json's vocab_size, hidden_size)")
    types = w.get("embeddings.token_type_embeddings.weight")
    if types.ndim != 2 or types.shape[0] < 1 or types.shape[1] != c.hidden:
        raise EmbedderError(f"{folder}: the token type embeddings have shape {types.shape}")


class _GraphBuilder:
    """The nodes and initializers of the ONNX graph being written, with the BERT weights they come from."""

    def __init__(self, weights: BertWeights, helper, numpy_helper) -> None:
        self.weights = weights
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.initializers: list = []
        self.nodes: list = []

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(self, name: str, key: str, transposed: bool = False) -> str:
        """The weight ``key`` of the checkpoint as the float32 initializer ``name`` (transposed for a MatMul)."""
        array = self.weights.get(key)
        return self.const(name, (array.T if transposed else array).astype(np.float32))

    def node(self, op: str, inputs: list[str], output: str, domain: str = "", **attrs) -> str:
        self.nodes.append(self.helper.make_node(op, inputs, [output], name=output, domain=domain or None, **attrs))
        return output

    def embeddings(self) -> str:
        """Word + position + token type 0 (codelex never sends a second segment), then LayerNorm."""
        node, const, get = self.node, self.const, self.weights.get
        words = node("Gather", [self.weight("word_embeddings", "embeddings.word_embeddings.weight"), "input_ids"],
                     "emb_words")
        shape = node("Shape", ["input_ids"], "ids_shape")
        length = node("Slice", [shape, const("one_1d", np.array([1], dtype=np.int64)),
                                const("two_1d", np.array([2], dtype=np.int64))], "seq_len")
        zero = const("zero_1d", np.array([0], dtype=np.int64))
        pos = node("Slice", [self.weight("position_embeddings", "embeddings.position_embeddings.weight"),
                             zero, length, zero], "emb_positions")
        type0 = get("embeddings.token_type_embeddings.weight")[0].astype(np.float32)
        summed = node("Add", [node("Add", [words, pos], "emb_wp"), const("token_type_0", type0)], "emb_sum")
        return node("LayerNormalization", [summed, self.weight("emb_ln_w", "embeddings.LayerNorm.weight"),
                                           self.weight("emb_ln_b", "embeddings.LayerNorm.bias")],
                    "emb_out", axis=-1, epsilon=self.weights.config.layer_norm_eps)

    def encoder_layer(self, i: int, hidden: str, mask32: str) -> str:
        """Layer ``i``: fused self-attention, then the feed-forward block, each with its skip LayerNorm."""
        node, weight, get = self.node, self.weight, self.weights.get
        c, p, f32 = self.weights.config, f"encoder.layer.{i}.", np.float32
        qkv_w = np.concatenate([get(p + f"attention.self.{k}.weight").T for k in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([get(p + f"attention.self.{k}.bias") for k in ("query", "key", "value")])
        attn = node("Attention", [hidden, self.const(f"l{i}_qkv_w", qkv_w.astype(f32)),
                                  self.const(f"l{i}_qkv_b", qkv_b.astype(f32)), mask32],
                    f"l{i}_attn", domain="com.microsoft", num_heads=c.heads)
        projected = node("MatMul", [attn, weight(f"l{i}_ao_w", p + "attention.output.dense.weight", True)],
                         f"l{i}_attn_proj")
        hidden = node("SkipLayerNormalization",
                      [projected, hidden, weight(f"l{i}_ln1_w", p + "attention.output.LayerNorm.weight"),
                       weight(f"l{i}_ln1_b", p + "attention.output.LayerNorm.bias"),
                       weight(f"l{i}_ao_b", p + "attention.output.dense.bias")],
                      f"l{i}_ln1", domain="com.microsoft", epsilon=c.layer_norm_eps)
        up = node("MatMul", [hidden, weight(f"l{i}_up_w", p + "intermediate.dense.weight", True)], f"l{i}_up")
        act = node("BiasGelu", [up, weight(f"l{i}_up_b", p + "intermediate.dense.bias")],
                   f"l{i}_gelu", domain="com.microsoft")
        down = node("MatMul", [act, weight(f"l{i}_down_w", p + "output.dense.weight", True)], f"l{i}_down")
        return node("SkipLayerNormalization",
                    [down, hidden, weight(f"l{i}_ln2_w", p + "output.LayerNorm.weight"),
                     weight(f"l{i}_ln2_b", p + "output.LayerNorm.bias"),
                     weight(f"l{i}_down_b", p + "output.dense.bias")],
                    f"l{i}_ln2", domain="com.microsoft", epsilon=c.layer_norm_eps)

    def mean_pool(self, hidden: str, float_type) -> str:
        """Mean pooling over the unmasked tokens (sentence-transformers' Pooling, pooling_mode_mean_tokens)."""
        node, const = self.node, self.const
        maskf = node("Cast", ["attention_mask"], "mask_f32", to=float_type)
        mask3 = node("Unsqueeze", [maskf, const("axis_2", np.array([2], dtype=np.int64))], "mask_3d")
        total = node("ReduceSum", [node("Mul", [hidden, mask3], "masked_states"),
                                   const("axis_1", np.array([1], dtype=np.int64))], "state_sum", keepdims=0)
        count = node("ReduceSum", [maskf, "axis_1"], "token_count", keepdims=1)
        count = node("Max", [count, const("min_count", np.array(1e-9, dtype=np.float32))], "token_count_safe")
        return node("Div", [total, count], "sentence_embedding")


def build_bert_graph(weights: BertWeights) -> bytes:
    """The serialized ONNX model: inputs ``input_ids``, ``attention_mask`` (int64, batch x tokens); output
    ``sentence_embedding`` (float32, batch x hidden; the mean of the unmasked tokens' states, not normalised).
    """
    try:
        import onnx  # noqa: F401 (the package the helpers below belong to)
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        raise EmbedderError("building the ONNX model needs the onnx package once: pip install 'codelex[embed]'") \
            from None
    c = weights.config
    built = _GraphBuilder(weights, helper, numpy_helper)
    hidden = built.embeddings()
    mask32 = built.node("Cast", ["attention_mask"], "mask_i32", to=TensorProto.INT32)
    for i in range(c.layers):
        hidden = built.encoder_layer(i, hidden, mask32)
    built.mean_pool(hidden, TensorProto.FLOAT)
    graph = helper.make_graph(
        built.nodes, "codelex-bert-mean",
        inputs=[helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
                helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        outputs=[helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", c.hidden])],
        initializer=built.initializers)
    model = helper.make_model(graph, producer_name="codelex",
                              opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = min(model.ir_version, 9)  # (what ONNX Runtime releases of the last two years read)
    return model.SerializeToString()


def quantize_graph(payload: bytes) -> bytes:
    """``payload`` (a serialized model) with the weights of its matrix products quantized to int8, per channel."""
    import tempfile

    import onnx
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise EmbedderError("int8 quantization needs onnxruntime's quantization tools") from None
    import logging

    # ONNX Runtime logs through the root logger's module functions, whose first use configures logging for the
    # whole process (logging.basicConfig: a handler on stderr, and an application's own basicConfig ignored
    # later). While it quantizes, a root logger without handlers gets a NullHandler, so nothing is configured
    # and nothing printed. Its advice to pre-process the graph (shape inference, clean-up) does not apply to
    # codelex's own graph, every shape known: the graph is marked as ORT marks a pre-processed one.
    model = onnx.load_from_string(payload)
    onnx.helper.set_model_props(model, {**{p.key: p.value for p in model.metadata_props},
                                        "onnx.quant.pre_process": "onnxruntime.quant"})
    root = logging.getLogger()
    quiet = logging.NullHandler() if not root.handlers else None
    if quiet is not None:
        root.addHandler(quiet)
    try:
        with tempfile.TemporaryDirectory(prefix="codelex-quantize-") as tmp:
            source, target = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
            source.write_bytes(model.SerializeToString())
            quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=True,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            return target.read_bytes()
    finally:
        if quiet is not None:
            root.removeHandler(quiet)
