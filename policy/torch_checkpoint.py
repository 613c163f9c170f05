"""One small ``.pt`` layout for every network the project ships (the workflow policy, the DQN,
the queue policy): ``{"config", "state", "extra"}``, read back with weights only.

A file that is not one of ours (truncated, another model's, not a torch file at all) raises
:class:`~sim.errors.InputError` naming the file, never torch's unpickling traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

import torch
from torch import nn

from sim.errors import InputError

Net = TypeVar("Net", bound=nn.Module)


def save_weights(net: nn.Module, cfg: Any, path: str, extra: dict[str, object] | None) -> None:
    """Weights, the network's shape (``cfg``, a dataclass) and training metadata."""
    torch.save({"config": asdict(cfg), "state": net.state_dict(), "extra": extra or {}}, path)


def load_weights(
    path: str, build: Callable[[dict[str, Any]], Net], kind: str
) -> tuple[Net, dict[str, object]]:
    """The network ``build`` makes from the saved shape, with the saved weights, in eval mode,
    and its metadata; ``kind`` names the checkpoint in the error ("not a DQN checkpoint")."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
        net = build(blob["config"])
        net.load_state_dict(blob["state"])
    except FileNotFoundError:
        raise InputError(path, ["no such checkpoint file"]) from None
    except Exception as exc:  # torch raises many types for a file that is not its format
        first = (str(exc).strip().splitlines() or [""])[0][:120]
        raise InputError(
            path, [f"not a {kind} checkpoint ({type(exc).__name__}: {first})"]
        ) from exc
    net.eval()
    return net, dict(blob.get("extra", {}))
