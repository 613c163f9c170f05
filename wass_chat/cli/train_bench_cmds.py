"""``wass-chat train bench``: how long the learned schedulers take to decide, and what
retrieval and policy-lookahead cost, on this machine."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from wass_chat.cli.output import console, emit


def train_bench(
    workflow: str = typer.Option("demo:genomics-49", help="Workflow file or demo:<name>."),
    kb_dir: Path = typer.Option(None, "--kb", help="Knowledge base (default: WASS_HOME/kb)."),
    lookahead_recipe: str = typer.Option("montage", help="Recipe of the lookahead's workflow."),
    lookahead_tasks: int = typer.Option(
        200, help="Tasks of the workflow policy-lookahead plans (seed 0); 0 skips it."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Inference latency: per decision (the PPO policy's and the DQN's), client-side encode +
    retrieve per workflow, and the time policy-lookahead takes to plan a 200-task workflow
    (wall and CPU seconds)."""
    import time

    import numpy as np

    from kb.demo import ensure_demo_kb
    from kb.store import KnowledgeBase
    from policy.learned.dqn_agent import load_dqn_net
    from policy.learned.latency import dqn_decision_ms, measure_latency
    from policy.learned.lookahead import time_plan
    from policy.learned.planner import load_policy_net
    from sim.demo import demo_platform, resolve_workflow
    from sim.errors import InputError
    from sim.generators import generate_workflow
    from wass_chat.config import settings

    if lookahead_tasks < 0:
        raise InputError("--lookahead-tasks", ["give a task count, or 0 to skip the lookahead"])
    wf, pf = resolve_workflow(workflow), demo_platform()
    net = load_policy_net()
    searched = None
    if lookahead_tasks:
        searched = generate_workflow(lookahead_recipe, lookahead_tasks, seed=0)
    report = measure_latency(net, wf, pf)
    dqn_p50, dqn_p95 = dqn_decision_ms(load_dqn_net(), wf, pf)
    directory = kb_dir or settings().kb_dir
    ensure_demo_kb(directory)
    kb = KnowledgeBase(directory)
    kb.query(wf, pf, 5)  # warm
    retrieve = []
    for _ in range(20):
        start = time.perf_counter()
        kb.query(wf, pf, 5)
        retrieve.append(time.perf_counter() - start)
    data: dict[str, Any] = {
        **asdict(report),
        "workflow": wf.name,
        "tasks": len(wf),
        "nodes": len(pf),
        "retrieve_p50_ms": float(np.median(retrieve) * 1e3),
        "encode_plus_retrieve_ms": report.encode_ms + float(np.median(retrieve) * 1e3),
        "dqn_decision_p50_ms": dqn_p50,
        "dqn_decision_p95_ms": dqn_p95,
    }
    if searched is not None:
        data["lookahead_workflow"] = searched.name
        data["lookahead_tasks"] = len(searched)
        data.update(time_plan(net, searched, pf))
    emit(data, as_json, _render_train_bench)


def _render_train_bench(d: dict[str, Any]) -> None:
    console.print(
        f"{d['workflow']} ({d['tasks']} tasks, {d['nodes']} nodes): per decision p50 "
        f"{d['decision_p50_ms']:.3f} ms (p95 {d['decision_p95_ms']:.3f}), head alone "
        f"{d['head_p50_ms']:.3f} ms; encode {d['encode_ms']:.1f} ms + retrieve "
        f"{d['retrieve_p50_ms']:.1f} ms = {d['encode_plus_retrieve_ms']:.1f} ms; dqn per "
        f"decision p50 {d['dqn_decision_p50_ms']:.3f} ms (p95 {d['dqn_decision_p95_ms']:.3f})"
    )
    if "lookahead_s" in d:
        console.print(
            f"policy-lookahead plan, {d['lookahead_workflow']} ({d['lookahead_tasks']} tasks, "
            f"{d['nodes']} nodes, {d['lookahead_simulations']} rollouts): "
            f"{d['lookahead_s']:.2f} s wall, {d['lookahead_cpu_s']:.2f} s CPU "
            f"(goal {d['lookahead_target_s']:.0f} s)"
        )
