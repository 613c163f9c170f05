"""Ranking maths against the published example of Topcuoglu et al. (2002), Fig. 2 / Table 1."""

from __future__ import annotations

import pytest

from policy.cpop import critical_path
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow
from sim.ranks import communication_means, downward_rank, upward_rank

# Computation costs of tasks n1..n10 on P1, P2, P3 (Table 1 of the paper).
COSTS = [
    (14, 16, 9),
    (13, 19, 18),
    (11, 13, 19),
    (13, 8, 17),
    (12, 13, 10),
    (13, 16, 9),
    (7, 15, 11),
    (5, 11, 14),
    (18, 12, 20),
    (21, 7, 16),
]
# Communication costs on the edges of Fig. 2.
EDGES = {
    (1, 2): 18,
    (1, 3): 12,
    (1, 4): 9,
    (1, 5): 11,
    (1, 6): 14,
    (2, 8): 19,
    (2, 9): 16,
    (3, 7): 23,
    (4, 8): 27,
    (4, 9): 23,
    (5, 9): 13,
    (6, 8): 15,
    (7, 10): 17,
    (8, 10): 11,
    (9, 10): 13,
}
PUBLISHED_UPWARD = [108.0, 77.0, 80.0, 80.0, 69.0, 63.333, 42.667, 35.667, 44.333, 14.667]


def topcuoglu_example() -> tuple[Workflow, Platform]:
    """The example on three identical nodes with each task's *mean* cost as its work.

    Ranks only use mean costs, so they match the paper's unrelated-machine table exactly;
    communication: 1 GB/s NICs, zero latency, edge size = published cost in GB.
    """
    files = tuple(File(f"e{a}_{b}", c * 10**9) for (a, b), c in EDGES.items())
    tasks = tuple(
        Task(
            id=f"n{i}",
            work=sum(COSTS[i - 1]) / 3 * REFERENCE_SPEED,
            inputs=tuple(f"e{a}_{b}" for (a, b) in EDGES if b == i),
            outputs=tuple(f"e{a}_{b}" for (a, b) in EDGES if a == i),
        )
        for i in range(1, 11)
    )
    platform = Platform("p3", tuple(Node(f"P{k}", 1, bandwidth=1e9) for k in (1, 2, 3)), 0.0)
    return Workflow("topcuoglu", tasks, files), platform


def test_upward_ranks_match_the_published_values() -> None:
    workflow, platform = topcuoglu_example()
    rank = upward_rank(workflow, platform)
    assert [round(rank[f"n{i}"], 3) for i in range(1, 11)] == PUBLISHED_UPWARD


def test_critical_path_is_n1_n2_n9_n10_with_length_108() -> None:
    workflow, platform = topcuoglu_example()
    up, down = upward_rank(workflow, platform), downward_rank(workflow, platform)
    priority = {t: up[t] + down[t] for t in up}
    assert critical_path(workflow, priority) == ["n1", "n2", "n9", "n10"]
    for task in ("n1", "n2", "n9", "n10"):
        assert priority[task] == pytest.approx(108.0)
    assert down["n1"] == 0.0
    assert down["n2"] == pytest.approx(13.0 + 18.0)  # w(n1) + c(n1, n2)


def test_saga_pair_convention_shrinks_mean_communication() -> None:
    _, platform = topcuoglu_example()
    distinct = communication_means(platform, "distinct").time(10**9)
    saga = communication_means(platform, "saga").time(10**9)
    assert distinct == pytest.approx(1.0)
    assert saga == pytest.approx(1.0 * (3 - 1) / (3 + 1))


def test_eft_ranks_ready_tasks_with_the_papers_upward_rank() -> None:
    """The simulator's own ``eft`` baseline (every "over eft" figure) orders ready tasks by
    :func:`sim.ranks.upward_rank`: a GPU task's mean compute time on its GPUs over the nodes
    that can host it, the mean edge time of its largest file. The old rank (work over the mean
    CPU speed of all nodes) put the GPU task first; on its GPU it is the shorter one."""
    from sim.model import GpuType, compute_time, hosts
    from sim.placement import EarliestFinishPlacement
    from sim.ranks import mean_compute_times

    a100 = GpuType("a100", speed=100 * REFERENCE_SPEED)
    gpu_nodes = tuple(Node(f"g{k}", 4, gpus=1, gpu_type=a100) for k in range(2))
    platform = Platform("mixed", (*gpu_nodes, *(Node(f"c{k}", 4) for k in range(2))))
    tasks = (Task("gpu", work=40 * REFERENCE_SPEED, gpus=1), Task("cpu", work=REFERENCE_SPEED))
    workflow = Workflow("gpu-vs-cpu", tasks, ())
    eft = EarliestFinishPlacement()
    eft.reset(workflow, platform)
    rank = upward_rank(workflow, platform)
    assert {t: eft.priority(t) for t in ("gpu", "cpu")} == rank
    assert rank["cpu"] > rank["gpu"]
    means = mean_compute_times(workflow, platform)
    on_hosts = {t.id: [compute_time(t, n) for n in hosts(t, platform)] for t in workflow.tasks}
    assert means == {task: sum(times) / len(times) for task, times in on_hosts.items()}
    assert means["gpu"] == 0.4 and means["cpu"] == 1.0  # the GPU task on its 2 GPU nodes only
