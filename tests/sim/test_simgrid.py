"""Our engine against SimGrid (real bindings, in a subprocess): same schedule, same makespan."""

from __future__ import annotations

import pytest

from sim.crossval import TARGETS, cases, run_case
from sim.engine import simulate
from sim.model import Task
from sim.simgrid_backend import simgrid_available, simulate_simgrid
from tests.sim.engine_builders import GB, node, pinned, platform, workflow
from tests.support import require

pytestmark = pytest.mark.simgrid


def _require_simgrid() -> None:
    require(simgrid_available(), "SimGrid's Python bindings (python3-simgrid + link-simgrid)")


@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_simgrid_agrees_on_a_shared_nic_and_a_shared_filesystem(model: str) -> None:
    _require_simgrid()
    wf = workflow(
        [
            Task("src", 1e9, inputs=("in1",), outputs=("x", "y")),
            Task("other", 2e9, inputs=("in2",)),
            Task("cx", 1e9, inputs=("x",), cores=2),
            Task("cy", 1e9, inputs=("y",)),
        ],
        {"in1": GB, "in2": 2 * GB, "x": GB, "y": 3 * GB},
    )
    pf = platform(node("n1"), node("n2", cores=2), node("n3", cores=2), latency=1e-3)
    sched = pinned({"src": "n1", "other": "n3", "cx": "n2", "cy": "n3"})
    native = simulate(wf, pf, sched, model)  # type: ignore[arg-type]
    replay = simulate_simgrid(wf, pf, sched, model)  # type: ignore[arg-type]
    assert replay.backend == "simgrid"
    assert replay.placements == native.placements
    assert replay.makespan == pytest.approx(native.makespan, rel=1e-9)
    ends = {(t.file, t.destination): t.end for t in native.transfers}
    for t in replay.transfers:
        assert t.end == pytest.approx(ends[(t.file, t.destination)], rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("case", cases(quick=True), ids=lambda c: c.label)
def test_cross_check_subset_is_within_target(case: object) -> None:
    _require_simgrid()
    row = run_case(case, repeats=1)  # type: ignore[arg-type]
    assert row.transfers > 0 or row.family == "chain"
    assert row.deviation <= TARGETS[row.network_model], row
