"""`ArrayConfig`: every field documented, and the `--slurm-array` options of `bench`, `train
evaluate` and `kb seed` default to the config's fields (no drift)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.config_fields import cli_defaults, undocumented_fields
from wass_chat.cli.bench_cmds import bench
from wass_chat.cli.kb_seed_cmds import seed_command
from wass_chat.cli.train_cmds import train_evaluate
from wass_chat.slurm.arrays.config import EVALUATE_MEMORY_MB, ArrayConfig

# The array options every such command has -> the ArrayConfig field each sets.
OPTIONS = {"slurm_array": "tasks", "array_dir": "directory", "memory_mb": "memory_mb"}


def test_every_field_has_a_docstring() -> None:
    assert undocumented_fields(ArrayConfig) == set()


@pytest.mark.parametrize("command", [bench, seed_command, train_evaluate])
def test_the_cli_defaults_are_the_configs(command: Callable[..., Any]) -> None:
    config = ArrayConfig(memory_mb=EVALUATE_MEMORY_MB if command is train_evaluate else 1000)
    assert ArrayConfig().memory_mb == 1000
    assert cli_defaults(command, OPTIONS) == {f: getattr(config, f) for f in OPTIONS.values()}


def test_no_wait_is_the_configs_wait_turned_round() -> None:
    assert cli_defaults(seed_command, {"no_wait": "wait"})["wait"] is not ArrayConfig().wait
