"""The pending-reason catalogue against the reason strings extracted from Slurm's own code.

fixtures/slurm_reasons.txt lists every reason code and long text Slurm 22.05 and 26.05 set on a
job (its header says how it was extracted). A string the catalogue does not know, an entry that
shares its meaning with another, or a glossary answer that is not its own fails here. The
assoc_mgr reader is checked on real ``scontrol show assoc_mgr`` output of Slurm 22.05.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wass_chat.agent.understanding.glossary import glossary_reply
from wass_chat.agent.understanding.router import route
from wass_chat.slurm.explain.limit_records import count_value, parse_assoc_mgr, tres_value
from wass_chat.slurm.reasons import REASONS, UNKNOWN, classify, markdown_summary

FIXTURES = Path(__file__).parent / "fixtures"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "slurm.md"


def _extracted() -> list[tuple[str, str]]:
    lines = (FIXTURES / "slurm_reasons.txt").read_text().splitlines()
    return [tuple(line.split("\t", 1)) for line in lines if line and not line.startswith("#")]  # type: ignore[misc]


EXTRACTED = _extracted()


def _as_printed(string: str) -> str:
    """The string as squeue prints it: Slurm's %s filled with a name."""
    return re.sub(r"%[a-z]+", "n7", string)


def test_the_extracted_list_is_whole() -> None:
    """Both versions' full tables: 197 distinct codes in 22.05, 216 in 26.05, and long texts."""
    codes = {
        v: {s for vs, s in EXTRACTED if v in vs.split() and " " not in s and "%" not in s}
        for v in ("22.05", "26.05")
    }
    assert (len(codes["22.05"]), len(codes["26.05"])) == (197, 216)
    named = {
        "QOSMaxWallDurationPerJobLimit",
        "JobArrayTaskLimit",
        "MaxMemPerLimit",
        "ReservationDeleted",
        "MaxCpuRunMinsPerUser",
        "MpiPortsBusy",
    }
    assert named <= codes["26.05"]
    assert (
        "26.05\tNodes required for job are DOWN, DRAINED, REBOOTING or reserved for jobs in "
        "higher priority partitions" in {f"{v}\t{s}" for v, s in EXTRACTED}
    )


@pytest.mark.parametrize(("versions", "string"), EXTRACTED, ids=[s for _, s in EXTRACTED])
def test_every_reason_slurm_sets_has_its_own_entry(versions: str, string: str) -> None:
    entry = classify(_as_printed(string))
    assert entry is not UNKNOWN and entry.code == string, (string, entry.code)
    assert set(versions.split()) <= set(entry.versions.split())
    assert entry.meaning and entry.outcome in {"waits", "never", "release", "admin", "ended"}


def test_no_two_reasons_share_a_meaning_or_an_answer() -> None:
    meanings: dict[str, str] = {}
    answers: dict[str, str] = {}
    for entry in REASONS:
        assert meanings.setdefault(entry.meaning, entry.code) == entry.code, entry.code
        if entry.code.endswith("*") or entry.outcome == "running":
            continue
        reply = glossary_reply(f"what does the pending reason {_as_printed(entry.code)} mean?")
        assert reply is not None and entry.meaning in reply, entry.code
        assert answers.setdefault(reply, entry.code) == entry.code, (entry.code, reply)


@pytest.mark.parametrize(
    ("code", "outcome", "words"),
    [
        ("QOSMaxWallDurationPerJobLimit", "never", "ask for a --time within the QOS's MaxWall"),
        ("PartitionDown", "admin", "its partition is DOWN"),
        ("PartitionInactive", "admin", "INACTIVE"),
        ("JobArrayTaskLimit", "waits", "ArrayTaskThrottle"),
        ("QOSNotAllowed", "never", "AllowQos"),
        ("AccountNotAllowed", "never", "AllowAccounts"),
        ("MaxMemPerLimit", "never", "MaxMemPerNode"),
        ("InvalidAccount", "never", "sacctmgr show assoc"),
        ("ReservationDeleted", "release", "scontrol release"),
        ("AssocGrpCPURunMinutesLimit", "waits", "GrpTRESRunMins cpu="),
        ("QOSGrpMemoryMinutes", "waits", "RawUsage=0"),
        ("AssocMaxMemPerNode", "never", "spread the job over more nodes"),
        ("MaxNodePerAccount", "waits", "MaxTRESPA node="),
        ("MaxMemoryRunMinsPerUser", "waits", "MaxTRESRunMinsPU mem="),
        ("job requeued in held state", "release", "scontrol release N"),
    ],
)
def test_the_reasons_the_issue_names_say_whether_and_how_the_job_can_start(
    code: str, outcome: str, words: str
) -> None:
    entry = classify(code)
    assert entry.outcome == outcome
    assert words in entry.meaning + " " + entry.advice
    assert "wait for your other jobs" not in entry.advice


def test_glossary_questions_about_long_texts_and_codes_are_answered() -> None:
    deleted = route("what does 'Reservation maint was deleted' mean?")
    assert deleted.name == "glossary" and "`Reservation … was deleted`" in deleted.reply
    wall = route("what does the pending reason QOSMaxWallDurationPerJobLimit mean?").reply
    assert "It can never start as requested" in wall and "MaxWall" in wall
    assert route("what is priority").name != "glossary"


def test_docs_carry_the_catalogue_summary() -> None:
    assert markdown_summary() in DOCS.read_text(), "docs/slurm.md's reason summary is out of date"


def test_assoc_mgr_limits_and_use_are_read_from_real_output() -> None:
    records = parse_assoc_mgr((FIXTURES / "assoc_mgr_22.05.txt").read_text())
    physics = next(r for r in records if r.get("Account") == "physics")
    assert physics["ParentAccount"] == "root(1)"
    assert tres_value(physics["GrpTRES"], "mem") == ("mem", 400.0, 300.0)
    assert tres_value(physics["GrpTRES"], "cpu") is None  # no cap set
    qos = next(r for r in records if r.get("QOS") == "wassq(2)")
    assert count_value(qos["GrpJobs"]) == (3.0, 1.0) and count_value(qos["MaxWallPJ"]) == (5, None)
    assert tres_value(qos["users"]["1001"]["MaxTRESPU"], "mem") == ("mem", 300.0, 100.0)
    assert count_value(qos["accounts"]["wassgrp"]["MaxJobsPA"]) == (None, 1.0)
    assert tres_value("cpu=N(0),gres/gpu=2(1)", "gres") == ("gres/gpu", 2.0, 1.0)
    assert tres_value("cpu=4(0),fs/disk=10(2)", "unknown") == ("fs/disk", 10.0, 2.0)
