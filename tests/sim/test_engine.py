"""Hand-computed makespans on tiny instances: every rule of the execution model, one at a time.

Round numbers throughout: 1 Gflop/s cores, 1 GB/s NICs and filesystem, so 1e9 flop takes 1 s and
1e9 bytes take 1 s alone on a link.
"""

from __future__ import annotations

import pytest

from sim.engine import simulate
from sim.model import Task
from sim.schedule import SHARED_FS
from tests.sim.engine_builders import GB, node, pinned, platform, workflow


def test_chain_on_one_node_reads_its_input_then_runs_back_to_back() -> None:
    wf = workflow(
        [Task("a", 2e9, inputs=("in",), outputs=("x",)), Task("b", 3e9, inputs=("x",))],
        {"in": GB, "x": 5 * GB},
    )
    result = simulate(wf, platform(node("n1")), pinned({"a": "n1", "b": "n1"}))
    # 1 s to read "in" from the filesystem, then 2 s + 3 s; "x" never moves.
    assert result.makespan == pytest.approx(6.0)
    moves = [(t.file, t.source, t.destination) for t in result.transfers]
    assert moves == [("in", SHARED_FS, "n1")]
    b = result.record_by_task["b"]
    assert (b.ready, b.start, b.end) == pytest.approx((3.0, 3.0, 6.0))


def test_fork_join_pays_one_transfer_each_way_across_nodes() -> None:
    wf = workflow(
        [
            Task("root", 1e9, outputs=("l", "r")),
            Task("left", 4e9, inputs=("l",), outputs=("lo",)),
            Task("right", 2e9, inputs=("r",), outputs=("ro",)),
            Task("join", 1e9, inputs=("lo", "ro")),
        ],
        {"l": GB, "r": 2 * GB, "lo": GB, "ro": GB},
    )
    sched = pinned({"root": "n1", "left": "n1", "right": "n2", "join": "n1"})
    result = simulate(wf, platform(node("n1"), node("n2"), latency=0.5), sched)
    # right: r moves 0.5 + 2 s after root ends at 1 -> starts 3.5, ends 5.5; ro back: 0.5 + 1.
    # left runs 1..5 on n1; join starts at 7 and ends at 8.
    assert result.record_by_task["right"].start == pytest.approx(3.5)
    assert result.record_by_task["join"].start == pytest.approx(7.0)
    assert result.makespan == pytest.approx(8.0)
    assert result.cross_node_bytes == 3 * GB


@pytest.mark.parametrize(("model", "expected"), [("fair", 2.0), ("ideal", 1.0)])
def test_two_flows_leaving_one_nic_get_half_the_bandwidth_each(model: str, expected: float) -> None:
    wf = workflow(
        [
            Task("src", 0.0, outputs=("x", "y")),
            Task("cx", 0.0, inputs=("x",)),
            Task("cy", 0.0, inputs=("y",)),
        ],
        {"x": GB, "y": GB},
    )
    pf = platform(node("n1"), node("n2"), node("n3"))
    result = simulate(wf, pf, pinned({"src": "n1", "cx": "n2", "cy": "n3"}), model)  # type: ignore[arg-type]
    assert sorted(t.end for t in result.transfers) == pytest.approx([expected, expected])
    assert result.makespan == pytest.approx(expected)


def test_two_flows_entering_one_nic_share_its_downlink_but_not_the_reverse_direction() -> None:
    wf = workflow(
        [
            Task("p1", 0.0, outputs=("x",)),
            Task("p2", 0.0, outputs=("y", "z")),
            Task("c", 0.0, inputs=("x", "y")),
            Task("back", 0.0, inputs=("z",)),
        ],
        {"x": GB, "y": GB, "z": GB},
    )
    pf = platform(node("n1"), node("n2"), node("n3"))
    sched = pinned({"p1": "n1", "p2": "n3", "c": "n2", "back": "n1"})
    result = simulate(wf, pf, sched)
    ends = {(t.file, t.destination): t.end for t in result.transfers}
    # x and y both enter n2 (1 GB/s shared); z leaves n3 towards n1 alongside y on n3's uplink.
    # Max-min: n2's downlink (2 flows) and n3's uplink (2 flows) both give 0.5 GB/s; x, y, z all
    # run at 0.5 GB/s and end at 2 s.
    assert ends[("x", "n2")] == pytest.approx(2.0)
    assert ends[("y", "n2")] == pytest.approx(2.0)
    assert ends[("z", "n1")] == pytest.approx(2.0)


def test_max_min_gives_a_flow_the_bandwidth_its_neighbours_cannot_use() -> None:
    # Three flows into n3 (1/3 GB/s each); n2 also sends to n4, so n2's uplink carries one slow
    # flow (1/3) and one that takes the remaining 2/3 GB/s.
    wf = workflow(
        [
            Task("p1", 0.0, outputs=("a",)),
            Task("p2", 0.0, outputs=("b", "c")),
            Task("p5", 0.0, outputs=("e",)),
            Task("sink", 0.0, inputs=("a", "b", "e")),
            Task("side", 0.0, inputs=("c",)),
        ],
        {"a": GB, "b": GB, "c": GB, "e": GB},
    )
    pf = platform(*(node(f"n{i}") for i in range(1, 6)))
    sched = pinned({"p1": "n1", "p2": "n2", "p5": "n5", "sink": "n3", "side": "n4"})
    ends = {t.file: t.end for t in simulate(wf, pf, sched).transfers}
    # c: 1 GB at 2/3 GB/s -> 1.5 s. a, b, e: 0.5 GB done by then, the rest at 1/3 -> 3.0 s.
    assert ends["c"] == pytest.approx(1.5)
    assert [ends["a"], ends["b"], ends["e"]] == pytest.approx([3.0, 3.0, 3.0])


def test_shared_filesystem_bandwidth_is_shared_by_concurrent_readers() -> None:
    wf = workflow(
        [Task("a", 0.0, inputs=("i1",)), Task("b", 0.0, inputs=("i2",))], {"i1": GB, "i2": GB}
    )
    pf = platform(node("n1", bandwidth=4e9), node("n2", bandwidth=4e9), fs_bandwidth=1e9)
    result = simulate(wf, pf, pinned({"a": "n1", "b": "n2"}))
    assert [t.end for t in result.transfers] == pytest.approx([2.0, 2.0])
    ideal = simulate(wf, pf, pinned({"a": "n1", "b": "n2"}), "ideal")
    assert [t.end for t in ideal.transfers] == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_latency_is_paid_once_per_transfer_before_the_bytes_move(model: str) -> None:
    wf = workflow(
        [Task("a", 1e9, outputs=("x", "empty")), Task("b", 1e9, inputs=("x", "empty"))],
        {"x": GB, "empty": 0},
    )
    pf = platform(node("n1"), node("n2", bandwidth=0.5e9), latency=0.25)
    result = simulate(wf, pf, pinned({"a": "n1", "b": "n2"}), model)  # type: ignore[arg-type]
    ends = {t.file: t.end for t in result.transfers}
    # The bottleneck is n2's 0.5 GB/s downlink: x takes 0.25 + 2 s after a ends at 1 s.
    assert ends["x"] == pytest.approx(3.25)
    assert ends["empty"] == pytest.approx(1.25)
    assert result.makespan == pytest.approx(4.25)


def test_one_copy_per_file_and_node_serves_every_consumer_there() -> None:
    wf = workflow(
        [
            Task("p", 0.0, outputs=("x",)),
            Task("c1", 1e9, inputs=("x",)),
            Task("c2", 1e9, inputs=("x",)),
        ],
        {"x": GB},
    )
    pf = platform(node("n1"), node("n2", cores=2))
    result = simulate(wf, pf, pinned({"p": "n1", "c1": "n2", "c2": "n2"}))
    assert len(result.transfers) == 1
    assert result.record_by_task["c1"].start == result.record_by_task["c2"].start == 1.0


def test_cores_are_reserved_for_the_whole_run_and_memory_too() -> None:
    tasks = [Task(f"t{i}", 2e9, cores=2) for i in range(3)]
    sched = pinned({t.id: "n1" for t in tasks})
    result = simulate(workflow(tasks, {}), platform(node("n1", cores=4)), sched)
    # Two 2-core tasks at once (1 s each: 2e9 flop over 2 cores), the third after them.
    assert [r.start for r in result.tasks] == pytest.approx([0.0, 0.0, 1.0])
    assert result.makespan == pytest.approx(2.0)
    hungry = [Task(f"m{i}", 1e9, memory=6) for i in range(2)]
    small = platform(node("n1", cores=4, memory=10))
    result = simulate(workflow(hungry, {}), small, pinned({"m0": "n1", "m1": "n1"}))
    assert result.makespan == pytest.approx(2.0)


def test_a_node_starts_tasks_strictly_in_schedule_order() -> None:
    wf = workflow([Task("late", 1e9, inputs=("big",)), Task("free", 1e9)], {"big": 3 * GB})
    pf = platform(node("n1", cores=2))
    result = simulate(wf, pf, pinned({"late": "n1", "free": "n1"}, {"n1": ["late", "free"]}))
    # "free" is ready at 0 and a core is idle, but it is ordered after "late" (inputs at 3 s).
    assert result.record_by_task["free"].start == pytest.approx(3.0)
    assert [r.task for r in result.tasks] == ["late", "free"]


def test_energy_integrates_idle_power_and_busy_fraction() -> None:
    wf = workflow([Task("a", 2e9, cores=1)], {})
    n1 = node("n1", cores=2, power_idle=100.0, power_busy=300.0)
    n2 = node("n2", cores=1, power_idle=50.0, power_busy=60.0)
    result = simulate(wf, platform(n1, n2), pinned({"a": "n1"}))
    # 2 s makespan: n1 idles at 100 W plus 200 W x half its cores for 2 s; n2 idles at 50 W.
    assert result.energy == pytest.approx(100 * 2 + 200 * 0.5 * 2 + 50 * 2)
    assert result.node_busy_core_seconds == pytest.approx({"n1": 2.0, "n2": 0.0})


def test_explicit_control_dependencies_order_tasks_without_data() -> None:
    wf = workflow([Task("a", 1e9), Task("b", 1e9, parents=("a",))], {})
    result = simulate(wf, platform(node("n1"), node("n2")), pinned({"a": "n1", "b": "n2"}))
    assert result.record_by_task["b"].start == pytest.approx(1.0)
    assert result.transfers == ()
