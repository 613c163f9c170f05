"""v1 embedder: the learned placement policy's GNN encoder, pooled into one vector per case.

A case (workflow on platform) becomes the heterogeneous graph the policy reads
(:func:`policy.learned.features.build_graph` over ``InstanceContext.of``); the trained
:class:`~policy.learned.model.PolicyNet` encodes it once, and the node embeddings are pooled:
task nodes by mean and by max, compute nodes by mean, concatenated (``3 x hidden`` = 192 dims
for the shipped network) and L2-normalised. The space is therefore what the policy learned to
tell apart when placing tasks, not a hand-written feature table.

Decision states (:class:`~kb.decisions.DecisionState`) are twelve numbers, not graphs, so this
embedder gives decisions v0's decision embedding unchanged (same ``decision_dim``).

The checksum hashes the checkpoint's bytes with the pooling spec and v0's checksum (which fixes
the decision embedding): a retrained network is a new space and so a new collection.

torch and the network load when the embedder is built, never when this module is imported, so
``import kb.embedding`` stays light.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kb.decisions import DecisionState
from kb.embedding import StructuralEmbedder
from sim.errors import InputError
from sim.model import Platform, Workflow

if TYPE_CHECKING:
    from policy.learned.model import PolicyNet

GNN_EMBEDDER_NAME = "gnn-v1"
POOLING = ("task:mean", "task:max", "compute:mean")
"""Node type and reduction of each block of the case vector, in order."""
GRAPHS_PER_BATCH = 32
"""Cases encoded together as one disjoint graph: about 3x faster than one at a time on two
shared cores, and the same vectors (no message crosses from one graph to another)."""


class GnnEmbedder:
    """v1: cases through the learned policy's GNN encoder (see the module docstring)."""

    name = GNN_EMBEDDER_NAME
    decision_dim = StructuralEmbedder.decision_dim

    def __init__(self, checkpoint: str | Path | None = None) -> None:
        if checkpoint is not None:
            _require_file(Path(checkpoint))  # before importing torch: a typo fails fast
        from policy.learned.planner import DEFAULT_CHECKPOINT, load_policy_net

        path = _require_file(Path(checkpoint or DEFAULT_CHECKPOINT))
        self.checkpoint = path
        self.shipped = path == DEFAULT_CHECKPOINT.resolve()
        """True for the checkpoint shipped with the policy (recorded without its path)."""
        self._decisions = StructuralEmbedder()
        spec = json.dumps([list(POOLING), "l2", self._decisions.checksum]).encode()
        self._checksum = hashlib.sha256(path.read_bytes() + spec).hexdigest()[:12]
        self._net: PolicyNet = load_policy_net(path)
        self.dim = len(POOLING) * self._net.cfg.hidden

    @property
    def checksum(self) -> str:
        return self._checksum

    @property
    def registry_name(self) -> str:
        """What :func:`kb.embedders.embedder_by_name` rebuilds this embedder from."""
        if self.shipped:
            return self.name
        return f"{self.name}:{self.checkpoint}"

    def embed_cases(self, cases: Sequence[tuple[Workflow, Platform]]) -> np.ndarray:
        """One pooled, unit-length row per case; equal cases are encoded once."""
        unique = list(dict.fromkeys(cases))
        rows: dict[tuple[Workflow, Platform], np.ndarray] = {}
        for start in range(0, len(unique), GRAPHS_PER_BATCH):
            chunk = unique[start : start + GRAPHS_PER_BATCH]
            rows.update(zip(chunk, self._embed_batch(chunk), strict=True))
        out = np.zeros((len(cases), self.dim), dtype=np.float32)
        for i, case in enumerate(cases):
            out[i] = rows[case]
        return out

    def _embed_batch(self, cases: Sequence[tuple[Workflow, Platform]]) -> np.ndarray:
        """Encode ``cases`` as one disjoint batch graph and pool each graph's nodes."""
        import torch
        from torch_geometric.data import Batch
        from torch_geometric.utils import scatter

        from policy.learned.features import build_graph
        from policy.learned.instance_context import InstanceContext

        graphs = [
            build_graph(InstanceContext.of(workflow, platform)) for workflow, platform in cases
        ]
        batch = Batch.from_data_list(graphs)
        with torch.no_grad():
            emb = self._net.encode(batch)
            tasks, nodes = batch["task"].batch, batch["compute"].batch
            size = len(graphs)
            pooled = torch.cat(
                [
                    scatter(emb["task"], tasks, dim=0, dim_size=size, reduce="mean"),
                    scatter(emb["task"], tasks, dim=0, dim_size=size, reduce="max"),
                    scatter(emb["compute"], nodes, dim=0, dim_size=size, reduce="mean"),
                ],
                dim=1,
            )
        vectors = pooled.numpy().astype(np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def embed_decisions(self, states: Sequence[DecisionState]) -> np.ndarray:
        """v0's decision embedding: decision states are feature vectors, not graphs."""
        return self._decisions.embed_decisions(states)


def _require_file(path: Path) -> Path:
    """``path``, absolute, or an InputError saying there is no checkpoint there."""
    resolved = path.expanduser().resolve()
    if not resolved.is_file():
        raise InputError(
            str(resolved),
            [
                "no policy checkpoint here for the gnn-v1 embedder: train one with "
                "`wass-chat train policy` or give an existing .pt file"
            ],
        )
    return resolved
