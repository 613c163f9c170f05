"""Embedders by name: what a knowledge base records, and rebuilds its embedder from.

Above both embedders (:mod:`kb.embedding`, :mod:`kb.embedding_gnn`), so neither imports the
other's module to be found by name; the GNN embedder (torch) loads only when asked for.
"""

from __future__ import annotations

from kb.embedding import Embedder, StructuralEmbedder
from sim.errors import InputError


def embedder_by_name(name: str) -> Embedder:
    """The embedder registered under ``name``: ``structural-v0``, ``gnn-v1`` (the shipped
    policy checkpoint's encoder) or ``gnn-v1:<checkpoint path>`` (another trained network)."""
    if name == StructuralEmbedder.name:
        return StructuralEmbedder()
    base, _, checkpoint = name.partition(":")
    if base == "gnn-v1":
        from kb.embedding_gnn import GnnEmbedder

        return GnnEmbedder(checkpoint or None)
    known = f"{StructuralEmbedder.name}, gnn-v1, gnn-v1:<checkpoint.pt>"
    raise InputError("embedder", [f"unknown embedder {name!r}; known: {known}"])


def registry_name(embedder: Embedder) -> str:
    """The name :func:`embedder_by_name` rebuilds ``embedder`` from (its name, plus the
    checkpoint path of a GNN embedder on a network other than the shipped one)."""
    return str(getattr(embedder, "registry_name", embedder.name))
