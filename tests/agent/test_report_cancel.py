"""Escape while the chat builds an audit report: the answer says cancelled, and no file is
written (issue #41: Esc and Ctrl-C said "cancelled" while the report file was still written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.test_efficiency_answers import site_home  # noqa: F401 (the fixture)
from wass_chat.agent.cancellation import Work, WorkCancelled, working
from wass_chat.agent.facts.cluster_tools import ClusterTools
from wass_chat.agent.facts.sources import Sources
from wass_chat.config import settings

pytestmark = pytest.mark.xdist_group("agent-home")


@pytest.mark.usefixtures("site_home")
def test_a_report_cancelled_while_it_is_built_writes_nothing() -> None:
    facts = ClusterTools(settings(), Sources(settings()))
    reports = settings().home / "reports"
    cancelled = Work()
    cancelled.cancel()
    with working(cancelled), pytest.raises(WorkCancelled):
        facts.generate_report("2024-04", "html", "audit.html")
    assert not any(p.is_file() for p in reports.rglob("*")) if reports.exists() else True
    # The positive control: the same call, not cancelled, writes the page and its tables.
    with working(Work()):
        written = facts.generate_report("2024-04", "html", "audit.html")
    assert Path(written["path"]).is_file() and written["path"].endswith("audit.html")
