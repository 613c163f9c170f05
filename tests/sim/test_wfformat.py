"""WfFormat reading (1.4, 1.5, 1.6), writing (1.5, 1.6), exact round trips, and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.errors import WorkflowError
from sim.model import REFERENCE_SPEED, File, Task, Workflow
from sim.shapes import SHAPES, generate_shape
from sim.wfformat import (
    dumps_workflow,
    loads_workflow,
    read_workflow,
    runtime_reproducing,
    workflow_from_dict,
    workflow_to_dict,
)

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("version", ["1.4", "1.5", "1.6"])
def test_every_readable_version_gives_the_same_graph(version: str) -> None:
    wf = read_workflow(DATA / f"blast-mini-v{version}.json")
    assert [t.category for t in wf.tasks] == ["split_fasta", "blastall", "blastall", "cat_blast"]
    assert [t.work / REFERENCE_SPEED for t in wf.tasks] == [2.5, 20.0, 18.0, 1.0]
    assert [t.cores for t in wf.tasks] == [1, 2, 2, 1]  # coreCount 1.5 reserves 2 cores
    assert wf.tasks[0].memory == 1048576
    assert wf.tasks[0].command == ("split_fasta", "query.fa")
    assert all(t.parents == () for t in wf.tasks)  # every dependency is carried by a file
    last = wf.tasks[-1].id
    assert len(wf.parents[last]) == 2
    assert wf.edge_bytes(wf.tasks[0].id, wf.tasks[1].id) == 2000
    assert wf.input_files == ("query.fa", "/data/db.fa")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("version", ["1.5", "1.6"])
def test_generated_shapes_round_trip_exactly(shape: str, version: str) -> None:
    wf = generate_shape(shape, None, seed=5)
    assert loads_workflow(dumps_workflow(wf, version)) == wf


def test_written_documents_follow_the_1_6_layout() -> None:
    doc = workflow_to_dict(generate_shape("fork-join", 6, seed=1))
    spec, execution = doc["workflow"]["specification"], doc["workflow"]["execution"]
    assert doc["schemaVersion"] == "1.6"
    assert {"name", "id", "parents", "children", "inputFiles", "outputFiles"} <= set(
        spec["tasks"][0]
    )
    assert spec["metrics"]["numberOfLevels"] == 3
    assert spec["metrics"]["maximumWidth"] == 4
    assert {"makespanInSeconds", "executedAt", "tasks"} <= set(execution)
    assert all("runtimeInSeconds" in t for t in execution["tasks"])


def test_explicit_parent_redundant_with_a_file_is_dropped_on_read() -> None:
    wf = Workflow(
        "w",
        (Task("a", 1.0, outputs=("f",)), Task("b", 1.0, inputs=("f",), parents=("a",))),
        (File("f", 1),),
    )
    back = loads_workflow(dumps_workflow(wf))
    assert back.tasks[1].parents == ()
    assert back.parents == wf.parents


def test_runtime_that_no_float_reproduces_falls_back_to_work_in_flop() -> None:
    work = next(
        w for w in (i * 0.1 + 1e3 for i in range(1, 10_000)) if not runtime_reproducing(w, 3)[1]
    )
    wf = Workflow("w", (Task("t", work, cores=3),), ())
    entry = workflow_to_dict(wf)["workflow"]["execution"]["tasks"][0]
    assert entry["workInFlop"] == work
    assert loads_workflow(dumps_workflow(wf)).tasks[0].work == work


ids = st.text(alphabet="abcdefgh0123456789_.-", min_size=1, max_size=6)


@st.composite
def random_dags(draw: Any) -> Workflow:
    """DAGs in the reader's canonical form: explicit parents only where no file links them."""
    task_ids = draw(st.lists(ids, min_size=1, max_size=12, unique=True))
    tasks: list[Task] = []
    files: list[File] = []
    for i, tid in enumerate(task_ids):
        earlier = task_ids[:i]
        data_parents = (
            draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3)) if earlier else []
        )
        control = [
            p
            for p in (
                draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)) if earlier else []
            )
            if p not in data_parents
        ]
        inputs = [f"{p}>{tid}" for p in data_parents]
        if draw(st.booleans()):
            inputs.append(f"in:{tid}")
            files.append(File(f"in:{tid}", draw(st.integers(0, 2**40))))
        tasks.append(
            Task(
                id=tid,
                work=draw(st.floats(0, 1e15, allow_nan=False, allow_infinity=False)),
                name=draw(st.sampled_from(["", "step", "align reads"])),
                category=draw(st.sampled_from(["", "align", "sort"])),
                cores=draw(st.integers(1, 64)),
                memory=draw(st.integers(0, 2**40)),
                gpus=draw(st.integers(0, 4)),
                inputs=tuple(inputs),
                parents=tuple(control),
                command=draw(
                    st.one_of(
                        st.none(),
                        st.tuples(st.just("")),
                        st.lists(st.text(" abc-=$();'\"", max_size=8), min_size=1, max_size=4).map(
                            tuple
                        ),
                    )
                ),
            )
        )
    for t in tasks:  # outputs: every file a later task reads from t
        outs = tuple(f for other in tasks for f in other.inputs if f.startswith(f"{t.id}>"))
        files += [File(f, draw(st.integers(0, 2**40))) for f in outs]
        tasks[tasks.index(t)] = Task(**{**_fields(t), "outputs": outs})
    return Workflow(
        draw(st.sampled_from(["w", "random dag"])),
        tuple(tasks),
        tuple(files),
        draw(st.sampled_from(["", "a description"])),
    )


def _fields(t: Task) -> dict[str, Any]:
    return {name: getattr(t, name) for name in Task.__slots__}


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(wf=random_dags(), version=st.sampled_from(["1.5", "1.6"]))
def test_property_random_dag_write_read_is_identity(wf: Workflow, version: str) -> None:
    assert loads_workflow(dumps_workflow(wf, version)) == wf


# --- invalid input: one error naming every offender ---------------------------------------


def valid_doc() -> dict[str, Any]:
    return json.loads((DATA / "blast-mini-v1.6.json").read_text())


def problems(doc: Any) -> str:
    with pytest.raises(WorkflowError) as info:
        workflow_from_dict(doc, "case.json")
    assert info.value.subject == "case.json"
    return " | ".join(info.value.problems)


def spec_task(doc: dict[str, Any], i: int) -> dict[str, Any]:
    task: dict[str, Any] = doc["workflow"]["specification"]["tasks"][i]
    return task


def test_cycle_is_named() -> None:
    doc = valid_doc()
    spec_task(doc, 0)["parents"] = ["cat_blast_ID0000004"]
    assert (
        "cycle split_fasta_ID0000001 -> blastall_ID0000002 -> cat_blast_ID0000004 -> "
        "split_fasta_ID0000001" in problems(doc)
    )


def test_dangling_file_and_parent_and_child_are_named() -> None:
    doc = valid_doc()
    spec_task(doc, 1)["inputFiles"].append("missing.fa")
    spec_task(doc, 2)["parents"].append("ghost")
    spec_task(doc, 3)["children"] = ["phantom"]
    text = problems(doc)
    assert "task 'blastall_ID0000002' reads unknown file 'missing.fa'" in text
    assert "task 'blastall_ID0000003' has unknown parent 'ghost'" in text
    assert "task 'cat_blast_ID0000004' has unknown child 'phantom'" in text


def test_duplicate_ids_and_negative_values_are_named() -> None:
    doc = valid_doc()
    doc["workflow"]["specification"]["tasks"].append(dict(spec_task(doc, 3)))
    doc["workflow"]["specification"]["files"][0]["sizeInBytes"] = -1
    doc["workflow"]["execution"]["tasks"][1]["runtimeInSeconds"] = -4
    text = problems(doc)
    assert "duplicate task id 'cat_blast_ID0000004'" in text
    assert "file 'query.fa' has negative size -1" in text
    assert "task 'blastall_ID0000002' has negative" in text


def test_missing_fields_and_wrong_types_are_all_reported() -> None:
    doc = valid_doc()
    del spec_task(doc, 0)["children"]
    spec_task(doc, 1)["inputFiles"] = "part1.fa"
    doc["workflow"]["execution"]["tasks"][2]["runtimeInSeconds"] = "ten"
    doc["workflow"]["execution"]["tasks"].pop()
    text = problems(doc)
    assert "task 'split_fasta_ID0000001': missing 'children'" in text
    assert "task 'blastall_ID0000002': 'inputFiles' must be a list of strings" in text
    assert "'runtimeInSeconds' must be a finite number, got 'ten'" in text
    assert "task 'cat_blast_ID0000004': no execution entry" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"name": ', "malformed JSON"),
        ("[1, 2]", "top level must be a JSON object"),
        ('{"name": "x", "schemaVersion": "2.0", "workflow": {}}', "unknown schemaVersion '2.0'"),
        ('{"name": "x", "workflow": {}}', "missing 'schemaVersion'"),
    ],
)
def test_unreadable_documents(text: str, expected: str) -> None:
    with pytest.raises(WorkflowError) as info:
        loads_workflow(text, "bad.json")
    assert expected in info.value.one_line()


def test_unreadable_file_is_a_workflow_error(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match="cannot read file"):
        read_workflow(tmp_path / "absent.json")


def test_v14_problems_name_task_and_file() -> None:
    doc = json.loads((DATA / "blast-mini-v1.4.json").read_text())
    tasks = doc["workflow"]["tasks"]
    tasks[1]["files"][0]["link"] = "sideways"
    tasks[2]["parents"] = ["nobody"]
    del tasks[3]["runtimeInSeconds"]
    text = problems(doc)
    assert "task 'blastall_ID0000002' file 'part1.fa': 'link' must be 'input' or 'output'" in text
    assert "task 'blastall_ID0000003' has unknown parent 'nobody'" in text
    assert "task 'cat_blast_ID0000004': missing 'runtimeInSeconds'" in text
