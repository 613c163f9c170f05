"""Every what-if of issue 33's item 3 in the audit report, each read off the rendered page: power
saving, predicted walltimes (their accuracy and backfill's gain), 10% more or fewer nodes, a
partition's time limit, the priority weights, and nodes added where jobs wait longest; with
figures that would be wrong if the replay were (a cap that kills jobs costs CPU-hours, one that
reaches no job changes nothing), and one line with a reason for each what-if the period cannot
make meaningful.

The site: the 3,000 synthetic jobs of ``make_home`` (seed 7, ten days, their record the replay's
so the baseline matches it), replayed on the nodes they ran on as the report does.
"""

from __future__ import annotations

import re
from datetime import datetime
from html import escape, unescape
from pathlib import Path

import numpy as np
import pytest

from tests.analytics.test_report import make_home
from wass_chat.batch.scenario import INFERRED, LoadedScenario, load_scenario
from wass_chat.batch.whatif import Baseline, Scenario, replay_baseline
from wass_chat.batch.whatif_answer import ChangeRequest
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.energy_whatifs import whatif_rows
from wass_chat.report.html import render_html
from wass_chat.report.markdown import render_markdown
from wass_chat.report.whatif_choices import CAP_H, FIXED_WHATIFS, site_whatifs
from wass_chat.sacct.cache import SacctCache

START, END = datetime(2024, 1, 1), datetime(2030, 1, 1)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_home(tmp_path_factory.mktemp("report-whatifs"), with_run=False, replayed=True)


@pytest.fixture(scope="module")
def report(home: tuple[Path, Path]) -> ReportData:
    return build_report_from_cache(*home, START, END)


@pytest.fixture(scope="module")
def page(report: ReportData) -> str:
    return render_html(report).split('<section id="whatifs"', 1)[1].split("</section>", 1)[0]


@pytest.fixture(scope="module")
def replay(home: tuple[Path, Path]) -> tuple[LoadedScenario, Baseline]:
    """The report's replay of the same jobs, for what-ifs the period did not choose."""
    from wass_chat.batch.cluster_source import cluster_from_jobs

    jobs = SacctCache(home[0]).scan().collect()
    known = (cluster_from_jobs(jobs), INFERRED)
    loaded = load_scenario(jobs, None, START, END, "jobs", known_cluster=known)
    return loaded, replay_baseline(loaded.scenario, loaded.power_model)


def cells(page: str, label: str) -> dict[str, str]:
    """The rendered row of what-if ``label``: header -> cell text, as a reader sees them."""
    headers = [unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", page)]
    row = re.search(r"<tr><td>" + re.escape(escape(label)) + r"</td>(.*?)</tr>", page)
    assert row, f"no row {label!r} on the page"
    values = [unescape(v) for v in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]
    return dict(zip(headers, [label, *values], strict=True))


def row(report: ReportData, start: str) -> dict:
    rows = report.cluster.whatifs
    assert rows is not None
    return next(r for r in rows.to_dicts() if r["what_if"].startswith(start))


def test_every_what_if_of_the_issue_is_a_row_of_the_page(report: ReportData, page: str) -> None:
    rows = report.cluster.whatifs
    assert rows is not None
    labels = rows["what_if"].to_list()
    assert labels[:4] == [label for label, _ in FIXED_WHATIFS]
    assert [label.split(" ")[0] for label in labels[4:]] == ["Partition", "Priority", "51"]
    for label in labels:
        assert f"<td>{escape(label)}</td>" in page
    for header in ("Median wait before", "Change in makespan", "CPU-hours after"):
        assert f">{header}</th>" in page
    # a line for the predictions and one for the fewer nodes; no what-if left out
    assert len(report.cluster.whatif_lines) == 2
    assert "None" not in page


def test_power_saving_cuts_energy_not_work(report: ReportData, page: str) -> None:
    r = row(report, "Idle nodes powered off")
    seen = cells(page, r["what_if"])
    assert r["facility_kwh_after"] < r["facility_kwh_before"]
    assert r["cpu_hours_after"] == r["cpu_hours_before"]  # the same jobs ran as long
    assert (
        seen["Change in energy"] == f"{r['energy_change_pct']:.1f}%" and r["energy_change_pct"] < 0
    )


def test_predicted_walltimes_say_their_accuracy_and_backfills_gain(
    report: ReportData, page: str, replay: tuple[LoadedScenario, Baseline]
) -> None:
    loaded, baseline = replay
    label = FIXED_WHATIFS[1][0]
    rows, lines = whatif_rows(loaded, baseline, (FIXED_WHATIFS[1],))
    assert rows["wait_mean_after_h"][0] == row(report, label)["wait_mean_after_h"]
    line = next(x for x in report.cluster.whatif_lines if x.startswith(label))
    assert line == lines[0] and escape(line) in page
    counts = re.search(r"starts ([\d,]+) jobs, against ([\d,]+) with", line)
    assert counts
    after, before = (int(n.replace(",", "")) for n in counts.groups())
    assert after > before  # shorter estimates: more holes backfill can fill
    predicted, requested = (float(p) for p in re.findall(r"(\d+)% ", line))
    assert predicted < requested  # the predictor is nearer the run times than the limits


def test_more_and_fewer_nodes(report: ReportData, page: str) -> None:
    more, fewer = row(report, "10% more"), row(report, "10% fewer")
    assert more["wait_mean_after_h"] < more["wait_mean_before_h"]
    assert more["facility_kwh_after"] > more["facility_kwh_before"]  # idle power of new nodes
    assert fewer["facility_kwh_after"] < fewer["facility_kwh_before"]
    assert fewer["left_out"] > 0 and fewer["jobs"] == more["jobs"] - fewer["left_out"]
    assert (
        cells(page, fewer["what_if"])["Jobs too big after the change"] == f"{fewer['left_out']:,}"
    )
    # its 'before' is another set of jobs than the other rows': a line under the table says so
    said = [line for line in report.cluster.whatif_lines if line.startswith(fewer["what_if"])]
    assert len(said) == 1 and f"{fewer['left_out']:,} jobs too big" in said[0]
    assert not any(line.startswith(more["what_if"]) for line in report.cluster.whatif_lines)


def test_a_cap_that_kills_long_jobs_costs_their_cpu_hours(report: ReportData, page: str) -> None:
    r = row(report, "Partition ")
    assert r["what_if"].startswith("Partition gpu's time limit capped at 12 h")  # half of 24 h
    assert r["killed_after"] > r["killed_before"]
    assert r["cpu_hours_after"] < r["cpu_hours_before"]
    seen = cells(page, r["what_if"])
    assert seen["Killed at their limit after"] == f"{r['killed_after']:,}"
    assert seen["CPU-hours after"] == f"{round(r['cpu_hours_after']):,}"


def test_a_cap_no_job_reaches_changes_nothing(replay: tuple[LoadedScenario, Baseline]) -> None:
    loaded, baseline = replay
    longest = float(loaded.scenario.workload.limit_s.max()) / 3600
    cap = (f"cap at {longest * 2:g} h", ChangeRequest(partition="gpu", max_time_h=longest * 2))
    r = whatif_rows(loaded, baseline, (cap,))[0].to_dicts()[0]
    for before, after in (
        ("wait_mean_before_h", "wait_mean_after_h"),
        ("wait_p95_before_h", "wait_p95_after_h"),
        ("cpu_hours_before", "cpu_hours_after"),
        ("killed_before", "killed_after"),
        ("facility_kwh_before", "facility_kwh_after"),
    ):
        assert r[before] == r[after], before
    assert r["wait_ci95"] == "+0 s to +0 s" and r["energy_change_pct"] == 0.0


def test_other_priority_weights_reorder_the_same_work(report: ReportData, page: str) -> None:
    r = row(report, "Priority by fair share")
    assert "instead of submission order" in r["what_if"]  # the jobs' cluster has no weights
    assert r["cpu_hours_after"] == r["cpu_hours_before"] and r["killed_after"] == r["killed_before"]
    assert r["wait_mean_after_h"] != r["wait_mean_before_h"]
    assert cells(page, r["what_if"])["95% CI of the change"] == r["wait_ci95"]


def test_nodes_go_where_jobs_wait_longest(
    report: ReportData, replay: tuple[LoadedScenario, Baseline]
) -> None:
    loaded, baseline = replay
    waits = baseline.figures["baseline"]["waits_by_partition"]
    longest = max(waits, key=lambda p: waits[p]["mean_s"])
    r = row(report, "51 more nodes")
    assert r["what_if"].startswith(f"51 more nodes in partition {longest} (its jobs waited longest")
    cluster = loaded.scenario.cluster
    nodes = cluster.partitions[cluster.partition_names().index(longest)].nodes
    assert round(len(nodes) / 10) == 51  # 10% of the partition's nodes
    assert r["wait_mean_after_h"] < r["wait_mean_before_h"]


def test_what_ifs_the_period_cannot_make_meaningful_are_one_line_each(
    replay: tuple[LoadedScenario, Baseline],
) -> None:
    loaded, baseline = replay
    w = loaded.scenario.workload
    lone = w.replace_columns(
        user=np.zeros(len(w), w.user.dtype), limit_s=np.zeros(len(w), np.int64)
    )
    scenario = Scenario(loaded.scenario.cluster, lone, loaded.scenario.scheduler)
    idle = baseline.figures["baseline"] | {
        "waits_by_partition": {p: {"jobs": 1, "mean_s": 0.0} for p in w.partitions}
    }
    site = site_whatifs(scenario, idle)
    assert site.chosen == ()
    assert site.left_out == (
        "Left out: a partition's time limit capped (no replayed job recorded a time limit).",
        "Left out: other priority weights (one user only: fair share orders nothing).",
        "Left out: more nodes where jobs wait longest (no job waited in the replay without a "
        "change).",
    )
    no_limits = w.replace_columns(limit_s=np.full(len(w), -1, np.int64))
    unlimited = Scenario(scenario.cluster, no_limits, scenario.scheduler)
    label, request = site_whatifs(unlimited, baseline.figures["baseline"]).chosen[0]
    last = max(w.partitions[p] for p in np.unique(w.partition))
    assert label == (
        f"Partition {last}'s time limit capped at {CAP_H:g} h (some of its jobs asked for no limit)"
    )
    assert request == ChangeRequest(partition=last, max_time_h=CAP_H)


def test_markdown_lists_the_same_rows_and_lines(report: ReportData) -> None:
    text, _ = render_markdown(report, None)
    whatifs = text.split("## What-ifs replayed on the jobs of the period", 1)[1].split("\n## ")[0]
    rows = report.cluster.whatifs
    assert rows is not None
    for label in rows["what_if"]:
        assert f"| {label} |" in whatifs
    for line in report.cluster.whatif_lines:
        assert line in whatifs


def test_one_node_is_said_in_the_singular(replay: tuple[LoadedScenario, Baseline]) -> None:
    """A partition of fewer than 15 nodes gets one more node (10%, at least one): "1 more node",
    not "1 more nodes"."""
    loaded, baseline = replay
    cluster = loaded.scenario.cluster
    smallest = min(cluster.partitions, key=lambda p: len(p.nodes))
    assert len(smallest.nodes) < 15, "the site needs a partition of fewer than 15 nodes"
    figures = dict(baseline.figures["baseline"])
    figures["waits_by_partition"] = {smallest.name: {"jobs": 1, "mean_s": 600.0}}
    chosen = dict(site_whatifs(loaded.scenario, figures).chosen)
    label = next(text for text in chosen if "more node" in text)
    assert label.startswith(f"1 more node in partition {smallest.name} (its jobs waited longest")


def test_a_change_that_rounds_to_nothing_reads_zero_not_minus_zero() -> None:
    from wass_chat.report.columns import UNITS

    signed = UNITS["signed_percent"]
    assert [signed(v) for v in (-0.0004, 0.04, 1.66, -9.31)] == ["0.0%", "0.0%", "+1.7%", "-9.3%"]
