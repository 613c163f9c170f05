"""Run a static schedule on SimGrid instead of our engine, to cross-check the simulator.

SimGrid permits one engine per process and aborts the process on a second, so each call runs
``python -m sim.simgrid_backend`` in a subprocess: the job goes in as JSON on stdin, the records
come back as JSON on stdout (see :mod:`sim.simgrid_replay` for the SimGrid side and how our model
maps onto it). The calling process, a test run or the CLI, never loads SimGrid itself.

Dynamic schedulers are replayed through the static schedule they realised natively
(:meth:`sim.schedule.SimResult.to_schedule`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.compiled import compile_platform, compile_workflow
from sim.engine import check_static_input
from sim.errors import ServiceUnavailable
from sim.model import Platform, Workflow
from sim.schedule import (
    SHARED_FS,
    NetworkModel,
    SimResult,
    StaticSchedule,
    TaskRecord,
    TransferRecord,
)

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def simgrid_available() -> bool:
    """Whether SimGrid's Python bindings can be imported (without importing them here)."""
    return importlib.util.find_spec("simgrid") is not None


@dataclass(frozen=True)
class SimGridRun:
    """A SimGrid replay: its result and the wall time SimGrid took (platform set-up + run)."""

    result: SimResult
    wall_seconds: float


def simulate_simgrid(
    workflow: Workflow,
    platform: Platform,
    schedule: StaticSchedule,
    network_model: NetworkModel = "fair",
    timeout: float = 900.0,
) -> SimResult:
    """Replay ``schedule`` on SimGrid; the result has ``backend="simgrid"``."""
    return run_simgrid(workflow, platform, schedule, network_model, timeout).result


def run_simgrid(
    workflow: Workflow,
    platform: Platform,
    schedule: StaticSchedule,
    network_model: NetworkModel = "fair",
    timeout: float = 900.0,
) -> SimGridRun:
    """Replay ``schedule`` on SimGrid in a subprocess; also report SimGrid's own wall time."""
    check_static_input(workflow, platform, schedule, network_model)
    if not simgrid_available():
        raise ServiceUnavailable(
            "SimGrid's Python bindings are not importable: install Debian's python3-simgrid "
            "and run scripts/link-simgrid .venv"
        )
    job = encode_job(workflow, platform, schedule, network_model)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(_PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "sim.simgrid_backend"],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ServiceUnavailable(f"SimGrid replay took longer than {timeout:.0f} s") from exc
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"SimGrid replay failed (exit {proc.returncode}): {tail}")
    return decode_run(json.loads(proc.stdout), workflow, platform, schedule, network_model)


def encode_job(
    workflow: Workflow, platform: Platform, schedule: StaticSchedule, network_model: NetworkModel
) -> dict[str, Any]:
    """The replay job as plain JSON-able data, with tasks, files and nodes as indices."""
    wf, pf = compile_workflow(workflow), compile_platform(platform)
    return {
        "network_model": network_model,
        "latency": pf.latency,
        "shared_fs_bandwidth": pf.fs_bandwidth,
        "nodes": [
            {
                "cores": pf.cores[n],
                "speed": pf.speed[n],
                "memory": pf.memory[n],
                "gpus": pf.gpus[n],
                "bandwidth": pf.bandwidth[n],
            }
            for n in range(pf.n_nodes)
        ],
        "file_size": list(wf.file_size),
        "tasks": [
            {
                "work": wf.work[i],
                "cores": wf.cores[i],
                "memory": wf.memory[i],
                "gpus": wf.gpus[i],
                "node": pf.node_index[schedule.assignment[wf.task_ids[i]]],
                "parents": list(wf.parents[i]),
                "inputs": list(wf.inputs[i]),
                "outputs": list(wf.outputs[i]),
            }
            for i in range(wf.n_tasks)
        ],
        "order": [[wf.task_index[t] for t in schedule.order.get(name, ())] for name in pf.names],
    }


def decode_run(
    output: dict[str, Any],
    workflow: Workflow,
    platform: Platform,
    schedule: StaticSchedule,
    network_model: NetworkModel,
) -> SimGridRun:
    """Turn the replay's index-based records back into a :class:`SimResult`."""
    wf, pf = compile_workflow(workflow), compile_platform(platform)
    end_of = {int(task): end for task, _, end in output["tasks"]}
    records = []
    for task, start, end in output["tasks"]:
        i = int(task)
        ready = max((end_of[p] for p in wf.parents[i]), default=0.0)
        node = pf.names[pf.node_index[schedule.assignment[wf.task_ids[i]]]]
        records.append(TaskRecord(wf.task_ids[i], node, ready, start, end))
    transfers = []
    for file, source, destination, start, end in output["transfers"]:
        f, s, d = int(file), int(source), int(destination)
        transfers.append(
            TransferRecord(
                wf.file_ids[f],
                wf.file_size[f],
                SHARED_FS if s < 0 else pf.names[s],
                pf.names[d],
                start,
                end,
            )
        )
    result = SimResult.from_records(
        workflow,
        platform,
        schedule.scheduler or "static",
        network_model,
        tuple(records),
        tuple(transfers),
        backend="simgrid",
    )
    return SimGridRun(result, float(output["wall_seconds"]))


def main() -> int:
    """Subprocess entry point: one job on stdin, its records on stdout."""
    from sim.simgrid_replay import replay

    job = json.load(sys.stdin)
    json.dump(replay(job), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
