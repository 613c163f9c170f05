"""The compiled core (sim._core via sim.fast) against the pure-Python engine, its specification.

Every test runs the same simulations on both engines and asserts bit-identical results: task
and transfer records, makespan, energy, every answer the view gave a scheduler, and every
rollout of a forked run. Instances are generated (WfCommons recipes, synthetic shapes and random
DAGs with multi-core, memory and GPU tasks, zero-byte and shared files), on homogeneous,
heterogeneous and narrow platforms, both network models, idle and busy clusters.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sim import fast
from sim.core_hash import source_hash
from sim.engine import simulate
from sim.fork import continue_from
from sim.generators import RECIPES, WORKFLOW_KINDS, generate_workflow, recipe_minimum_tasks
from sim.model import File, Node, Platform, Task, Workflow
from sim.occupancy import Hold, Occupancy
from sim.placement import EarliestFinishPlacement
from sim.platforms import ClusterSpec, generate_platform
from sim.schedule import SHARED_FS, ClusterView, NetworkModel, SimResult
from tests.support import require

NETWORKS: tuple[NetworkModel, ...] = ("fair", "ideal")


@pytest.fixture(autouse=True)
def _core_built() -> None:
    require(fast.AVAILABLE, "sim._core is not built (make setup)")


def _both(
    make: Callable[[], Any],
    workflow: Workflow,
    platform: Platform,
    model: NetworkModel,
    occupancy: Occupancy | None = None,
) -> tuple[tuple[SimResult, Any], tuple[SimResult, Any]]:
    """(result, scheduler) of the same simulation on the Python engine, then the compiled one;
    ``make`` builds the scheduler (or the static schedule) afresh for each."""
    runs = []
    for kind in ("python", "compiled"):
        scheduler = make()
        with fast.engine(kind):
            runs.append((simulate(workflow, platform, scheduler, model, occupancy), scheduler))
    return runs[0], runs[1]


def _random_workflow(rng: random.Random, n: int, name: str) -> Workflow:
    """A random DAG: tasks of 1-4 cores, some memory and GPU needs, files of 0 bytes to 5 GB,
    inputs shared between tasks and listed twice."""
    files: dict[str, int] = {f"in{i}": rng.choice([0, 10**6, 10**9, 5 * 10**9]) for i in range(4)}
    tasks = []
    for i in range(n):
        inputs = rng.sample(sorted(files), k=min(len(files), rng.randint(0, 3)))
        if inputs and rng.random() < 0.2:
            inputs.append(inputs[0])
        outputs = [f"t{i}.o{k}" for k in range(rng.randint(0, 2))]
        for f in outputs:
            files[f] = rng.choice([0, 10**5, 10**8, 2 * 10**9])
        tasks.append(
            Task(
                f"t{i}",
                work=rng.uniform(1e9, 5e11),
                cores=rng.choice([1, 1, 2, 4]),
                memory=rng.choice([0, 2**30, 8 * 2**30]),
                gpus=1 if rng.random() < 0.1 else 0,
                inputs=tuple(inputs),
                outputs=tuple(outputs),
            )
        )
    return Workflow(name, tuple(tasks), tuple(File(f, s) for f, s in files.items()))


def _random_platform(rng: random.Random) -> Platform:
    nodes = tuple(
        Node(
            f"n{i}",
            rng.choice([4, 8]),
            speed=rng.choice([1e9, 2.5e9, 3e9]),
            bandwidth=rng.choice([1.25e9, 1e10]),
            memory=32 * 2**30,
            gpus=2 if i == 0 else rng.choice([0, 1]),
        )
        for i in range(rng.randint(2, 7))
    )
    return Platform("random", nodes, latency=rng.choice([0.0, 1e-5]), shared_fs_bandwidth=2e9)


def _instances(count: int) -> Iterator[tuple[Workflow, Platform]]:
    rng = random.Random(18)
    for i in range(count):
        if i % 4 == 3:
            yield _random_workflow(rng, rng.randint(10, 60), f"random-{i}"), _random_platform(rng)
            continue
        kind = WORKFLOW_KINDS[i % len(WORKFLOW_KINDS)]
        ccr = (None, 0.1, 1.0, 10.0)[i % 4]
        size: int | None = rng.randint(30, 120)
        if kind == "genomics":
            size = None  # a fixed 49-task pipeline
        elif kind in RECIPES:
            size = max(rng.randint(30, 120), recipe_minimum_tasks(kind))
        workflow = generate_workflow(kind, size, seed=i, ccr=ccr)
        spec = ClusterSpec(
            nodes=rng.randint(4, 12),
            heterogeneous=i % 2 == 0,
            core_choices=((1, 2), (4, 8, 16, 32))[i % 3 != 0],
            latency=(0.0, 1e-5, 1e-3)[i % 3],
        )
        yield workflow, generate_platform(spec, seed=i)


def _busy(platform: Platform, seed: int) -> Occupancy:
    rng = random.Random(seed)
    holds = [
        Hold(n.name, rng.randint(1, n.cores), rng.uniform(0.0, 50.0))
        for n in platform.nodes
        if rng.random() < 0.4
    ]
    return Occupancy(tuple(holds))


@pytest.mark.slow
def test_idle_and_busy_clusters_give_the_same_records_on_both_engines() -> None:
    compared = 0
    for i, (workflow, platform) in enumerate(_instances(36)):
        for model in NETWORKS:
            occupancy = _busy(platform, i) if i % 2 else None
            (python, _), (compiled, _) = _both(
                EarliestFinishPlacement, workflow, platform, model, occupancy
            )
            assert python == compiled, (workflow.name, platform.name, model)
            schedule = python.to_schedule()
            (replay, _), (fast_replay, _) = _both(
                lambda s=schedule: s, workflow, platform, model, occupancy
            )
            assert replay == fast_replay, (workflow.name, model, "static")
            compared += 2
    assert compared == 36 * 2 * 2


class _Probe:
    """A dynamic scheduler that asks the view every question and records every answer."""

    name = "probe"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.answers: list[Any] = []

    def reset(self, workflow: Workflow, platform: Platform) -> None:
        self.workflow, self.platform = workflow, platform

    def priority(self, task: str) -> float:
        return float(len(self.workflow.children[task]))

    def choose_node(self, task: str, view: ClusterView) -> str:
        t = self.workflow.task_by_id[task]
        nodes = [
            n
            for n in self.platform.nodes
            if t.cores <= n.cores and t.memory <= n.memory and t.gpus <= n.gpus
        ]
        finishes = view.estimate_finish_all(task)
        self.answers.append((view.now, finishes))
        for n in nodes:
            self.answers.append(
                (
                    view.estimate_finish(task, n.name),
                    view.available_time(n.name),
                    view.free_cores(n.name),
                    view.estimate_runtime(task, n.name),
                    view.estimate_transfer(10**9, SHARED_FS, n.name),
                )
            )
        for f in t.inputs:
            self.answers.append((f, view.file_locations(f)))
        for parent in self.workflow.parents[task]:
            self.answers.append(view.task_node(parent))
        extra: Any = view
        self.answers.append(
            (extra.available_times(), extra.free_cores_all(), list(extra.located[0]))
        )
        if self.rng.random() < 0.3:
            return self.rng.choice(nodes).name
        return min(nodes, key=lambda n: finishes[self.platform.nodes.index(n)]).name


@pytest.mark.slow
def test_every_view_answer_is_the_same_on_both_engines() -> None:
    for i, (workflow, platform) in enumerate(_instances(16)):
        for model in NETWORKS:
            (python, probe), (compiled, twin) = _both(
                lambda i=i: _Probe(i), workflow, platform, model, _busy(platform, i)
            )
            assert python == compiled
            assert probe.answers == twin.answers
            assert len(probe.answers) > len(workflow.tasks)


class _Forking(EarliestFinishPlacement):
    """Earliest finish that forks the run at every third decision under a random scheduler."""

    def __init__(self) -> None:
        super().__init__()
        self.rollouts: list[tuple[Any, ...]] = []
        self.decisions = 0

    def choose_node(self, task: str, view: ClusterView) -> str:
        self.decisions += 1
        if self.decisions % 3 == 0:
            other = _Probe(len(self.rollouts))
            rollout = continue_from(view, other)
            self.rollouts.append(
                (
                    rollout.node_of,
                    rollout.started,
                    rollout.start,
                    rollout.replayed_makespan(),
                    other.answers,
                )
            )
        return super().choose_node(task, view)


@pytest.mark.slow
def test_forked_runs_and_their_replays_are_the_same_on_both_engines() -> None:
    for workflow, platform in list(_instances(12))[::2]:
        for model in NETWORKS:
            (python, forking), (compiled, twin) = _both(_Forking, workflow, platform, model)
            assert python == compiled
            assert forking.rollouts == twin.rollouts
            assert forking.rollouts


def test_a_core_built_from_other_sources_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    (tmp_path / "a.c").write_text("int x;")
    before = source_hash(tmp_path)
    (tmp_path / "a.c").write_text("int y;")
    assert source_hash(tmp_path) != before
    monkeypatch.setattr(fast, "source_hash", lambda: "0" * 16)
    with pytest.raises(fast.StaleCoreError, match="rebuild it"):
        fast._load()


def test_records_built_through_the_dataclasses_init_are_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workflow = generate_workflow("montage", 80, seed=5)
    platform = generate_platform(ClusterSpec(nodes=6, heterogeneous=True), seed=5)
    (direct, _), _ = _both(EarliestFinishPlacement, workflow, platform, "fair")
    with fast.engine("compiled"):
        filled = simulate(workflow, platform, EarliestFinishPlacement(), "fair")
    monkeypatch.setattr(fast, "_DIRECT_RECORDS", False)
    with fast.engine("compiled"):
        built = simulate(workflow, platform, EarliestFinishPlacement(), "fair")
    assert direct == filled == built
    assert type(filled.tasks[0]) is type(built.tasks[0])
    assert {hash(r) for r in filled.transfers} == {hash(r) for r in built.transfers}


def test_without_the_core_the_engine_falls_back_to_python_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workflow = generate_workflow("epigenomics", 60, seed=2)
    platform = generate_platform(ClusterSpec(nodes=5, heterogeneous=True), seed=2)
    with fast.engine("compiled"):
        compiled = simulate(workflow, platform, EarliestFinishPlacement(), "fair")
    monkeypatch.setattr(fast, "AVAILABLE", False)
    monkeypatch.setattr(fast, "_enabled", False)
    monkeypatch.setattr(fast, "_warned", False)
    with pytest.warns(RuntimeWarning, match="make setup"):
        python = simulate(workflow, platform, EarliestFinishPlacement(), "fair")
    assert python == compiled
    with pytest.raises(RuntimeError, match="not built"), fast.engine("compiled"):
        pass


class _ForkingEft(EarliestFinishPlacement):
    """Earliest finish that forks the run under itself at its first quarter of decisions."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[float] = []

    def choose_node(self, task: str, view: ClusterView) -> str:
        if len(self._rank) > 4 * len(self.spans):
            self.spans.append(continue_from(view, EarliestFinishPlacement()).replayed_makespan())
        return super().choose_node(task, view)


@pytest.mark.parametrize("model", NETWORKS)
def test_a_forks_replay_starts_from_the_same_holds_as_the_run(model: NetworkModel) -> None:
    workflow = generate_workflow("montage", 80, seed=4)
    platform = generate_platform(ClusterSpec(nodes=6, heterogeneous=True), seed=4)
    span = simulate(workflow, platform, EarliestFinishPlacement(), model).makespan
    # Every node held for a while: the replay cannot match the idle cluster's by chance.
    holds = [Hold(n.name, n.cores, span * (0.2 + 0.05 * i)) for i, n in enumerate(platform.nodes)]
    busy = Occupancy(tuple(holds))
    for kind in ("python", "compiled"):
        forking = _ForkingEft()
        with fast.engine(kind):
            result = simulate(workflow, platform, forking, model, busy)
            replayed = simulate(workflow, platform, result.to_schedule(), model, busy).makespan
            idle = simulate(workflow, platform, result.to_schedule(), model).makespan
        assert forking.spans
        assert set(forking.spans) == {replayed}, kind
        assert replayed != idle
