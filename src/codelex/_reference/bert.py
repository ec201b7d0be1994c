"""A BERT encoder with mean pooling in numpy: the oracle of :mod:`codelex.dense.bert_graph`'s ONNX graph."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bert_mean_embedding"]


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def bert_mean_embedding(weights, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """The mean of the unmasked tokens' last hidden states (float64, batch x hidden), as the model computes it.

    ``weights`` is a :class:`codelex.dense.bert_graph.BertWeights`.
    """
    c = weights.config
    w = {k: v.astype(np.float64) for k, v in weights.tensors.items() if v.dtype.kind == "f"}
    batch, length = input_ids.shape
    x = (w["embeddings.word_embeddings.weight"][input_ids]
         + w["embeddings.position_embeddings.weight"][:length][None]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], c.layer_norm_eps)
    heads, size = c.heads, c.hidden // c.heads
    masked = np.where(attention_mask[:, None, None, :] > 0, 0.0, -10000.0)
    for i in range(c.layers):
        p = f"encoder.layer.{i}."

        def project(name: str, inp: np.ndarray) -> np.ndarray:
            return inp @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

        q, k, v = (split(project(f"attention.self.{n}", x)) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + masked
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, c.hidden)
        x = _layer_norm(project("attention.output.dense", context) + x, w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"], c.layer_norm_eps)
        ff = project("output.dense", _gelu(project("intermediate.dense", x)))
        x = _layer_norm(ff + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], c.layer_norm_eps)
    m = attention_mask[:, :, None].astype(np.float64)
    return (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
