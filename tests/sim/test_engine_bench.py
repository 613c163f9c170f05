"""The speed goal's headline figure that `wass-chat sim bench` prints (sim.engine_bench)."""

from __future__ import annotations

from sim import fast
from sim.engine_bench import DYNAMIC_TARGET_MS, dynamic_headline


def _row(workflow: str, mode: str, model: str, wall: float, cpu: float) -> dict[str, object]:
    return {
        "workflow": workflow,
        "mode": mode,
        "network_model": model,
        "median_ms": wall,
        "median_cpu_ms": cpu,
    }


def test_the_headline_is_the_slowest_dynamic_fair_run_by_cpu_time() -> None:
    rows = [
        _row("a", "dynamic eft", "fair", wall=900.0, cpu=100.0),  # slow wall: a loaded machine
        _row("b", "dynamic eft", "fair", wall=300.0, cpu=250.0),
        _row("b", "dynamic eft", "ideal", wall=999.0, cpu=999.0),  # not the fair network
        _row("c", "static replay", "fair", wall=999.0, cpu=999.0),  # not a dynamic run
    ]
    with fast.engine("python"):
        headline = dynamic_headline(rows)
    assert headline == {
        "engine": "python",
        "dynamic_workflow": "b",
        "dynamic_ms": 300.0,
        "dynamic_cpu_ms": 250.0,
        "dynamic_target_ms": DYNAMIC_TARGET_MS,
    }
