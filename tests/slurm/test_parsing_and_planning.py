"""Pure parts of the Slurm area: parsers, platform from records, sbatch argv, the run log."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.errors import PlatformError
from tests.slurm.conftest import layered_workflow
from tests.slurm.plugin_cases import CLUSTER
from wass_chat.runlog import RunLog, UnknownRunError
from wass_chat.slurm.commands import parse_parsable, parse_scontrol_record, scontrol_records
from wass_chat.slurm.nodes import gpu_count, platform_from_records, state_flags
from wass_chat.slurm.submission import plan_submission

# Slurm 26.05's `scontrol --oneliner show job` of a job submitted with a two-line --wrap (taken
# from the local cluster): the newline is printed as is, and Comment and StdOut come after it
WRAPPED_JOB = (
    Path(__file__).parent / "data" / "slurm-26.05" / "scontrol-oneliner-show-job-multiline-wrap.txt"
).read_text()
NODE = (
    "NodeName=n4 Arch=x86_64 CPUTot=8 CPUEfctv=8 AvailableFeatures=large,fast Gres=gpu:a100:2(S:0) "
    "RealMemory=8000 State=IDLE+DRAIN Partitions=debug Reason=disk failed [root@2026-01-01]"
)


def test_scontrol_record_keeps_values_with_spaces() -> None:
    record = parse_scontrol_record(NODE)
    assert record["Reason"] == "disk failed [root@2026-01-01]"
    assert record["CPUEfctv"] == "8" and gpu_count(record["Gres"]) == 2
    assert state_flags("IDLE+DRAIN") == {"IDLE", "DRAIN"}
    assert "NOT_RESPONDING" in state_flags("IDLE*")


def test_drained_nodes_are_excluded_with_their_reason() -> None:
    ok = parse_scontrol_record(NODE.replace("n4", "n3").replace("IDLE+DRAIN", "MIXED"))
    found = platform_from_records([parse_scontrol_record(NODE), ok], "debug")
    assert found.platform.node_names == ("n3",)
    assert found.platform.nodes[0].features == ("large", "fast")
    assert [(e.name, e.reason) for e in found.excluded] == [("n4", "disk failed [root@2026-01-01]")]
    with pytest.raises(PlatformError, match="no usable node"):
        platform_from_records([parse_scontrol_record(NODE)], "debug")


def test_parsable_rows_tolerate_pipes_in_the_last_field() -> None:
    rows = parse_parsable("1|a|x|y\nbroken\n", ("JobID", "JobName", "Comment"))
    assert rows == [{"JobID": "1", "JobName": "a", "Comment": "x|y"}]


def test_plan_pins_each_task_and_waits_for_its_parents(tmp_path: Path) -> None:
    wf = layered_workflow("p", (2, 3), (1.0, 2.0))
    plan = plan_submission(wf, CLUSTER, "heft", "run1", tmp_path, scale=0.5)
    by_task = {j.task: j for j in plan.jobs}
    for task in wf.tasks:
        argv = by_task[task.id].argv({p: f"9{i}" for i, p in enumerate(wf.parents[task.id])})
        assert "-N1" in argv and f"--nodelist={by_task[task.id].node}" in argv
        assert f"--cpus-per-task={task.cores}" in argv
        comment = argv[argv.index("--comment") + 1]
        assert comment == f"wass:v1:run=run1;task={task.id};node={by_task[task.id].node}"
        if wf.parents[task.id]:
            deps = [a for a in argv if a.startswith("--dependency=afterok:")]
            assert deps and deps[0].count(":") == len(wf.parents[task.id])
    ordered = [j.task for j in plan.jobs]
    assert all(ordered.index(p) < ordered.index(t) for t in ordered for p in wf.parents[t])
    assert plan.planned_makespan == pytest.approx(plan.predicted.makespan)


def test_run_log_round_trip(tmp_path: Path) -> None:
    wf = layered_workflow("p", (2, 2), (1.0, 2.0))
    plan = plan_submission(wf, CLUSTER, "heft", "r1", tmp_path)
    log = RunLog(tmp_path / "runs")
    log.create(
        "p", str(tmp_path / "p.json"), {"name": "x"}, "heft", 3.0, plan.decisions, run_id="r1"
    )
    log.update_states("r1", {plan.decisions[0].task: {"state": "RUNNING", "real_node": "n1"}})
    again = log.get("r1")
    assert again.decisions[0].state == "RUNNING" and again.decisions[1].state == "PLANNED"
    assert again.decisions[0].alternatives == plan.decisions[0].alternatives
    assert [r.run_id for r in log.list_runs()] == ["r1"]
    with pytest.raises(UnknownRunError):
        log.get("nope")


def test_a_record_with_a_newline_in_a_value_stays_one_record() -> None:
    text = WRAPPED_JOB + WRAPPED_JOB.replace("JobId=291", "JobId=292")
    first, second = scontrol_records(text)
    assert first["JobId"] == "291" and second["JobId"] == "292"
    assert first["Comment"] == "wass:v1:run=r1;task=t1;node=n2"
    assert first["StdOut"] == "/work/main/slurm-291.out"
    assert first["JobState"] == "PENDING" and first["Reason"] == "JobHeldUser"
