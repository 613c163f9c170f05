"""`TrainConfig`: every field documented, `wass-chat train policy`'s defaults are the config's,
and training stops on its step budget, the wall clock only when a cap is asked for."""

from __future__ import annotations

import time

from policy.learned.config import TrainConfig
from tests.config_fields import cli_defaults, undocumented_fields
from wass_chat.cli.train_cmds import train_policy

# `train policy` options -> the TrainConfig field each sets.
OPTIONS = {"budget": "budget_minutes", "updates": "updates", "instances": "train_instances",
           "seed": "seed", "workers": "workers", "validation": "validation_instances",
           "expert_iterations": "expert_iterations", "expert_instances": "expert_instances",
           "estimates": "estimates", "noise": "noise"}  # fmt: skip


def test_every_field_has_a_docstring() -> None:
    assert undocumented_fields(TrainConfig) == set()


def test_the_cli_defaults_are_the_configs() -> None:
    defaults = TrainConfig()
    assert cli_defaults(train_policy, OPTIONS) == {
        f: getattr(defaults, f) for f in OPTIONS.values()
    }


def test_no_wall_clock_cap_unless_asked() -> None:
    long_ago = time.monotonic() - 10 * 60
    assert TrainConfig().budget_minutes is None
    assert not TrainConfig().past_wall_clock_cap(long_ago)
    assert TrainConfig(budget_minutes=5).past_wall_clock_cap(long_ago)
    assert not TrainConfig(budget_minutes=60).past_wall_clock_cap(long_ago)
