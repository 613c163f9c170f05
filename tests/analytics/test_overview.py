"""The summary at the top of the report: the rules' text offline, the local model's when it
answers with numbers that are all in the tables (a loopback Ollama-protocol server plays it)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tests.agent.fake_ollama import MODEL, FakeOllama, Reply
from tests.analytics.test_report import make_home
from wass_chat.agent.report_overview import local_model_writer
from wass_chat.answers.checks.verify import verify_answer
from wass_chat.config import Settings
from wass_chat.report.build import ReportData, build_report_from_cache
from wass_chat.report.html import render_html
from wass_chat.report.markdown import render_markdown
from wass_chat.report.overview import RULES_AUTHOR, build_overview, overview_facts

UNREACHABLE = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> ReportData:
    sacct_dir, runs_dir = make_home(tmp_path_factory.mktemp("overview"), with_run=False)
    return build_report_from_cache(sacct_dir, runs_dir, writer_unavailable="offline test")


def settings(tmp_path: Path, url: str) -> Settings:
    return Settings(home=tmp_path, ollama_host=url, ollama_model=MODEL, ollama_timeout=2.0)


def numbers(text: str) -> list[str]:
    return re.findall(r"\d[\d,]*(?:\.\d+)?", text)


def test_offline_summary_comes_from_the_findings(report):
    o, a = report.overview, report.analysis
    assert o.author == RULES_AUTHOR and not o.by_model and "offline test" in o.note
    assert o.text.startswith(f"{a.summary.jobs:,} jobs from {a.summary.users:,} users")
    assert "Recommended: (1)" in o.text
    found = " ".join(f.text for f in a.findings)
    for number in numbers(o.text.split(" were submitted ", 1)[1].split("Recommended:")[0]):
        assert number in found or number in a.period.label(), number  # quoted, not computed
    assert verify_answer(o.text, overview_facts(a)).ok


def test_grounded_model_summary_is_used_and_says_so(report, tmp_path):
    a = report.analysis
    facts = overview_facts(a)
    text = (
        f"Of {facts['jobs']:,} jobs, only {facts['cpu_efficiency_pct']}% of allocated CPU time "
        f"was used and {facts['wasted_core_hours']:,} core-hours sat idle. "
        f"Recommendation: ask the heaviest wasters to request fewer cores."
    )
    with FakeOllama([Reply(text)]) as fake:
        writer, why = local_model_writer(settings(tmp_path, fake.url))
        assert writer is not None and why == ""
        o = build_overview(a, writer)
        sent = str(fake.chat_requests[-1]["messages"])
    assert o.by_model and o.text == text and MODEL in o.author and "checked" in o.author
    assert '"cpu_efficiency_pct"' in sent and "A draft written by rules" in sent
    # independently of the verifier: every number the model wrote is one of the facts'
    shown = {
        f"{facts['jobs']:,}",
        str(facts["cpu_efficiency_pct"]),
        f"{facts['wasted_core_hours']:,}",
    }
    assert set(numbers(text)) <= shown
    page = render_html(dataclasses.replace(report, overview=o))
    assert 'data-author="model"' in page and f"Written by the local model {MODEL}" in page
    markdown, _ = render_markdown(dataclasses.replace(report, overview=o), None)
    assert text in markdown


def test_a_number_not_in_the_tables_sets_the_model_text_aside(report, tmp_path):
    a = report.analysis
    invented = f"CPU efficiency was 97.3% over {a.summary.jobs:,} jobs; all is well."
    with FakeOllama([Reply(invented)]) as fake:
        writer, _ = local_model_writer(settings(tmp_path, fake.url))
        assert writer is not None
        o = build_overview(a, writer)
    assert not o.by_model and o.author == RULES_AUTHOR
    assert o.text == report.overview.text  # the deterministic text
    assert "97.3%" in o.note and MODEL in o.note
    page = render_html(dataclasses.replace(report, overview=o))
    assert 'data-author="rules"' in page and "set aside" in page


def test_a_wrong_leader_with_grounded_numbers_is_set_aside(report, tmp_path):
    """Every number and name is in the facts, but the user named is not the one who left the
    most core-hours idle: the figure check (not the verifier) sets the text aside."""
    a = report.analysis
    facts = overview_facts(a)
    leader = a.tables["efficiency_by_user"]["user"][0]
    failing = next(x for x in a.anomalies if x.kind == "failing_users").examples["user"][0]
    assert failing != leader  # a name the facts hold, for another finding
    wrong = f"{failing} left the most core-hours idle at {facts['cpu_efficiency_pct']}% overall."
    assert verify_answer(wrong, facts).ok  # the verifier alone would have let it through
    with FakeOllama([Reply(wrong)]) as fake:
        writer, _ = local_model_writer(settings(tmp_path, fake.url))
        assert writer is not None
        o = build_overview(a, writer)
    assert not o.by_model and o.text == report.overview.text
    assert f"{failing} is said to leave the most core-hours idle" in o.note and leader in o.note


def test_no_local_model_leaves_the_rules_text(report, tmp_path):
    writer, why = local_model_writer(settings(tmp_path, UNREACHABLE))
    assert writer is None and "no Ollama server" in why
    o = build_overview(report.analysis, writer, why)
    assert o.author == RULES_AUTHOR and "no Ollama server" in o.note
