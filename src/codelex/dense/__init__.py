"""The vector half of hybrid search: embedders behind one protocol, and vectors cached by text hash."""

from codelex.dense.embedders import (
    Embedder,
    FunctionEmbedder,
    SentenceTransformerEmbedder,
    StaticModelEmbedder,
    checked_vectors,
    embed_checked,
    embedder_from_spec,
    embedder_loader,
    live_embedder,
)
from codelex.dense.onnx_embedder import OnnxEmbedder
from codelex.dense.store import VectorCache

__all__ = [
    "Embedder",
    "FunctionEmbedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "StaticModelEmbedder",
    "VectorCache",
    "checked_vectors",
    "embed_checked",
    "embedder_from_spec",
    "embedder_loader",
    "live_embedder",
]
