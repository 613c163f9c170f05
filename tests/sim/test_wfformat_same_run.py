"""One real run read in several WfFormat versions gives one workflow: the versions differ in
spellings, never in tasks, runtimes or dependencies.

Fixtures and their origins: tests/sim/fixtures/wfformat/README.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.model import Workflow
from sim.wfformat import read_workflow

FIXTURES = Path(__file__).parent / "fixtures" / "wfformat"


def edges(wf: Workflow) -> set[tuple[str, str]]:
    return {(p, child) for child, ps in wf.parents.items() for p in ps}


def test_the_same_run_reads_alike_in_1_2_1_3_1_4_and_1_5() -> None:
    runs = {
        v: read_workflow(FIXTURES / f"makeflow-blast-v{v}.json")
        for v in ("1.2", "1.3", "1.4", "1.5")
    }
    for wf in runs.values():
        assert [(t.id, t.work, t.cores, t.memory) for t in wf.tasks] == [
            (t.id, t.work, t.cores, t.memory) for t in runs["1.4"].tasks
        ]
        assert wf.parents == runs["1.4"].parents
        assert wf.tasks[1].inputs == ("blastall", "small.fasta.0", "nt")
        command = wf.tasks[1].command or ()
        assert command[0] == "blastall" and command[command.index("-i") + 1] == "small.fasta.0"
    # schemas up to 1.3 give `size` in KB; the 1.4/1.5 conversions kept the numbers as bytes
    assert runs["1.2"].file_by_id["small.fasta"].size == 203_000
    assert runs["1.3"].total_bytes == runs["1.2"].total_bytes
    assert runs["1.4"].file_by_id["small.fasta"].size == 203
    assert runs["1.5"].total_bytes == runs["1.4"].total_bytes


def test_a_pegasus_run_reads_alike_in_1_4_and_its_wfinstances_1_5_conversion() -> None:
    old, new = (read_workflow(FIXTURES / f"pegasus-srasearch-v{v}.json") for v in ("1.4", "1.5"))
    assert [(t.id, t.work, t.cores, t.memory) for t in new.tasks] == [
        (t.id, t.work, t.cores, t.memory) for t in old.tasks
    ]
    assert edges(new) == edges(old) and len(edges(new)) == 6
    assert new.total_bytes == old.total_bytes
    assert sum(t.runtime for t in new.tasks) == pytest.approx(3845.12)


def test_pegasus_1_0_names_without_ids_read_like_their_1_4_migration() -> None:
    """Epigenomics 1.0 names (``chr21_chr21``) carry no ``_ID``; WfCommons' 1.2 migration
    appended one in file order, which is the only difference in the graph."""
    old, new = (read_workflow(FIXTURES / f"pegasus-epigenomics-v{v}.json") for v in ("1.0", "1.4"))
    assert old.tasks[0].id == "chr21_chr21" and new.tasks[0].id == "chr21_chr21_ID0000001"
    strip = {t.id: o.id for t, o in zip(new.tasks, old.tasks, strict=True)}
    assert {(strip[p], strip[c]) for p, c in edges(new)} == edges(old)
    assert [t.work for t in old.tasks] == [t.work for t in new.tasks]
    assert old.total_bytes == new.total_bytes  # Pegasus sizes are bytes in both eras
    assert old.topological_order[0] == "fastqSplit_fastqSplit_HEP2_MSP1_Digests_s_1_sequence"
    assert len(old.topological_order) == 9 and len(edges(old)) == 8
