"""The assistant's GPU answers (``gpu_usage``): a job's, a period's and the running jobs', from
the same figures as `wass-chat sacct efficiency`, the report's GPU section and `gpu idle`;
"not recorded" (with the setting that would record it), never 0%, where nothing measured."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.analytics.test_gpu_units import _cache_with, export, gpu_job
from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.gpu_live import LiveGpuJob, held_gpus, run_seconds, sstat_gpu, tres_value
from wass_chat.analytics.gpu_questions import job_facts, live_facts, period_facts
from wass_chat.analytics.gpu_usage import HOW_TO_RECORD, NOT_RECORDED
from wass_chat.answers.checks.answer_check import problems
from wass_chat.answers.kinds import render
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.synth import synthesize

SCONTROL_22_05 = {  # the live cluster's `scontrol --oneliner show job` (Slurm 22.05), abridged
    "JobId": "7",
    "JobState": "RUNNING",
    "UserId": "alice(1001)",
    "Partition": "debug",
    "NodeList": "n4",
    "NumNodes": "1",
    "RunTime": "01:30:00",
    "TRES": "cpu=1,mem=8000M,node=1,billing=1,gres/gpu=1",
    "TresPerNode": "gres:gpu:1",
}


def test_gpus_held_from_tres_or_the_per_node_request():
    assert held_gpus(SCONTROL_22_05) == (1, None)
    typed = {**SCONTROL_22_05, "TRES": "cpu=8,gres/gpu:a100=4,gres/gpu=4,node=1"}
    assert held_gpus(typed) == (4, "a100")
    per_node = {
        **SCONTROL_22_05,
        "TRES": "cpu=2,node=2",
        "NumNodes": "2",
        "TresPerNode": "gres/gpu:h100:2",
    }
    assert held_gpus(per_node) == (4, "h100")
    assert held_gpus({**SCONTROL_22_05, "TRES": "cpu=1,node=1", "TresPerNode": ""}) == (0, None)
    assert run_seconds("1-02:03:04") == 93784 and run_seconds("03:04") == 184


class Printed:
    """Slurm's printed answer to one command (sstat as Slurm 24.05.1+ prints it, NVML on)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.asked: list[list[str]] = []

    def run(self, argv: list[str]) -> str:
        self.asked.append(argv)
        return self.text


def test_sstat_gpuutil_is_read_per_gpu_by_the_version_rule():
    out = (
        "7.extern|1|gres/gpuutil=0|gres/gpuutil=0\n"
        "7.0|2|cpu=00:01:00,gres/gpumem=2G,gres/gpuutil=120,mem=1G|gres/gpuutil=150\n"
    )
    assert tres_value("cpu=00:01:00,gres/gpuutil=120", "gres/gpuutil") == "120"
    runner = Printed(out)
    mean, peak, step, evidence = sstat_gpu(runner, "7", 4, (24, 11, 0)) or (0, 0, "", [])
    assert runner.asked[0][:3] == ["sstat", "-j", "7"]
    assert step == "7.0" and peak == 150
    assert mean == pytest.approx(120 * 2 / 4)  # 24.05.1+: each task sums its 2 GPUs
    assert "TRESUsageInAve gres/gpuutil=120" in evidence[0]
    assert sstat_gpu(Printed("7.0|1|cpu=00:01:00,mem=1G|cpu=00:01:00\n"), "7", 1, None) is None


def _live(**kw) -> LiveGpuJob:
    base = dict(
        job_id="7",
        user="alice",
        partition="gpu",
        nodes="n4",
        gpus=2,
        gpu_type="a100",
        run_time_s=7200,
        start="2026-12-02T10:00:00",
        recorded=True,
        source="sstat",
        utilisation_pct=0.0,
        peak_utilisation_pct=0.0,
        idle=True,
    )
    return LiveGpuJob(**{**base, **kw})


def test_live_answer_names_idle_jobs_and_never_says_0_for_unrecorded_ones():
    facts = live_facts([_live(), _live(job_id="8", utilisation_pct=55.0, idle=False)], 60)
    assert facts["verdict"].startswith("2 running jobs hold 4 GPUs; 1 at 0%: job 7 (1 for over")
    assert not problems(render(dict(facts)), dict(facts))
    blind = live_facts(
        [
            _live(
                recorded=False,
                source=None,
                utilisation_pct=None,
                idle=None,
                peak_utilisation_pct=None,
            )
        ],
        60,
    )
    assert NOT_RECORDED in blind["verdict"] and HOW_TO_RECORD in blind["verdict"]
    assert "0%" not in blind["verdict"] and "0%" not in "".join(blind["lines"])
    assert live_facts([], 60)["verdict"] == "No running job holds a GPU right now."


def test_a_jobs_gpu_answer_quotes_the_efficiency_views_figures():
    jobs = export(*gpu_job("gres/gpumem=30G,gres/gpuutil=240"))
    facts = job_facts(jobs.lazy(), "1")
    assert facts["verdict"] == (
        "Job 1 kept its 4 a100 GPUs at 60.0% on average: 4.80 of 8.00 GPU-hours used, 0.00 at 0%."
    )
    assert facts["jobs"][0]["utilisation_pct"] == 60
    assert not problems(render(dict(facts)), dict(facts))
    unrecorded = export(
        *[
            r.replace("gres/gpumem=30G,gres/gpuutil=240", "mem=1G")
            for r in gpu_job("gres/gpumem=30G,gres/gpuutil=240")
        ]
    )
    blind = job_facts(unrecorded.lazy(), "1")
    assert NOT_RECORDED in blind["verdict"] and "0%" not in blind["verdict"]
    assert "not in the accounting data" in job_facts(jobs.lazy(), "99")["verdict"]


def test_a_periods_gpu_waste_is_the_reports(tmp_path: Path):
    table = synthesize(4000, seed=5, with_steps=True)
    cache = SacctCache(_cache_with(tmp_path, table)).scan()
    facts = period_facts(cache, None, None, "the period")
    a = analyze(cache, compare=False)
    top = a.tables["gpu_waste_by_user"].row(0, named=True)
    assert facts["gpu_wasters"][0]["user"] == top["user"]
    assert f"{top['user']} wasted the most: {top['wasted_gpu_hours']:,.1f}" in facts["verdict"]
    assert a.gpu_use is not None
    assert f"{a.gpu_use.wasted_gpu_hours:,.1f} of" in facts["verdict"]
    assert not problems(render(dict(facts)), dict(facts))
    cpu_only = table.filter(pl.col("partition") != "gpu")
    none = period_facts(SacctCache(_cache_with(tmp_path / "b", cpu_only)).scan(), None, None, "x")
    assert none["verdict"] == "No finished job in x held a GPU."


def test_a_cancel_proposal_shows_evidence_and_command_and_passes_the_checker():
    from wass_chat.analytics.gpu_idle_cancel import NotIdle, cancel_digest, propose_cancel
    from wass_chat.answers.gpu_cancel_plan import render_gpu_cancel_plan

    for _ in range(200):  # each proposal its own random id, so its own digest
        plan = propose_cancel(_live(evidence=["sstat 7.0: TRESUsageInAve gres/gpuutil=0"]), 60)
        answer = render_gpu_cancel_plan(plan)
        assert not problems(answer, plan), (answer, problems(answer, plan))
    assert plan["argv"] == ["scancel", "7"] and "`scancel 7`" in answer
    assert "gres/gpuutil=0" in answer and plan["plan_digest"] == cancel_digest(plan)
    assert cancel_digest({**plan, "start": "2026-12-02T11:00:00"}) != plan["plan_digest"]
    blind = _live(recorded=False, utilisation_pct=None, idle=None, peak_utilisation_pct=None)
    with pytest.raises(NotIdle, match="cannot tell it is idle"):
        propose_cancel(blind, 60)
    with pytest.raises(NotIdle, match="under the 180-minute setting"):
        propose_cancel(_live(), 180)
    with pytest.raises(NotIdle, match=r"at 55\.0%, not idle"):
        propose_cancel(_live(utilisation_pct=55.0, idle=False), 60)
