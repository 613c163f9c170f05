"""Workload generators: WfCommons recipes and synthetic shapes, deterministic in a seed."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sim.errors import InputError
from sim.generators import RECIPES, SHAPES, generate_workflow
from sim.recipes import generate_recipe, recipe_minimum_tasks
from sim.shapes import ShapeConfig, generate_shape
from sim.wfformat import dumps_workflow, loads_workflow
from sim.workflow_stats import communication_to_computation_ratio, level_widths


@pytest.mark.slow
@pytest.mark.xdist_group("wfcommons")
@pytest.mark.parametrize("recipe", list(RECIPES))
def test_recipe_is_deterministic_bounded_and_round_trips(recipe: str) -> None:
    size = recipe_minimum_tasks(recipe) + 15
    wf = generate_recipe(recipe, size, seed=7)
    assert wf == generate_recipe(recipe, size, seed=7)
    assert len(wf) <= size
    assert len(wf.edge_files) > 0
    assert len({t.category for t in wf.tasks}) > 1
    assert loads_workflow(dumps_workflow(wf)) == wf
    assert loads_workflow(dumps_workflow(wf, "1.5")) == wf


@pytest.mark.slow
@pytest.mark.xdist_group("wfcommons")
def test_recipe_seed_matters_and_global_random_state_is_restored() -> None:
    random.seed(123)
    np.random.seed(123)
    expected_python, expected_numpy = random.random(), np.random.random()
    random.seed(123)
    np.random.seed(123)
    first = generate_recipe("montage", 100, seed=1)
    assert (random.random(), np.random.random()) == (expected_python, expected_numpy)
    assert generate_recipe("montage", 100, seed=2) != first


@pytest.mark.xdist_group("wfcommons")
def test_recipe_below_its_minimum_is_refused_naming_the_minimum() -> None:
    with pytest.raises(InputError, match="montage needs at least 60 tasks"):
        generate_recipe("montage", 30, seed=0)
    with pytest.raises(InputError, match="unknown recipe 'rnaseq'"):
        generate_recipe("rnaseq", 100, seed=0)


@pytest.mark.xdist_group("wfcommons")
def test_recipe_rescaled_to_a_target_ccr() -> None:
    wf = generate_workflow("epigenomics", 60, seed=3, ccr=0.5)
    ratio = communication_to_computation_ratio(wf)
    assert ratio == pytest.approx(0.5, rel=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_is_deterministic_for_a_seed(shape: str) -> None:
    assert generate_shape(shape, None, seed=11) == generate_shape(shape, None, seed=11)
    if shape not in ("genomics", "fan-out", "fan-in", "chain", "fork-join"):
        assert generate_shape(shape, None, seed=11) != generate_shape(shape, None, seed=12)


@pytest.mark.parametrize(
    ("shape", "widths"),
    [
        ("chain", [1] * 10),
        ("fan-out", [1, 9]),
        ("fan-in", [9, 1]),
        ("fork-join", [1, 8, 1]),
    ],
)
def test_shape_structure(shape: str, widths: list[int]) -> None:
    assert level_widths(generate_shape(shape, 10, seed=0)) == widths


def test_genomics_pipeline_has_49_tasks_in_nine_levels() -> None:
    wf = generate_shape("genomics", 49, seed=0)
    assert len(wf) == 49
    assert level_widths(wf) == [1, 12, 12, 12, 1, 8, 1, 1, 1]
    assert wf.input_files.count("reference_genome.fa") == 1
    assert max(t.memory for t in wf.tasks) == 16 * 2**30
    with pytest.raises(InputError, match="exactly 49 tasks"):
        generate_shape("genomics", 50, seed=0)


def test_layered_dag_has_requested_size_and_no_isolated_levels() -> None:
    wf = generate_shape("layered", 60, seed=4)
    assert len(wf) == 60
    assert all(wf.parents[t.id] for t in wf.tasks if not t.id.startswith("L0_"))


@pytest.mark.parametrize("ccr", [0.0, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("shape", ["fan-out", "layered", "genomics"])
def test_shape_hits_the_target_ccr(shape: str, ccr: float) -> None:
    wf = generate_shape(shape, None, seed=2, config=ShapeConfig(ccr=ccr))
    assert communication_to_computation_ratio(wf) == pytest.approx(ccr, rel=1e-6, abs=1e-9)


def test_task_costs_are_log_normal_around_the_mean() -> None:
    wf = generate_shape("fan-out", 2000, seed=0, config=ShapeConfig(mean_runtime=30.0))
    runtimes = np.array([t.runtime for t in wf.tasks])
    assert runtimes.mean() == pytest.approx(30.0, rel=0.05)
    assert np.log(runtimes).std() == pytest.approx(0.5, rel=0.1)


def test_bad_shape_parameters_are_all_reported() -> None:
    with pytest.raises(InputError) as info:
        generate_shape("fork-join", 2, seed=0, config=ShapeConfig(ccr=-1, mean_runtime=0))
    assert len(info.value.problems) == 3
    with pytest.raises(InputError, match="unknown workflow kind 'spiral'"):
        generate_workflow("spiral", 10, seed=0)
