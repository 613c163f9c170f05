"""Embeddings that place similar executions near each other, behind one :class:`Embedder` protocol.

v0 (:class:`StructuralEmbedder`) is deterministic and needs no training: 57 named structural
features of the workflow and platform (level/width/degree statistics, log-scaled quantiles of
task work and data sizes, CCR, parallelism, platform size and heterogeneity), each squashed as
``tanh((raw - centre) / scale)`` with fixed constants, weighted by group, padded to 64 dimensions
and L2-normalised for cosine search. The constants are part of the embedder's checksum, so a
change of features can never silently mix two spaces in one collection.

v1 (``gnn-v1``, :mod:`kb.embedding_gnn`) pools the learned policy's GNN encoder; it loads torch
when built, so it is imported only by :func:`kb.embedders.embedder_by_name`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from kb.decisions import DECISION_FEATURES, DecisionState
from kb.graph_stats import coefficient_of_variation, critical_path_work, edge_byte_sizes
from sim.model import REFERENCE_SPEED, Platform, Workflow
from sim.workflow_stats import communication_to_computation_ratio, level_widths


@runtime_checkable
class Embedder(Protocol):
    """Turns cases and decision states into unit vectors; identified by name and checksum."""

    name: str
    dim: int
    decision_dim: int

    @property
    def checksum(self) -> str:
        """Changes whenever the vectors this embedder produces would change."""
        ...

    def embed_cases(self, cases: Sequence[tuple[Workflow, Platform]]) -> np.ndarray:
        """One L2-normalised float32 row of width ``dim`` per (workflow, platform)."""
        ...

    def embed_decisions(self, states: Sequence[DecisionState]) -> np.ndarray:
        """One L2-normalised float32 row of width ``decision_dim`` per decision state."""
        ...


# (name, centre, scale, group) of every raw feature, in order. Logs are base 10; times in
# seconds on the reference core; sizes in bytes.
_FEATURES: tuple[tuple[str, float, float, str], ...] = (
    ("tasks_log", 2.3, 0.8, "size"),
    ("files_log", 2.5, 0.9, "size"),
    ("edges_log", 2.5, 1.0, "size"),
    ("edges_per_task_log", 0.2, 0.3, "size"),
    ("depth_log", 1.0, 0.5, "levels"),
    ("max_width_log", 1.7, 0.8, "levels"),
    ("depth_fraction", 0.1, 0.2, "levels"),
    ("max_width_fraction", 0.5, 0.3, "levels"),
    ("width_q25_rel", 0.1, 0.3, "levels"),
    ("width_q50_rel", 0.2, 0.3, "levels"),
    ("width_q75_rel", 0.5, 0.4, "levels"),
    ("width_cv", 1.2, 0.8, "levels"),
    ("in_degree_mean", 1.3, 1.0, "degrees"),
    ("in_degree_max_log", 1.2, 0.8, "degrees"),
    ("in_degree_cv", 1.5, 1.5, "degrees"),
    ("out_degree_mean", 1.3, 1.0, "degrees"),
    ("out_degree_max_log", 1.2, 0.8, "degrees"),
    ("out_degree_cv", 1.5, 1.5, "degrees"),
    ("entry_fraction", 0.3, 0.3, "degrees"),
    ("exit_fraction", 0.3, 0.3, "degrees"),
    ("runtime_q0_log", 0.0, 1.5, "work"),
    ("runtime_q10_log", 0.5, 1.5, "work"),
    ("runtime_q25_log", 0.8, 1.5, "work"),
    ("runtime_q50_log", 1.0, 1.5, "work"),
    ("runtime_q75_log", 1.3, 1.5, "work"),
    ("runtime_q90_log", 1.6, 1.5, "work"),
    ("runtime_q100_log", 2.2, 1.5, "work"),
    ("runtime_cv", 1.0, 1.0, "work"),
    ("total_runtime_log", 3.5, 1.5, "work"),
    ("file_q10_log", 4.0, 2.0, "data"),
    ("file_q50_log", 6.0, 2.0, "data"),
    ("file_q90_log", 7.5, 2.0, "data"),
    ("file_q100_log", 8.5, 2.0, "data"),
    ("total_bytes_log", 9.0, 2.0, "data"),
    ("input_bytes_fraction", 0.3, 0.3, "data"),
    ("file_cv", 2.0, 2.0, "data"),
    ("edge_q10_log", 4.0, 2.5, "data"),
    ("edge_q50_log", 6.0, 2.5, "data"),
    ("edge_q90_log", 7.5, 2.5, "data"),
    ("empty_edge_fraction", 0.1, 0.3, "data"),
    ("ccr_log", -1.0, 1.5, "ratios"),
    ("parallelism_log", 1.0, 0.8, "ratios"),
    ("critical_path_log", 2.0, 1.5, "ratios"),
    ("categories_log", 0.8, 0.5, "ratios"),
    ("cores_per_task_mean", 1.5, 2.0, "ratios"),
    ("nodes_log", 1.0, 0.6, "platform"),
    ("total_cores_log", 2.0, 0.8, "platform"),
    ("speed_cv", 0.2, 0.3, "platform"),
    ("speed_spread_log", 0.2, 0.3, "platform"),
    ("bandwidth_cv", 0.2, 0.4, "platform"),
    ("cores_cv", 0.2, 0.4, "platform"),
    ("mean_speed_log", 0.0, 0.4, "platform"),
    ("mean_bandwidth_log", 9.1, 0.6, "platform"),
    ("gpu_node_fraction", 0.1, 0.3, "platform"),
    ("parallelism_per_core_log", -0.5, 1.0, "fit"),
    ("ideal_makespan_log", 1.5, 1.5, "fit"),
    ("critical_path_share_log", 0.5, 1.0, "fit"),
)
FEATURE_NAMES: tuple[str, ...] = tuple(f[0] for f in _FEATURES)
_CENTRE = np.array([f[1] for f in _FEATURES])
FEATURE_SCALE = np.array([f[2] for f in _FEATURES])
"""Normalisation scale of each raw feature: the unit a perturbation is measured in."""
_GROUP_WEIGHT = {
    "size": 1.0,
    "levels": 1.0,
    "degrees": 1.0,
    "work": 0.8,
    "data": 0.8,
    "ratios": 1.0,
    "platform": 0.6,
    "fit": 0.6,
}
_WEIGHT = np.array([_GROUP_WEIGHT[f[3]] for f in _FEATURES])

_DECISION_CENTRE = np.array([1.0, 6.0, 1.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0, 0.2, 0.0])
_DECISION_SCALE = np.array([1.5, 2.5, 2.0, 2.0, 0.3, 0.3, 0.5, 0.3, 0.3, 0.6, 0.3, 1.0])


def _log10(x: float) -> float:
    return math.log10(max(x, 1e-12))


def _quantiles(values: np.ndarray, qs: Sequence[float]) -> list[float]:
    if values.size == 0:
        return [0.0] * len(qs)
    return [float(v) for v in np.quantile(values, qs)]


def raw_features(workflow: Workflow, platform: Platform) -> np.ndarray:
    """The unnormalised feature vector named by :data:`FEATURE_NAMES`."""
    n = len(workflow.tasks)
    widths = np.array(level_widths(workflow), dtype=np.float64)
    in_deg = np.array([len(workflow.parents[t.id]) for t in workflow.tasks], dtype=np.float64)
    out_deg = np.array([len(workflow.children[t.id]) for t in workflow.tasks], dtype=np.float64)
    runtimes = np.array([t.runtime for t in workflow.tasks])
    file_sizes = np.array([f.size for f in workflow.files], dtype=np.float64)
    edges = edge_byte_sizes(workflow)
    inputs = set(workflow.input_files)
    input_bytes = sum(f.size for f in workflow.files if f.id in inputs)
    total_bytes = max(workflow.total_bytes, 1)
    cp_seconds = critical_path_work(workflow) / REFERENCE_SPEED
    total_seconds = workflow.total_work / REFERENCE_SPEED
    parallelism = total_seconds / cp_seconds if cp_seconds > 0 else 1.0
    speeds = np.array([node.speed for node in platform.nodes])
    cores = np.array([node.cores for node in platform.nodes], dtype=np.float64)
    bandwidths = np.array([node.bandwidth for node in platform.nodes])
    ideal = workflow.total_work / platform.total_capacity
    cp_fastest = critical_path_work(workflow) / platform.fastest_core_speed
    values = [
        _log10(n),
        _log10(len(workflow.files) + 1),
        _log10(edges.size + 1),
        _log10((edges.size + 1) / n),
        _log10(widths.size),
        _log10(widths.max()),
        widths.size / n,
        widths.max() / n,
        *(q / widths.max() for q in _quantiles(widths, (0.25, 0.5, 0.75))),
        coefficient_of_variation(widths),
        float(in_deg.mean()),
        _log10(in_deg.max() + 1),
        coefficient_of_variation(in_deg),
        float(out_deg.mean()),
        _log10(out_deg.max() + 1),
        coefficient_of_variation(out_deg),
        float((in_deg == 0).mean()),
        float((out_deg == 0).mean()),
        *(_log10(q) for q in _quantiles(runtimes, (0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0))),
        coefficient_of_variation(runtimes),
        _log10(total_seconds),
        *(_log10(q + 1) for q in _quantiles(file_sizes, (0.1, 0.5, 0.9, 1.0))),
        _log10(total_bytes),
        input_bytes / total_bytes,
        coefficient_of_variation(file_sizes),
        *(_log10(q + 1) for q in _quantiles(edges, (0.1, 0.5, 0.9))),
        float((edges == 0).mean()) if edges.size else 0.0,
        _log10(communication_to_computation_ratio(workflow, platform) or 0.0),
        _log10(parallelism),
        _log10(cp_seconds),
        _log10(len({t.category or t.name for t in workflow.tasks})),
        float(np.mean([t.cores for t in workflow.tasks])),
        _log10(len(platform.nodes)),
        _log10(platform.total_cores),
        coefficient_of_variation(speeds),
        _log10(speeds.max() / speeds.min()),
        coefficient_of_variation(bandwidths),
        coefficient_of_variation(cores),
        _log10(float(speeds.mean()) / REFERENCE_SPEED),
        _log10(float(bandwidths.mean())),
        float(np.mean([node.gpus > 0 for node in platform.nodes])),
        _log10(parallelism / platform.total_cores),
        _log10(ideal),
        _log10(cp_fastest / ideal) if ideal > 0 else 0.0,
    ]
    return np.asarray(values, dtype=np.float64)


def _unit_rows(matrix: np.ndarray, dim: int) -> np.ndarray:
    """Pad rows with zeros to ``dim`` columns and scale each to unit length (float32)."""
    out = np.zeros((matrix.shape[0], dim), dtype=np.float32)
    out[:, : matrix.shape[1]] = matrix
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


class StructuralEmbedder:
    """v0: the deterministic structural embedding described in this module's docstring."""

    name = "structural-v0"
    dim = 64
    decision_dim = 16

    @property
    def checksum(self) -> str:
        spec = [
            _FEATURES,
            sorted(_GROUP_WEIGHT.items()),
            DECISION_FEATURES,
            _DECISION_CENTRE.tolist(),
            _DECISION_SCALE.tolist(),
            self.dim,
            self.decision_dim,
        ]
        return hashlib.sha256(json.dumps(spec).encode()).hexdigest()[:12]

    def normalise(self, raw: np.ndarray) -> np.ndarray:
        """Raw feature rows (n, len(FEATURE_NAMES)) -> unit embedding rows (n, dim)."""
        squashed = np.tanh((np.atleast_2d(raw) - _CENTRE) / FEATURE_SCALE) * _WEIGHT
        return _unit_rows(squashed, self.dim)

    def embed_cases(self, cases: Sequence[tuple[Workflow, Platform]]) -> np.ndarray:
        if not cases:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.normalise(np.stack([raw_features(w, p) for w, p in cases]))

    def embed_decisions(self, states: Sequence[DecisionState]) -> np.ndarray:
        if not states:
            return np.zeros((0, self.decision_dim), dtype=np.float32)
        raw = np.array([s.features for s in states], dtype=np.float64)
        return _unit_rows(np.tanh((raw - _DECISION_CENTRE) / _DECISION_SCALE), self.decision_dim)
