"""`kb backup DIR` / `kb restore DIR`: every record out and back in, vectors embedded again."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kb.backup import backup, restore
from kb.decisions import decisions_from_case
from kb.records import RealExecution
from kb.store import KnowledgeBase
from sim.errors import InputError
from tests.kb.conftest import make_case
from tests.kb.learn_killed import written_around_the_checks

WASS_CHAT = (sys.executable, "-m", "wass_chat.cli")
"""The CLI of this interpreter (the venv's bin folder need not be on PATH)."""


def filled(directory: Path) -> KnowledgeBase:
    kb = KnowledgeBase(directory)
    cases = [make_case(s) for s in (1, 2, 3)]
    kb.add_cases(cases, decisions=[d for c in cases for d in decisions_from_case(c, 2)])
    failed = replace(
        make_case(4),
        case_id="real-failed",
        source="slurm:run-f",
        real=RealExecution(run_id="run-f", state="FAILED"),
    )
    written_around_the_checks(kb, failed)  # a write token's straight write
    return kb


def test_a_backup_restores_every_record_into_a_fresh_store(tmp_path: Path) -> None:
    kb = filled(tmp_path / "kb")
    counts = backup(kb, tmp_path / "backup")
    assert counts == {"cases": 3, "decisions": kb.sidecar.count("decisions"), "failed_cases": 1}
    with pytest.raises(InputError, match="already holds a backup"):
        backup(kb, tmp_path / "backup")  # never overwritten
    assert not list((tmp_path / "backup").glob(".*partial*"))
    kb.close()

    fresh = KnowledgeBase(tmp_path / "restored")
    added = restore(fresh, tmp_path / "backup")
    assert added == counts
    assert restore(fresh, tmp_path / "backup") == dict.fromkeys(counts, 0)  # idempotent
    probe = make_case(2)
    assert fresh.query(probe.workflow, probe.platform, k=1)[0].case_id == probe.case_id
    original = KnowledgeBase(tmp_path / "kb")
    for kind in counts:
        assert fresh.sidecar.ids(kind) == original.sidecar.ids(kind)
    assert fresh.get_cases([probe.case_id]) == original.get_cases([probe.case_id])
    original.close()
    fresh.close()


def test_cli_backup_and_restore_and_a_folder_without_a_backup(tmp_path: Path) -> None:
    filled(tmp_path / "kb").close()
    env = {**os.environ, "WASS_HOME": str(tmp_path / "home")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*WASS_CHAT, "kb", *args], capture_output=True, text=True, env=env, check=False
        )

    done = cli("backup", str(tmp_path / "b"), "--kb", str(tmp_path / "kb"))
    assert done.returncode == 0, done.stderr
    assert "backed up 3 cases" in done.stdout
    done = cli("restore", str(tmp_path / "b"), "--kb", str(tmp_path / "again"))
    assert done.returncode == 0, done.stderr
    assert "restored 3 cases" in done.stdout
    missing = cli("restore", str(tmp_path / "nothing"), "--kb", str(tmp_path / "again"))
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "holds no backup" in missing.stderr


def test_a_truncated_or_corrupt_backup_is_refused_and_the_store_left_as_it_was(
    tmp_path: Path,
) -> None:
    """``kb restore`` checks the backup against its manifest before it writes anything: cut
    short, one byte changed, or without a manifest, it exits 2 in one line and the live store
    holds what it held."""
    filled(tmp_path / "kb").close()
    assert backup(KnowledgeBase(tmp_path / "kb"), tmp_path / "b")["cases"] == 3
    live = KnowledgeBase(tmp_path / "live")
    live.add_cases([make_case(9)])
    held = {kind: live.sidecar.ids(kind) for kind in ("cases", "decisions", "failed_cases")}
    live.close()
    file = tmp_path / "b" / "cases.sqlite"
    whole = file.read_bytes()
    env = {**os.environ, "WASS_HOME": str(tmp_path / "home")}
    damages = (
        (whole[: len(whole) // 2], None, f"has {len(whole) // 2} bytes, its manifest {len(whole)}"),
        (whole[:-1] + bytes([whole[-1] ^ 1]), None, "has another SHA-256"),
        (whole, "manifest.json", "its manifest (manifest.json) is missing"),
    )
    for content, removed, said in damages:
        file.write_bytes(content)
        if removed:
            (tmp_path / "b" / removed).rename(tmp_path / "manifest.kept")
        done = subprocess.run(
            [*WASS_CHAT, "kb", "restore", str(tmp_path / "b"), "--kb", str(tmp_path / "live")],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        message = done.stderr.strip()
        assert done.returncode == 2 and said in message and "\n" not in message, message
        assert "nothing restored" in message
        with pytest.raises(InputError, match="nothing restored"):  # the API refuses it too
            restore(KnowledgeBase(tmp_path / "api"), tmp_path / "b")
        after = KnowledgeBase(tmp_path / "live")
        assert {kind: after.sidecar.ids(kind) for kind in held} == held
        after.close()
    (tmp_path / "manifest.kept").rename(tmp_path / "b" / "manifest.json")
    file.write_bytes(whole)  # the positive control: the intact backup restores
    again = KnowledgeBase(tmp_path / "live")
    assert restore(again, tmp_path / "b")["cases"] == 3
    assert again.sidecar.ids("cases") > held["cases"]
    again.close()
