"""Streams of workflows and GPU types: the model, its files, and both engines honouring them.

A stream is one merged workflow whose tasks carry their workflow's arrival (``release``); the
simulator starts no task before it and reads a late workflow's inputs only from then on. GPU
types give GPU tasks their own speed; a task preferring a GPU takes one only where there are.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from policy.heft import HEFT
from policy.validate import validate_schedule
from sim import fast
from sim.arrivals import (
    Arrival,
    Stream,
    StreamError,
    StreamSpec,
    arrival_batches,
    merge_stream,
    poisson_stream,
    poisson_times,
    read_trace,
    with_gpu_tasks,
)
from sim.engine import simulate
from sim.errors import PlatformError, WorkflowError
from sim.generators import generate_workflow
from sim.metrics import critical_path_bound, stream_summary
from sim.model import (
    REFERENCE_SPEED,
    File,
    GpuType,
    Node,
    Platform,
    Task,
    Workflow,
    compute_time,
    gpus_used,
)
from sim.placement import EarliestFinishPlacement
from sim.platforms import (
    GPU_TYPES,
    dumps_platform,
    generate_platform,
    gpu_cluster_spec,
    loads_platform,
)
from sim.schedule import SHARED_FS, NetworkModel
from sim.wfformat import dumps_workflow, read_workflow
from tests.support import require

A100 = GpuType("a100", 20 * REFERENCE_SPEED)


def _gpu_platform() -> Platform:
    return Platform(
        "mixed",
        (
            Node("cpu", 4, speed=REFERENCE_SPEED),
            Node("gpu", 4, speed=REFERENCE_SPEED, gpus=1, gpu_type=A100),
        ),
    )


def test_a_gpu_task_computes_at_its_gpu_types_speed_and_a_preferring_one_only_where_gpus_are() -> (
    None
):
    cpu, gpu = _gpu_platform().nodes
    needs = Task("needs", 40 * REFERENCE_SPEED, gpus=1)
    prefers = Task("prefers", 40 * REFERENCE_SPEED, cores=2, prefers_gpu=True)
    plain = Task("plain", 40 * REFERENCE_SPEED, cores=2)
    assert compute_time(needs, gpu) == 2.0  # 40 Gflop on one 20 Gf device
    assert (compute_time(prefers, cpu), compute_time(prefers, gpu)) == (20.0, 2.0)
    assert (gpus_used(prefers, cpu), gpus_used(prefers, gpu)) == (0, 1)
    assert compute_time(plain, gpu) == 20.0 and gpus_used(plain, gpu) == 0
    untyped = replace(gpu, gpu_type=None)
    assert compute_time(needs, untyped) == 40.0  # no type: the cores, as before GPU types


def test_bad_gpu_types_and_releases_are_refused_with_every_problem() -> None:
    with pytest.raises(PlatformError) as caught:
        Platform("p", (Node("a", 1, gpu_type=A100), Node("b", 1, gpus=1, gpu_type=GpuType("x", 0))))
    text = str(caught.value)
    assert "'a' has GPU type 'a100' but no GPUs" in text and "'x' has speed 0" in text
    with pytest.raises(WorkflowError, match="release time -1"):
        Workflow("w", (Task("t", 1.0, release=-1.0),), ())


def test_gpu_preference_and_release_round_trip_through_wfformat_and_platform_files(
    tmp_path: Path,
) -> None:
    stream = poisson_stream(StreamSpec(count=3, tasks=(4, 6)), seed=1)
    merged = merge_stream(stream)
    assert any(t.prefers_gpu for t in merged.tasks) and any(t.release > 0 for t in merged.tasks)
    path = tmp_path / "stream.json"
    path.write_text(dumps_workflow(merged))
    assert read_workflow(path) == merged
    platform = generate_platform(gpu_cluster_spec(8), seed=2)
    assert {n.gpu_type for n in platform.nodes if n.gpus} <= set(GPU_TYPES)
    assert loads_platform(dumps_platform(platform)) == platform


def test_a_platform_file_needs_both_gpu_keys() -> None:
    text = "name: p\nnodes:\n  - {name: a, cores: 2, gpus: 1, gpu_type: t4}\n"
    with pytest.raises(PlatformError, match="'gpu_type' needs 'gpu_speed'"):
        loads_platform(text)
    ok = loads_platform(text.replace("gpu_type: t4", "gpu_type: t4, gpu_speed: 8.1Gf"))
    assert ok.nodes[0].gpu_type == GpuType("t4", 8.1e9)


def _two_arrivals() -> Workflow:
    """A two-task pipeline arriving at 0 and again at 100 s (its input 1 GB on the FS)."""
    files = (File("in", 10**9), File("mid", 10**9))
    tasks = (
        Task("a", 10 * REFERENCE_SPEED, inputs=("in",), outputs=("mid",)),
        Task("b", 10 * REFERENCE_SPEED, inputs=("mid",)),
    )
    wf = Workflow("pipe", tasks, files)
    return merge_stream(Stream("two", (Arrival(0.0, wf), Arrival(100.0, wf))))


@pytest.mark.parametrize("engine", ["python", "compiled"])
@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_no_task_starts_and_no_input_moves_before_its_workflow_arrives(
    engine: str, mode: str
) -> None:
    if engine == "compiled":
        require(fast.AVAILABLE, "sim._core is not built (make setup)")
    merged = _two_arrivals()
    platform = Platform("one", (Node("n", 1, bandwidth=1e9),), shared_fs_bandwidth=1e9)
    scheduler = HEFT().schedule(merged, platform) if mode == "static" else EarliestFinishPlacement()
    with fast.engine(engine):
        result = simulate(merged, platform, scheduler, "ideal")
    late = result.record_by_task["w001/a"]
    assert late.start == pytest.approx(100.0 + 1.0 + 1e-5)  # the 1 GB read starts at arrival
    assert late.ready == 100.0
    reads = [t for t in result.transfers if t.source == SHARED_FS and t.file == "w001/in"]
    assert [t.start for t in reads] == [100.0]
    assert validate_schedule(merged, platform, result) == []


def test_the_validator_names_a_start_before_release_and_oversubscribed_gpus() -> None:
    merged = _two_arrivals()
    platform = Platform("one", (Node("n", 2, bandwidth=1e9, gpus=1),), shared_fs_bandwidth=1e9)
    result = simulate(merged, platform, HEFT().schedule(merged, platform), "ideal")
    early = replace(
        result,
        tasks=tuple(
            replace(r, start=r.start - 100.0, end=r.end - 100.0) if r.task == "w001/a" else r
            for r in result.tasks
        ),
    )
    assert any("before its release at 100" in p for p in validate_schedule(merged, platform, early))
    gpu = replace(merged, tasks=tuple(replace(t, gpus=1) for t in merged.tasks))
    a = result.record_by_task["w000/a"]
    together = replace(
        result,
        tasks=tuple(
            replace(r, start=a.start + 5.0, end=a.end + 5.0) if r.task == "w000/b" else r
            for r in result.tasks
        ),
    )
    assert any("uses 2 GPUs > 1" in p for p in validate_schedule(gpu, platform, together))


def test_gpu_tasks_never_exceed_a_nodes_gpus_and_run_their_model_duration() -> None:
    rng = np.random.default_rng(3)
    wf = with_gpu_tasks(generate_workflow("fork-join", 12, seed=3), rng, need=0.5, prefer=0.5)
    platform = _gpu_platform()
    for scheduler in (HEFT().schedule(wf, platform), EarliestFinishPlacement()):
        result = simulate(wf, platform, scheduler, "fair")
        assert validate_schedule(wf, platform, result) == []
        on_gpu = [r for r in result.tasks if r.node == "gpu"]
        assert on_gpu and all(
            r.end - r.start == pytest.approx(compute_time(wf.task_by_id[r.task], platform.nodes[1]))
            for r in on_gpu
        )


def _stream_instances() -> list[tuple[Workflow, Platform]]:
    instances = []
    for seed in range(4):
        spec = StreamSpec(count=4 + 2 * seed, window=300.0 * seed, tasks=(3, 12), ccr=0.3)
        platform = generate_platform(gpu_cluster_spec(4 + seed), seed=seed)
        instances.append((merge_stream(poisson_stream(spec, seed)), platform))
    return instances


@pytest.mark.parametrize("model", ["fair", "ideal"])
def test_streams_with_gpu_types_give_the_same_records_on_both_engines(model: NetworkModel) -> None:
    require(fast.AVAILABLE, "sim._core is not built (make setup)")
    for merged, platform in _stream_instances():
        runs = []
        for kind in ("python", "compiled"):
            with fast.engine(kind):
                dynamic = simulate(merged, platform, EarliestFinishPlacement(), model)
                static = simulate(merged, platform, HEFT().schedule(merged, platform), model)
            runs.append((dynamic, static))
        assert runs[0] == runs[1], (merged.name, model)
        for result in runs[0]:
            assert validate_schedule(merged, platform, result) == []


def test_arrival_batches_are_what_arrived_when() -> None:
    merged = _two_arrivals()
    assert arrival_batches(merged) == [(0.0, ("w000/a", "w000/b")), (100.0, ("w001/a", "w001/b"))]
    assert arrival_batches(generate_workflow("chain", 3, seed=0))[0][0] == 0.0


def test_poisson_arrivals_start_at_zero_and_average_the_window() -> None:
    times = poisson_times(2001, 1000.0, np.random.default_rng(0))
    assert times[0] == 0.0 and list(times) == sorted(times)
    assert times[-1] == pytest.approx(1000.0, rel=0.1)
    with pytest.raises(StreamError, match="at least one arrival"):
        poisson_times(0, 10.0, np.random.default_rng(0))


def test_stream_metrics_count_each_workflow_from_its_arrival() -> None:
    merged = _two_arrivals()
    platform = Platform(
        "two", (Node("n", 1, bandwidth=1e9), Node("m", 1, bandwidth=1e9)), shared_fs_bandwidth=1e9
    )
    result = simulate(merged, platform, HEFT().schedule(merged, platform), "ideal")
    summary = stream_summary(result, merged, platform)
    assert summary["workflows"] == 2
    assert summary["makespan"] == result.makespan
    # each pipeline: a 1 s read, then 20 s of compute on a critical path of 20 s
    assert summary["mean_response"] == pytest.approx(21.0 + 2e-5)
    assert summary["slr"] == pytest.approx((21.0 + 2e-5) / 20.0)
    assert critical_path_bound(merged, platform) == 120.0
    assert math.isclose(summary["stream_slr"], result.makespan / 120.0)


def test_a_trace_replays_its_arrivals_and_names_every_bad_row(tmp_path: Path) -> None:
    (tmp_path / "wf.json").write_text(dumps_workflow(generate_workflow("chain", 3, seed=0)))
    trace = tmp_path / "trace.csv"
    trace.write_text("time,workflow\n0,wf.json\n12.5,demo:fork-join-20\n")
    stream = read_trace(trace)
    assert [a.time for a in stream.arrivals] == [0.0, 12.5]
    assert len(stream.arrivals[1].workflow.tasks) == 20
    trace.write_text("time,workflow\nsoon,wf.json\n3,missing.json\n")
    with pytest.raises(StreamError) as caught:
        read_trace(trace)
    assert "line 2: time 'soon' is not a number" in str(caught.value)
    assert "line 3" in str(caught.value)
