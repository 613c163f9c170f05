"""The report's headline figures on hand-made tables where rounding, ties and refusals used to
make them wrong (issue 41): the user leaving the most core-hours idle ranked on exact values,
amounts that round to 0 never crowned, shares within their whole, the jobs' energy within the
total, one pending count, and a refused submission counted as a refusal, not a failure; and the
answer checker extended to the summary paragraph catches each wrong figure."""

from __future__ import annotations

import polars as pl
import pytest

from sim.batch.energy import PowerModel, PowerProfile
from sim.batch.model import BatchCluster, BatchNode, Partition
from tests.analytics.conftest import at, make_jobs
from wass_chat.analytics.analysis import analyze
from wass_chat.analytics.efficiency import efficiency_by
from wass_chat.analytics.insights import top_insight, top_waster
from wass_chat.analytics.period import REFUSED, Period, load_period
from wass_chat.analytics.summary import summarize
from wass_chat.analytics.waits import pending_at_end, pending_reasons
from wass_chat.answers.checks.answer_check import contradictions
from wass_chat.answers.checks.overview_check import overview_problems
from wass_chat.batch.period_energy import assumptions, period_energy
from wass_chat.report.energy_whatif_views import energy_totals
from wass_chat.report.overview import deterministic_overview
from wass_chat.report.overview_figures import recomputed_figures

PERIOD = Period(at(0), at(24))


def per_job(rows: list[tuple[str, float, float]]) -> pl.DataFrame:
    """:func:`job_efficiency`-shaped rows: (user, allocated core-hours, used core-hours)."""
    return pl.DataFrame(
        {
            "user": [u for u, _, _ in rows],
            "allocated_core_s": [a * 3600 for _, a, _ in rows],
            "cpu_used_s": [c * 3600 for _, _, c in rows],
            "wasted_core_hours": [a - c for _, a, c in rows],
            "memory_efficiency": [0.5 for _ in rows],
        }
    )


def test_an_efficiency_equal_to_the_periods_once_printed_is_not_called_above_it():
    # issue #41, a 24.11 site: "at 0.0% CPU efficiency, above the period's 0.0%"
    ranked = efficiency_by(per_job([("root", 1.0, 0.0004), ("ann", 0.01, 0.0)]), "user")
    text = top_waster(ranked, 0.03)
    assert "at 0.0% CPU efficiency, the period's own" in text and "above" not in text, text
    assert top_waster(ranked, 5.0).endswith("at 0.0% CPU efficiency, below the period's 5.0%.")


def test_the_most_idle_user_is_ranked_on_exact_values():
    # aaron 0.30, zoe 0.34 idle core-hours: rounded to 0.3 both, aaron "led" alphabetically
    ranked = efficiency_by(per_job([("aaron", 1.0, 0.70), ("zoe", 1.0, 0.66)]), "user")
    assert ranked["user"].to_list() == ["zoe", "aaron"]
    text = top_waster(ranked, 67.0)
    assert text.startswith("zoe left the most core-hours idle: 0.34 over 1 job")


def test_a_tie_is_a_tie_and_negligible_amounts_crown_no_one():
    tied = efficiency_by(per_job([("bob", 4.0, 2.0), ("alice", 3.0, 1.0)]), "user")
    assert top_waster(tied, 50.0) == (
        "alice and bob tied for the most core-hours idle: 2 each, over 2 jobs together."
    )
    tiny = efficiency_by(per_job([("bob", 0.01, 0.006), ("alice", 0.01, 0.007)]), "user")
    text = top_waster(tiny, 60.0)
    assert "bob" not in text and "alice" not in text and "under 0.01 core-hours" in text


def test_node_hours_that_round_to_zero_keep_their_digits():
    table = pl.DataFrame({"user": ["ann", "ben"], "node_hours": [0.02, 0.0136], "jobs": [1, 1]})
    text = top_insight(table, "user", 0.0336)
    assert "(0," not in text and "of 0)" not in text  # was "ann used the most (0, 59.5% of 0)"
    assert text.startswith("ann used the most node-hours (0.02, 59.5% of 0.034)")


REFUSED_ROW = dict(  # as sacct records sbatch --mem=64G on a cluster of 8000 MB nodes (22.05)
    user="rita",
    state="FAILED",
    submit=at(3),
    start=at(3),
    end=at(3),
    elapsed_s=0,
    exit_status=1,
    node_list=None,
)


def test_a_refused_submission_is_no_failed_job():
    rows = [
        dict(
            user="ann",
            state="COMPLETED",
            submit=at(1),
            start=at(1),
            end=at(2),
            elapsed_s=3600,
            node_list="n1",
        ),
        dict(
            user="ann",
            state="FAILED",
            submit=at(2),
            start=at(2),
            end=at(2.5),
            elapsed_s=1800,
            node_list="n1",
            exit_status=3,
        ),
        REFUSED_ROW,
    ]
    loaded = load_period(make_jobs(rows).lazy(), PERIOD)
    s = summarize(loaded)
    assert s.jobs == 3 and s.refused == 1 and s.state_counts[REFUSED] == 1
    assert s.finished == 2 and s.failure_rate == 0.5  # 1 of the 2 that ran, not 2 of 3
    assert s.started == 2 and s.wait_median_s == 0.0  # the refusal did not "start" at once
    analysis = analyze(make_jobs(rows).lazy(), PERIOD.start, PERIOD.end, compare=False)
    states = next(c for c in analysis.charts if c.id == "chart-states-per-user").insight
    assert "50.0% failed" in states and "Slurm refused 1 submission outright" in states


def test_one_pending_count_at_the_period_end():
    # ended "yesterday": the job that started after the end was pending then, RUNNING now
    rows = [
        dict(user="ann", state="PENDING", submit=at(20), reason="Priority"),
        dict(
            user="ben",
            state="RUNNING",
            submit=at(21),
            start=at(30),
            node_list="n1",
            reason="Resources",
        ),
        dict(
            user="ann",
            state="COMPLETED",
            submit=at(1),
            start=at(1),
            end=at(2),
            elapsed_s=3600,
            node_list="n1",
        ),
    ]
    loaded = load_period(make_jobs(rows).lazy(), PERIOD)
    table = pending_reasons(pending_at_end(loaded, PERIOD))
    s = summarize(loaded)
    assert s.pending == int(table["jobs"].sum()) == 2  # was 1 (state PENDING) beside 2
    assert s.running == 0
    said = "- pending at the period's end: 1\n2 jobs were still pending at the end of the period"
    assert contradictions(said) == ["the answer gives 2 pending counts for one queue: 1, 2"]


def test_the_jobs_energy_never_exceeds_the_total():
    # one 4-CPU node, but accounting shows two whole-node jobs at once (an inferred cluster
    # smaller than the site): the jobs held twice the idle power the cluster has
    cluster = BatchCluster((BatchNode("c1", 4, 0, 0, "box"),), (Partition("cpu", ("c1",)),))
    model = PowerModel({"box": PowerProfile(100, 200, 0, 10, 300)}, pue=1.0)
    jobs = make_jobs(
        [
            dict(
                user=u,
                partition="cpu",
                state="COMPLETED",
                submit=at(0),
                start=at(0),
                end=at(2),
                elapsed_s=7200,
                ncpus=4,
                node_list="c1",
            )
            for u in ("ann", "ben")
        ]
    )
    e = period_energy(jobs, at(0), at(2), cluster, model, bucket_s=3600)
    assert e.jobs_kwh == pytest.approx(2 * (100 + 200) * 2 / 1000)  # each: all idle + all CPU
    assert e.it_kwh == pytest.approx(e.jobs_kwh) and e.idle_kwh >= 0  # was 101.5%-style > 100
    assert e.overheld_intervals == 2
    text = energy_totals(e)
    assert "(100.0%)" in text and "> -0.01" not in text and ", 0 kWh, is idle" in text
    assert any("more nodes busy than the cluster has" in line for line in assumptions(e))
    total = float(e.over_time["it_kwh"].sum())
    assert (
        total == pytest.approx(e.it_kwh)
        and (e.over_time["jobs_kwh"] <= e.over_time["it_kwh"] + 1e-12).all()
    )


def test_the_summary_checker_passes_the_rules_text_and_catches_each_wrong_figure():
    rows = [
        dict(
            user=u,
            state="COMPLETED",
            submit=at(h),
            start=at(h),
            end=at(h + 1),
            elapsed_s=3600,
            ncpus=4,
            node_list="n1",
            total_cpu_s=3600 * c,
            timelimit_s=36000,
        )
        for u, h, c in (("bob", 1, 2), ("alice", 2, 2), ("carl", 3, 3))
    ] + [dict(user="dan", state="PENDING", submit=at(23), reason="Priority"), REFUSED_ROW]
    a = analyze(make_jobs(rows).lazy(), PERIOD.start, PERIOD.end, compare=False)
    text = deterministic_overview(a)
    figures = recomputed_figures(a)
    assert overview_problems(text, figures) == [], text
    assert "alice and bob tied for the most core-hours idle" in text
    wrong = {
        "alice left the most core-hours idle: 2 over 1 job.": "exact leaders",
        "Jobs used 59.5% of 0.034 core-hours.": "number 59.5%",
        "Jobs left 9 core-hours idle.": "number 9",
        "101.5% of the jobs ran.": "101.5",
    }
    for sentence, problem in wrong.items():
        found = overview_problems(text + " " + sentence, figures)
        assert any(problem in p for p in found), (sentence, found)


def test_users_tied_on_failure_rate_are_named_together():
    # ann and ben fail 10 of 20 each, 60 others never: both at 50.0%, neither "the worst"
    def job(user: str, state: str, i: int) -> dict[str, object]:
        return dict(
            user=user,
            state=state,
            submit=at(i / 10),
            start=at(i / 10),
            end=at(i / 10 + 0.05),
            elapsed_s=180,
            node_list="n1",
        )

    rows = [
        job(u, "FAILED" if i % 2 else "COMPLETED", i) for u in ("ben", "ann") for i in range(20)
    ]
    rows += [job("cat", "COMPLETED", i) for i in range(60)]
    a = analyze(make_jobs(rows).lazy(), PERIOD.start, PERIOD.end, compare=False)
    failures = next(f for f in a.findings if f.topic == "failures")
    assert failures.text == "2 users had high failure rates; the worst, tied at 50.0%: ann and ben."


def test_partitions_where_no_job_waited_are_not_ranked():
    # issue #41, a 24.11 site: "debug had the longest median wait (0 s over 10 jobs, p90 0 s)"
    from wass_chat.analytics.insights import nodes_insight, wait_by_partition_insight

    zeros = pl.DataFrame(
        {
            "partition": ["debug", "small"],
            "jobs": [10, 1],
            "median_wait_h": [0.0, 0.0],
            "p90_wait_h": [0.0, 0.0],
            "max_wait_h": [0.0, 0.0],
        }
    )
    text = wait_by_partition_insight(zeros)
    assert text == (
        "No started job waited in any partition (11 jobs started within a second of becoming "
        "eligible)."
    )
    waited = zeros.with_columns(
        pl.Series("max_wait_h", [0.0, 0.5]), pl.Series("median_wait_h", [0.0, 0.5])
    )
    assert wait_by_partition_insight(waited) == (
        "In every partition of 5+ jobs the median job did not wait (0 s); the longest single "
        "wait was in small (30.0 min)."
    )
    waited = waited.with_columns(pl.Series("median_wait_h", [0.25, 0.5]))
    assert wait_by_partition_insight(waited).startswith("debug had the longest median wait (15")
    assert "the widest used 1 node (" in nodes_insight(pl.DataFrame({"nnodes": [1, 1]}), 2)
