"""Every WfFormat version WfCommons' instance collections hold, read from trimmed real runs.

Fixtures and their origins: tests/sim/fixtures/wfformat/README.md.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from sim.errors import WorkflowError
from sim.model import REFERENCE_SPEED, Workflow
from sim.wfformat import loads_workflow, read_workflow, version_from_layout, workflow_from_dict
from sim.wfformat_refs import task_ids
from wass_chat.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "wfformat"
NF = "NFCORE_BACASS.BACASS."


def fixture(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return doc


def edges(wf: Workflow) -> set[tuple[str, str]]:
    return {(p, child) for child, ps in wf.parents.items() for p in ps}


def problems(doc: Any) -> list[str]:
    with pytest.raises(WorkflowError) as info:
        workflow_from_dict(doc, "case.json")
    return list(info.value.problems)


# --- each version reads to the right tasks, runtimes, files and dependencies -------------

BLAST = ["split_fasta_ID000001", "blastall_ID000002", "blastall_ID000003", "blastall_ID000004"]
BLAST_EDGES = {(BLAST[0], b) for b in BLAST[1:]}
CYCLES = [
    "baseline_cycles_ID0000001",
    "cycles_ID0000002",
    "fertilizer_increase_cycles_ID0000003",
    "cycles_fertilizer_increase_output_parser_ID0000004",
]


@pytest.mark.parametrize(
    ("name", "version", "ids", "runtimes", "memory", "dependencies"),
    [
        (
            "workflowhub-v0.2.json",
            "0.2",
            ["baseline_cycles_ID0000001", "cycles_ID0000002", "cleanup_ID0000003"],
            [12.16, 1.497, 0.05],
            4_840_000,
            {
                ("baseline_cycles_ID0000001", "cycles_ID0000002"),
                ("cycles_ID0000002", "cleanup_ID0000003"),
            },
        ),
        (
            "pegasus-cycles-v1.0.json",
            "1.0",
            CYCLES,
            [12.16, 1.497, 1.558, 0.05],
            0,
            {
                (CYCLES[0], CYCLES[1]),
                (CYCLES[0], CYCLES[2]),
                (CYCLES[1], CYCLES[3]),
                (CYCLES[2], CYCLES[3]),
            },
        ),
        (
            "makeflow-blast-v1.0.json",
            "1.0",
            BLAST,
            [0.051992, 9.417957, 9.04564, 8.512346],
            3_000_000,
            BLAST_EDGES,
        ),
        (
            "makeflow-blast-v1.2.json",
            "1.2",
            BLAST,
            [0.054023, 9.798843, 9.187734, 9.941506],
            3_000_000,
            BLAST_EDGES,
        ),
        (
            "makeflow-blast-v1.3.json",
            "1.3",
            BLAST,
            [0.054023, 9.798843, 9.187734, 9.941506],
            3_000_000,
            BLAST_EDGES,
        ),
        (
            "makeflow-blast-v1.4.json",
            "1.4",
            BLAST,
            [0.054023, 9.798843, 9.187734, 9.941506],
            3_000_000,
            BLAST_EDGES,
        ),
        (
            "makeflow-blast-v1.5.json",
            "1.5",
            BLAST,
            [0.054023, 9.798843, 9.187734, 9.941506],
            3_000_000,
            BLAST_EDGES,
        ),
    ],
)
def test_each_version_reads_tasks_runtimes_memory_and_dependencies(
    name: str,
    version: str,
    ids: list[str],
    runtimes: list[float],
    memory: int,
    dependencies: set[tuple[str, str]],
) -> None:
    wf = read_workflow(FIXTURES / name)
    assert wf.meta["schemaVersion"] == version
    assert [t.id for t in wf.tasks] == ids
    assert [t.runtime for t in wf.tasks] == pytest.approx(runtimes)
    assert [t.work for t in wf.tasks] == pytest.approx([r * REFERENCE_SPEED for r in runtimes])
    assert wf.tasks[0].memory == memory
    assert edges(wf) == dependencies


def test_pre_1_2_files_take_their_command_from_arguments_and_category_from_the_name() -> None:
    wf = read_workflow(FIXTURES / "pegasus-cycles-v1.0.json")
    assert [t.category for t in wf.tasks] == [
        "baseline_cycles",
        "cycles",
        "fertilizer_increase_cycles",
        "cycles_fertilizer_increase_output_parser",
    ]
    assert wf.tasks[1].command == (
        "cycles",
        "--baseline",
        "False",
        "--id",
        "7ad729864a79597b71b8b8d8d86d7738",
        "--crop",
        "Maize",
    )
    assert wf.tasks[0].name == ""  # the name is the id
    assert all(t.cores == 1 for t in wf.tasks)  # no `cores` in the file


def test_pegasus_sizes_are_bytes_and_other_pre_1_4_sizes_are_kilobytes() -> None:
    pegasus = read_workflow(FIXTURES / "pegasus-cycles-v1.0.json")
    assert pegasus.file_by_id["pongo.soil"].size == 739
    makeflow = read_workflow(FIXTURES / "makeflow-blast-v1.0.json")
    assert makeflow.file_by_id["small.fasta"].size == 203_000
    assert makeflow.file_by_id["nt"].size == 221_412_000
    assert makeflow.tasks[1].memory == 513_000_000


def test_an_input_listed_as_an_output_by_a_later_task_is_read_by_it() -> None:
    """Real Makeflow 1.0 runs list blastall's input chunk as one of its outputs."""
    wf = read_workflow(FIXTURES / "makeflow-blast-v1.0.json")
    blastall = wf.task_by_id["blastall_ID000002"]
    assert wf.producer["small.fasta.0"] == "split_fasta_ID000001"
    assert "small.fasta.0" in blastall.inputs and "small.fasta.0" not in blastall.outputs
    assert wf.edge_files[("split_fasta_ID000001", "blastall_ID000002")] == ("small.fasta.0",)


def test_a_1_5_conversion_keeps_that_input_as_an_output_and_reads_the_same() -> None:
    """WfCommons' 1.5 migration files every non-input link under ``outputFiles``."""
    doc = fixture("makeflow-blast-v1.5.json")
    blastall = doc["workflow"]["specification"]["tasks"][1]
    blastall["inputFiles"].remove("small.fasta.0")
    blastall["outputFiles"].append("small.fasta.0")
    wf = workflow_from_dict(doc)
    assert wf.producer["small.fasta.0"] == "split_fasta_ID000001"
    assert "small.fasta.0" in wf.task_by_id["blastall_ID000002"].inputs
    assert edges(wf) == edges(read_workflow(FIXTURES / "makeflow-blast-v1.5.json"))


def test_pegasus_1_4_reads_both_memory_spellings_and_parents_only_edges() -> None:
    doc = fixture("pegasus-srasearch-v1.4.json")
    wf = workflow_from_dict(doc)
    assert len(wf) == 6
    assert wf.task_by_id["fasterq-dump_ID0000002"].memory == 316_292_000
    assert wf.file_by_id["SRR3152133_1.fastq"].size == 547_827_304
    assert wf.parents["merge_ID0000022"] == ("bowtie2_ID0000003", "bowtie2_ID0000005")
    for task in doc["workflow"]["tasks"]:  # Pegasus 1.0 runs declare parents only
        del task["children"], task["memoryInBytes"]
    again = workflow_from_dict(doc)
    assert again.parents == wf.parents
    assert [t.memory for t in again.tasks] == [t.memory for t in wf.tasks]


# --- Nextflow: names repeat, ids do not ---------------------------------------------------

BACASS_EDGES = {  # WfCommons' own 1.6 conversion: WfInstances nextflow/legacy/bacass-dirt02-001
    ("FASTQC_2", "GET_SOFTWARE_VERSIONS_10"),
    ("FASTQC_2", "MULTIQC_11"),
    ("SKEWER_1", "UNICYCLER_5"),
    ("SKEWER_1", "GET_SOFTWARE_VERSIONS_10"),
    ("FASTQC_4", "MULTIQC_11"),
    ("SKEWER_3", "UNICYCLER_6"),
    ("UNICYCLER_5", "PROKKA_7"),
    ("UNICYCLER_5", "QUAST_9"),
    ("UNICYCLER_5", "GET_SOFTWARE_VERSIONS_10"),
    ("UNICYCLER_6", "QUAST_9"),
    ("UNICYCLER_6", "PROKKA_8"),
    ("PROKKA_7", "GET_SOFTWARE_VERSIONS_10"),
    ("QUAST_9", "GET_SOFTWARE_VERSIONS_10"),
    ("GET_SOFTWARE_VERSIONS_10", "MULTIQC_11"),
}


def test_nextflow_1_4_repeated_names_read_as_wfcommons_converts_them() -> None:
    wf = read_workflow(FIXTURES / "nextflow-bacass-v1.4.json")
    assert len(wf) == 11
    assert len({t.id for t in wf.tasks}) == 11
    assert [t.name for t in wf.tasks[:2]] == [NF + "FASTQC", NF + "SKEWER"]
    assert wf.tasks[0].id == NF + "FASTQC_2"
    assert wf.tasks[0].category == NF + "FASTQC"  # the program is a script, not a word
    assert sum(t.runtime for t in wf.tasks) == pytest.approx(3961.87)
    assert edges(wf) == {(NF + p, NF + c) for p, c in BACASS_EDGES}
    assert wf.file_by_id["/3d/7a64449bc37c576aba41bbd65e7f04/skewer.version.txt"].size == 6


def test_a_process_reference_joins_only_the_tasks_a_file_joins() -> None:
    doc = fixture("nextflow-bacass-v1.4.json")
    quast = next(t for t in doc["workflow"]["tasks"] if t["id"] == "9")
    quast["files"] = [f for f in quast["files"] if not f["name"].startswith("ERR064912")]
    gsv = next(t for t in doc["workflow"]["tasks"] if t["id"] == "10")
    gsv["parents"].append("NFCORE_BACASS.BACASS.CHECK_SAMPLESHEET")  # a process with no task
    gsv["files"] = [f for f in gsv["files"] if f["link"] == "output"]
    wf = workflow_from_dict(doc)
    assert wf.parents[NF + "QUAST_9"] == (NF + "UNICYCLER_5",)
    # the unique names GET_SOFTWARE_VERSIONS and MULTIQC are process names too
    assert wf.parents[NF + "GET_SOFTWARE_VERSIONS_10"] == ()


def test_references_may_be_ids_where_they_name_no_task() -> None:
    doc = fixture("nextflow-bacass-v1.4.json")
    multiqc = next(t for t in doc["workflow"]["tasks"] if t["id"] == "11")
    multiqc["parents"] = ["2", "4", "10"]
    multiqc["files"] = []
    wf = workflow_from_dict(doc)
    assert set(wf.parents[NF + "MULTIQC_11"]) == {
        NF + "FASTQC_2",
        NF + "FASTQC_4",
        NF + "GET_SOFTWARE_VERSIONS_10",
    }


def test_nextflow_1_2_ids_come_from_name_and_id_and_edges_from_names() -> None:
    wf = read_workflow(FIXTURES / "nextflow-rnaseq-v1.2.json")
    assert [t.id for t in wf.tasks][:2] == [
        "samplesheet_check_samplesheet_test.csv_ID000003",
        "gunzip_gtf_genes.gtf.gz_ID000004",
    ]
    assert [t.cores for t in wf.tasks] == [1, 2, 2, 2, 2]
    assert [t.memory for t in wf.tasks] == [10_572_000, 0, 3_016_000, 0, 7_192_000]
    assert wf.tasks[1].work == pytest.approx(21.986 * 2 * REFERENCE_SPEED)
    assert wf.files == () and len(edges(wf)) == 4
    assert wf.topological_order == tuple(t.id for t in wf.tasks)


def test_a_repeated_name_in_a_run_without_files_means_every_task_of_that_name() -> None:
    doc = fixture("nextflow-rnaseq-v1.2.json")
    jobs = doc["workflow"]["jobs"]
    jobs.append({**copy.deepcopy(jobs[-1]), "id": "ID000006"})  # the last process runs twice
    wf = workflow_from_dict(doc)
    star = "untar_star_index_star.tar.gz"
    gunzip = "gunzip_additional_fasta_gfp.fa.gz_ID000002"
    assert wf.parents[f"{star}_ID000005"] == (gunzip,)
    assert wf.parents[f"{star}_ID000006"] == (gunzip,)  # no file to join on: names still join
    assert len(edges(wf)) == 5


def test_task_ids_stay_unique_when_the_wfcommons_rule_collides() -> None:
    assert task_ids(["a_ID1", "b", "b", "x1"], [None, "7", "8", "1"]) == [
        "a_ID1",
        "b_7",
        "b_8",
        "x1",
    ]
    assert task_ids(["x1", "x1"], ["1", "1"]) == ["x1_0", "x1_1"]


# --- self-loops, cycles and malformed files ------------------------------------------------


def test_real_self_loops_are_named_in_one_error() -> None:
    text = " | ".join(problems(fixture("nextflow-rnaseq-selfloop-v1.2.json")))
    assert "task 'ucsc_bedclip_wt_rep1_ID000165' depends on itself" in text
    assert "task 'ucsc_bedgraphtobigwig_wt_rep1_ID000189' depends on itself" in text


def test_a_cycle_through_names_is_named() -> None:
    doc = fixture("pegasus-cycles-v1.0.json")
    doc["workflow"]["jobs"][0]["parents"] = [CYCLES[3]]
    assert problems(doc) == [f"cycle {CYCLES[0]} -> {CYCLES[1]} -> {CYCLES[3]} -> {CYCLES[0]}"]


def test_the_cli_refuses_a_self_loop_with_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = FIXTURES / "nextflow-rnaseq-selfloop-v1.2.json"
    assert main(["workflow", "show", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "ucsc_bedclip_wt_rep1_ID000165' depends on itself" in err


def test_a_malformed_legacy_file_names_every_problem_at_once() -> None:
    doc = fixture("makeflow-blast-v1.2.json")
    split, blast2, blast3, blast4 = doc["workflow"]["jobs"]
    del split["runtime"]
    blast2["files"][0]["link"] = "sideways"
    blast3["files"][1]["size"] = "big"
    blast3["parents"] = ["nobody"]
    blast4["cores"] = 0
    del blast4["name"]
    text = " | ".join(problems(doc))
    assert "task 'split_fasta_ID000001': missing 'runtime'" in text
    assert (
        "task 'blastall_ID000002' file 'small.fasta.0.out': 'link' must be 'input' or "
        "'output', got 'sideways'" in text
    )
    assert (
        "task 'blastall_ID000003' file 'small.fasta.1.err': 'size' must be a finite number" in text
    )
    assert "task 'blastall_ID000003' has unknown parent 'nobody'" in text
    assert "task '#3': 'cores' must be at least 1, got 0" in text
    assert "task '#3': missing 'name'" in text


def test_an_unreadable_task_list_is_named() -> None:
    doc = fixture("makeflow-blast-v1.2.json")
    doc["workflow"]["jobs"] = {"not": "a list"}
    assert "workflow: 'jobs' must be a list" in " | ".join(problems(doc))


# --- dispatch ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("makeflow-blast-v1.0.json", "1.0"),
        ("makeflow-blast-v1.3.json", "1.3"),
        ("makeflow-blast-v1.4.json", "1.4"),
        ("makeflow-blast-v1.5.json", "1.5"),
    ],
)
def test_a_file_without_schema_version_is_read_by_its_layout(name: str, layout: str) -> None:
    doc = fixture(name)
    declared = read_workflow(FIXTURES / name)
    del doc["schemaVersion"]
    assert version_from_layout(doc) == layout
    wf = workflow_from_dict(copy.deepcopy(doc))
    assert wf == declared and wf.meta["schemaVersion"] == layout


def test_a_layout_that_is_no_version_is_refused() -> None:
    with pytest.raises(WorkflowError, match="missing 'schemaVersion', and 'workflow' holds"):
        loads_workflow('{"name": "x", "workflow": {"steps": []}}', "x.json")
    with pytest.raises(
        WorkflowError,
        match=r"unknown schemaVersion '0\.9' \(readable: 0\.2, "
        r"1\.0, 1\.1, 1\.2, 1\.3, 1\.4, 1\.5, 1\.6\)",
    ):
        loads_workflow('{"name": "x", "schemaVersion": "0.9", "workflow": {}}', "x.json")


def test_an_auxiliary_task_of_a_workflowhub_0_2_trace_is_kept() -> None:
    wf = read_workflow(FIXTURES / "workflowhub-v0.2.json")
    cleanup = wf.task_by_id["cleanup_ID0000003"]
    assert cleanup.category == "cleanup" and cleanup.inputs == ()
    assert wf.file_by_id["cycles_exe"].size == 694_648  # a Pegasus trace: bytes
