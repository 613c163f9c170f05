"""The placement network's shape, apart from the network (:mod:`policy.learned.model`), so the
training configs and the CLI's defaults read it without loading torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NetConfig:
    """Shape of the network (stored in checkpoints)."""

    hidden: int = 64
    """Width of every embedding and hidden layer."""
    layers: int = 2
    """Message-passing rounds of the encoder."""
