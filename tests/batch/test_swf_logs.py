"""Real SWF logs (tests/batch/data/swf/README.md says where each comes from): the reader on
their headers and jobs, and the replay against ALCF Theta's recorded waits, whose figures
docs/cluster-whatif.md quotes ("SWF logs")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim.batch.model import UNLIMITED
from sim.batch.swf import read_swf
from sim.errors import InputError
from wass_chat.batch.swf_validation import compare_swf_log, load_swf_log
from wass_chat.cli import main

DATA = Path(__file__).parent / "data" / "swf"
ATLAS = DATA / "LLNL-Atlas-2006-2.1-cln-first160.swf"
THETA = DATA / "ALCF-Theta-2022-11-11-399jobs.swf"


def job_lines(path: Path) -> list[list[str]]:
    """The job lines split by whitespace, read without the reader (an independent count)."""
    lines = path.read_text().splitlines()
    return [line.split() for line in lines if line.strip() and not line.startswith(";")]


def test_atlas_header_and_every_job_line_are_read():
    trace = read_swf(ATLAS)
    lines = job_lines(ATLAS)
    never_ran = [f for f in lines if int(f[3]) < 0 or max(int(f[4]), int(f[7])) <= 0]
    w = trace.workload
    assert len(lines) == 160 and len(never_ran) == 12
    assert len(w) + trace.skipped_no_run == 160 and trace.skipped_no_run == 12
    assert w.job_ids[0] == "1440" and w.job_ids[-1] == "1594"
    assert trace.cluster.nodes[0].cpus == 9216  # MaxProcs, not MaxNodes (1152)
    assert trace.partitions == {1: "pbatch", 2: "pdebug", 3: "pbroke", 4: "moody20"}
    assert trace.header["Note"].startswith("Scheduler is Slurm")
    assert trace.header["Acknowledge"] == "Moe Jette, LLNL"
    assert (w.recorded_start_s == -1).all()  # this log records no waits
    limits = dict(zip(w.job_ids, w.limit_s.tolist(), strict=True))
    assert limits["1440"] == UNLIMITED and limits["1468"] == 1800
    assert w.cpus_per_node.max() == 8696


def test_theta_jobs_keep_their_recorded_waits():
    trace = read_swf(THETA)
    lines = job_lines(THETA)
    w = trace.workload
    assert len(w) == len(lines) == 399 and trace.skipped_no_run == 0
    assert trace.cluster.nodes[0].cpus == 4360
    assert (w.recorded_start_s - w.submit_s).tolist() == [int(f[2]) for f in lines]
    assert w.limit_s.tolist() == [int(f[8]) for f in lines]
    assert sorted(w.cpus_per_node.tolist())[-5:] == [4224] * 5


def test_theta_replay_reproduces_the_documented_figures():
    """docs/cluster-whatif.md's table, at a tolerance of 0.001 on shares and correlations
    (the replay is deterministic; the tolerance only covers rounding in the docs)."""
    log = load_swf_log(THETA)
    as_is = compare_swf_log(log, ("fifo-easy", "sjf"))
    delayed = compare_swf_log(log, ("fifo-easy", "easy", "fifo", "sjf"), launch_delay_s=33)
    assert as_is["recorded_min_wait_s"] == 33
    easy, sjf = as_is["runs"]["fifo-easy"], as_is["runs"]["sjf"]
    assert easy["tolerance_s"] == 30 and easy["recorded_median_wait_s"] == 71
    assert easy["within_tolerance"] == pytest.approx(0.050, abs=1e-3)
    assert sjf["within_tolerance"] == 0.0  # every start 33 s too early at least
    figures = {
        name: (a["within_tolerance"], a["start_rank_correlation"])
        for name, a in delayed["runs"].items()
    }
    assert figures == {
        "fifo-easy": (pytest.approx(0.331, abs=1e-3), pytest.approx(0.943, abs=1e-3)),
        "easy": (pytest.approx(0.331, abs=1e-3), pytest.approx(0.943, abs=1e-3)),
        "fifo": (pytest.approx(0.110, abs=1e-3), pytest.approx(0.901, abs=1e-3)),
        "sjf": (pytest.approx(0.383, abs=1e-3), pytest.approx(0.946, abs=1e-3)),
    }
    reference = delayed["no_queue_reference"]
    assert reference["within_tolerance"] == pytest.approx(0.494, abs=1e-3)
    assert reference["start_rank_correlation"] == pytest.approx(0.902, abs=1e-3)
    run = delayed["runs"]["fifo-easy"]
    assert run["recorded_waits"]["median_s"] == 71
    assert run["simulated_waits"]["median_s"] == pytest.approx(606, abs=1)
    assert run["error_median_abs_s"] == pytest.approx(2908, abs=1)
    small, wide = run["by_size"]["under 1%"], run["by_size"]["half or more"]
    assert small["jobs"] == 186 and small["within_tolerance"] == pytest.approx(0.651, abs=1e-3)
    assert wide["jobs"] == 5 and wide["error_mean_s"] < -86400  # started days early


def test_the_command_prints_the_figures_as_json(capsys):
    assert main(["whatif", "validate-swf", str(THETA), "--scheduler", "fifo-easy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["runs"]) == ["fifo-easy"]
    assert report["machine"]["max_procs"] == 4360 and report["with_recorded_wait"] == 399
    assert report["runs"]["fifo-easy"]["within_tolerance"] == pytest.approx(0.050, abs=1e-3)


def test_the_command_prints_tables_for_people(capsys):
    assert main(["whatif", "validate-swf", str(THETA), "--launch-delay", "33"]) == 0
    out = capsys.readouterr().out
    assert "33.1%" in out and "no queue" in out and "4,360 processors" in out
    assert "launch delay 33 s" in out and "models the site" not in out


def test_without_a_launch_delay_the_shortest_wait_is_offered_as_one(capsys):
    assert main(["whatif", "validate-swf", str(THETA), "--scheduler", "easy"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "launch delay 0 s (no job started sooner: --launch-delay 33 models" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"jobs": []}\n', "line 1: 2 fields, expected 18"),
        ("1 0 5 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n", "no MaxProcs (or MaxNodes)"),
        ("; MaxProcs: 8\n", "no job that ran"),
        (ATLAS.read_text(), "no recorded wait"),
    ],
)
def test_bad_logs_are_one_line_and_exit_2(tmp_path, capsys, text, message):
    path = tmp_path / "log.swf"
    path.write_text(text)
    assert main(["whatif", "validate-swf", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert main(["whatif", "validate-swf", str(tmp_path / "none.swf")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_unknown_or_no_scheduler_is_refused_before_any_replay():
    log = load_swf_log(THETA)
    with pytest.raises(InputError, match="unknown scheduler 'lottery'"):
        compare_swf_log(log, ("fifo-easy", "lottery"))
    with pytest.raises(InputError, match="at least one scheduler"):
        compare_swf_log(log, ())
    assert np.isfinite(compare_swf_log(log, ("fifo",))["runs"]["fifo"]["error_mean_s"])


def test_progress_names_the_scheduler_being_replayed():
    seen: list[tuple[str, int, int]] = []
    compare_swf_log(load_swf_log(THETA), ("fifo", "sjf"), progress=lambda *a: seen.append(a))
    assert {name for name, _, _ in seen} == {"fifo", "sjf"}
    assert all(total == 399 and 0 <= done <= total for _, done, total in seen)
