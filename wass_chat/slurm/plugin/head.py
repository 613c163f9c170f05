"""The policy head the plugin runs: a small MLP scoring each candidate node, as a Lua table.

Shape: ``score(x) = w2 . relu(W1 x + b1) + b2`` for one candidate's feature vector ``x``
(Linear-ReLU-Linear, the learned policy's scoring head). Weights come from numpy arrays (an
``.npz`` with ``w1, b1, w2, b2``) or a torch ``state_dict`` / checkpoint (the first and last
``Linear`` under a prefix, ``head.`` by default). The head's id is a hash of its weights: an
inference token names the id it was encoded for, and the plugin ignores tokens for another head.

Inference tokens carry, per candidate node, the head's input vector:
``wass:v1:run=R;task=T;mode=infer;model=ID;dim=F;cand=n1,n2;x=v11,...,v1F,v21,...``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim.errors import InputError
from wass_chat.slurm.submission import TOKEN_PREFIX, token_value


class HeadError(InputError):
    """Weights that do not form a Linear-ReLU-Linear scoring head."""

    kind = "policy head"


@dataclass(frozen=True, eq=False)
class PolicyHead:
    """``w1`` (H, F), ``b1`` (H,), ``w2`` (H,), ``b2``; ``id`` identifies these weights."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: float
    id: str

    @property
    def dim(self) -> int:
        return int(self.w1.shape[1])

    def scores(self, features: np.ndarray) -> np.ndarray:
        """One score per row of ``features`` (candidates x F), in float64 like Lua."""
        x = np.asarray(features, dtype=np.float64)
        hidden = np.maximum(x @ self.w1.T + self.b1, 0.0)
        return np.asarray(hidden @ self.w2 + self.b2)


def head_from_arrays(w1: Any, b1: Any, w2: Any, b2: Any) -> PolicyHead:
    """Validate shapes and build a head; ``w2`` may be (H,) or (1, H), ``b2`` scalar or (1,)."""
    a1 = np.asarray(w1, dtype=np.float64)
    c1 = np.asarray(b1, dtype=np.float64).reshape(-1)
    a2 = np.asarray(w2, dtype=np.float64).reshape(-1)
    c2 = np.asarray(b2, dtype=np.float64).reshape(-1)
    problems = []
    if a1.ndim != 2:
        problems.append(f"first weight must be 2-D, got shape {a1.shape}")
    elif c1.shape[0] != a1.shape[0] or a2.shape[0] != a1.shape[0]:
        problems.append(f"hidden sizes disagree: w1 {a1.shape}, b1 {c1.shape}, w2 {a2.shape}")
    if c2.shape != (1,):
        problems.append(f"the last layer must have one output, got bias shape {c2.shape}")
    if not all(np.isfinite(a).all() for a in (a1, c1, a2, c2)):
        problems.append("weights contain NaN or infinity")
    if problems:
        raise HeadError("weights", problems)
    digest = hashlib.sha256(b"".join(a.tobytes() for a in (a1, c1, a2, c2))).hexdigest()
    return PolicyHead(a1, c1, a2, float(c2[0]), digest[:12])


def head_from_state_dict(state: Mapping[str, Any], prefix: str = "head.") -> PolicyHead:
    """The Linear-ReLU-Linear head under ``prefix`` of a torch ``state_dict``."""
    layers = sorted(
        {
            k[len(prefix) :].split(".")[0]
            for k in state
            if k.startswith(prefix) and k.endswith(".weight")
        },
        key=lambda s: int(s) if s.isdigit() else s,
    )
    if len(layers) != 2:
        raise HeadError(prefix, [f"expected 2 linear layers under {prefix!r}, found {layers}"])

    def array(key: str) -> np.ndarray:
        return np.asarray(
            state[key].detach().cpu().numpy() if hasattr(state[key], "detach") else state[key]
        )

    first, last = (f"{prefix}{layer}" for layer in layers)
    return head_from_arrays(
        array(f"{first}.weight"),
        array(f"{first}.bias"),
        array(f"{last}.weight"),
        array(f"{last}.bias"),
    )


def load_head(path: Path, prefix: str = "head.") -> PolicyHead:
    """A head from ``.npz`` (w1, b1, w2, b2) or ``.pt`` (state_dict or learned checkpoint)."""
    if not path.is_file():
        raise HeadError(str(path), ["file not found"])
    if path.suffix == ".npz":
        try:
            data = np.load(path)  # allow_pickle stays False: a weights file runs no code
        except (OSError, ValueError) as exc:
            raise HeadError(str(path), [f"not a readable .npz archive: {exc}"]) from exc
        with data:
            missing = [k for k in ("w1", "b1", "w2", "b2") if k not in data]
            if missing:
                raise HeadError(str(path), [f"missing arrays {missing}"])
            return head_from_arrays(data["w1"], data["b1"], data["w2"], data["b2"])
    import pickle

    import torch

    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, pickle.UnpicklingError, EOFError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HeadError(str(path), [f"not a readable .npz or .pt weights file: {first}"]) from exc
    state = blob.get("state", blob) if isinstance(blob, dict) else blob
    return head_from_state_dict(state, prefix)


def _lua_numbers(values: Sequence[float] | np.ndarray) -> str:
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


def head_to_lua(head: PolicyHead) -> str:
    """The head as a Lua table literal (doubles printed exactly, via ``repr``)."""
    rows = ",\n        ".join(_lua_numbers(row) for row in head.w1)
    return (
        "{\n"
        f'    id = "{head.id}",\n'
        f"    dim = {head.dim},\n"
        f"    b2 = {head.b2!r},\n"
        f"    b1 = {_lua_numbers(head.b1)},\n"
        f"    w2 = {_lua_numbers(head.w2)},\n"
        f"    w1 = {{\n        {rows}\n    }},\n"
        "}"
    )


def inference_token(
    run_id: str, task: str, head: PolicyHead, candidates: Sequence[str], features: np.ndarray
) -> str:
    """The inference-mode comment for one job (features: candidates x ``head.dim``)."""
    x = np.asarray(features, dtype=np.float64)
    if x.shape != (len(candidates), head.dim):
        raise HeadError(
            "features", [f"expected shape ({len(candidates)}, {head.dim}), got {x.shape}"]
        )
    values = ",".join(repr(float(v)) for v in x.reshape(-1))
    return (
        f"{TOKEN_PREFIX}run={token_value(run_id)};task={token_value(task)};mode=infer;"
        f"model={head.id};dim={head.dim};cand={','.join(candidates)};x={values}"
    )
