"""`TrainConfig`: every field documented, `wass-chat train policy`'s defaults are the config's,
and training stops on its step budget, the wall clock only when a cap is asked for."""

from __future__ import annotations

import inspect
import time
from pathlib import Path

from policy.learned.config import TrainConfig
from policy.learned.decima_config import CHECKPOINT, DecimaTraining
from policy.learned.dqn_config import DQNConfig
from policy.learned.run import HeldOutEvaluation
from tests.config_fields import cli_defaults, undocumented_fields
from wass_chat.cli.train_cmds import train_evaluate, train_policy
from wass_chat.cli.train_decima_cmds import train_decima
from wass_chat.cli.train_dqn_cmds import train_dqn
from wass_chat.cli.train_inputs import ccrs_of, recipes_of

# `train policy` options -> the TrainConfig field each sets.
OPTIONS = {
    "budget": "budget_minutes",
    "updates": "updates",
    "instances": "train_instances",
    "seed": "seed",
    "workers": "workers",
    "validation": "validation_instances",
    "expert_iterations": "expert_iterations",
    "expert_instances": "expert_instances",
    "estimates": "estimates",
    "noise": "noise",
}
# `train policy` options that are no TrainConfig field: output, the teacher's and the
# evaluation's inputs (checked below), a checkpoint to start from (no default).
NOT_TRAINING = {
    "as_json",
    "reembed_kb",
    "history",
    "teacher_instances",
    "init",
    "holdout",
    "eval_instances",
    "no_rag",
    "recipes",
    "ccrs",
    "out",
}


def test_every_field_has_a_docstring() -> None:
    assert undocumented_fields(TrainConfig) == set()


def test_the_cli_defaults_are_the_configs() -> None:
    defaults = TrainConfig()
    assert cli_defaults(train_policy, OPTIONS) == {
        f: getattr(defaults, f) for f in OPTIONS.values()
    }


def test_every_train_policy_option_is_classified() -> None:
    """A new option either maps onto a config field (and is compared above) or is named here."""
    options = set(inspect.signature(train_policy).parameters)
    assert options == set(OPTIONS) | NOT_TRAINING


def test_the_parsed_cli_defaults_are_the_configs() -> None:
    """Options spelled otherwise than their field: parsed, they give the field's default."""
    config, held = TrainConfig(), HeldOutEvaluation()
    cli = cli_defaults(
        train_policy,
        {
            "no_rag": "no_rag",
            "recipes": "recipes",
            "ccrs": "ccrs",
            "out": "out",
            "eval_instances": "eval_instances",
            "holdout": "holdout",
        },
    )
    assert (not cli["no_rag"]) is config.use_rag
    assert recipes_of(cli["recipes"]) == config.recipes
    assert ccrs_of(cli["ccrs"]) == config.ccrs
    assert cli["out"] == Path(config.out_dir)
    assert cli["eval_instances"] == held.instances
    assert cli["holdout"] is None and held.holdout_recipes == ()
    evaluate = cli_defaults(train_evaluate, {"instances": "instances", "ccrs": "ccrs"})
    assert evaluate["instances"] == held.instances and ccrs_of(evaluate["ccrs"]) == config.ccrs


def test_the_dqn_cli_defaults_are_the_configs() -> None:
    options = {
        "steps": "total_steps",
        "learning_starts": "learning_starts",
        "seed": "seed",
        "validation": "validation_streams",
    }
    assert set(inspect.signature(train_dqn).parameters) == set(options) | {"out", "as_json"}
    config = DQNConfig()
    assert cli_defaults(train_dqn, options) == {f: getattr(config, f) for f in options.values()}
    assert cli_defaults(train_dqn, {"out": "out"})["out"] == Path(config.out_dir)


def test_every_held_out_dqn_and_decima_field_has_a_docstring() -> None:
    assert undocumented_fields(HeldOutEvaluation) == set()
    assert undocumented_fields(DQNConfig) == set()
    assert undocumented_fields(DecimaTraining) == set()


def test_the_decima_cli_defaults_are_the_configs() -> None:
    options = {"steps": "steps", "seed": "seed"}
    assert set(inspect.signature(train_decima).parameters) == set(options) | {"out", "as_json"}
    config = DecimaTraining()
    assert cli_defaults(train_decima, options) == {f: getattr(config, f) for f in options.values()}
    assert cli_defaults(train_decima, {"out": "out"})["out"] == CHECKPOINT


def test_no_wall_clock_cap_unless_asked() -> None:
    long_ago = time.monotonic() - 10 * 60
    assert TrainConfig().budget_minutes is None
    assert not TrainConfig().past_wall_clock_cap(long_ago)
    assert TrainConfig(budget_minutes=5).past_wall_clock_cap(long_ago)
    assert not TrainConfig(budget_minutes=60).past_wall_clock_cap(long_ago)
