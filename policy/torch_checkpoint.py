"""One small ``.pt`` layout for every network the project ships (the workflow policy, the DQN, the
queue policy): ``{"config", "state", "extra"}``, read back with weights only.

A file that is not one of ours (truncated, another model's, not a torch file at all) raises
:class:`~sim.errors.InputError` naming the file, never torch's unpickling traceback. Saving goes
through :func:`sim.atomic_files.write_output` (a temporary file beside the target, fsync'd and
renamed), so an interrupted or failed save never leaves a half-written checkpoint (the shipped
ones are overwritten in place by retraining); a folder that cannot be written is one
:class:`CheckpointWriteError` line.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import torch
from torch import nn

from sim.atomic_files import OutputError, write_output
from sim.errors import InputError, UserFacingError

Net = TypeVar("Net", bound=nn.Module)


class CheckpointWriteError(UserFacingError):
    """A checkpoint that cannot be written where asked: one line, exit code 2."""


def save_weights(net: nn.Module, cfg: Any, path: str, extra: dict[str, object] | None) -> None:
    """Weights, the network's shape (``cfg``, a dataclass) and training metadata, written
    whole or not at all (see the module docstring)."""
    buffer = io.BytesIO()
    torch.save({"config": asdict(cfg), "state": net.state_dict(), "extra": extra or {}}, buffer)
    try:
        write_output(Path(path), buffer.getvalue())  # its folder is the person's to make
    except OutputError as exc:
        raise CheckpointWriteError(str(exc)) from exc


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
