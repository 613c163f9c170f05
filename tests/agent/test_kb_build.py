"""The demo knowledge base installs all or nothing: a fresh home gets every shipped case, a
cancelled answer or a broken archive leaves the data home as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

import kb.demo
from sim.errors import ServiceUnavailable
from wass_chat.agent.cancellation import Work, WorkCancelled
from wass_chat.agent.facts import kb_build
from wass_chat.agent.facts.kb_build import build_demo_kb, stored_cases


def leftovers(home: Path) -> list[str]:
    return sorted(p.name for p in home.iterdir() if p.name.startswith("."))


def test_a_fresh_home_gets_every_shipped_case_and_progress_is_reported(tmp_path: Path) -> None:
    said: list[str] = []
    build_demo_kb(tmp_path / "kb", Work(progress=said.append))
    assert stored_cases(tmp_path / "kb") == len(kb.demo.stored_case_ids())
    assert said and "demo knowledge base" in said[0]
    assert leftovers(tmp_path) == []


def test_a_cancelled_answer_installs_nothing(tmp_path: Path) -> None:
    work = Work()
    work.cancel()
    with pytest.raises(WorkCancelled):
        build_demo_kb(tmp_path / "kb", work)
    assert not (tmp_path / "kb").exists() and leftovers(tmp_path) == []


def test_a_broken_archive_is_one_clear_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(kb.demo.demo_store_path().read_bytes()[:50_000])  # cut mid-member
    monkeypatch.setattr(kb.demo, "demo_store_path", lambda: broken)
    home = tmp_path / "home"
    with pytest.raises(ServiceUnavailable, match="could not install the demo knowledge base"):
        build_demo_kb(home / "kb", Work())
    assert not (home / "kb").exists() and leftovers(home) == []


def test_a_store_another_app_filled_first_is_kept(tmp_path: Path) -> None:
    build_demo_kb(tmp_path / "kb", Work())
    marker = tmp_path / "kb" / "marker"
    marker.write_text("the first app's store")
    kb_build._install(tmp_path / "other", tmp_path / "kb")  # the loser of a race
    assert marker.read_text() == "the first app's store"
