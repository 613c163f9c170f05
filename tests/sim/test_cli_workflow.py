"""`wass-chat workflow ...` and `wass-chat platform ...`, run in-process through main()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.platforms import load_platform
from sim.wfformat import read_workflow
from wass_chat.cli import main

DATA = Path(__file__).parent / "data"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main([*argv, "--json"]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_generate_shape_then_show_and_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fj.json"
    made = run_json(
        capsys,
        "workflow",
        "generate",
        "fork-join",
        "--tasks",
        "12",
        "--seed",
        "3",
        "--ccr",
        "0.5",
        "-o",
        str(out),
        "--schema-version",
        "1.5",
    )
    assert made["tasks"] == 12 and made["schemaVersion"] == "1.5"
    assert json.loads(out.read_text())["schemaVersion"] == "1.5"
    assert len(read_workflow(out)) == 12
    shown = run_json(capsys, "workflow", "show", str(out))
    assert shown["depth"] == 3 and shown["width"] == 10
    assert shown["ccr_reference"] == pytest.approx(0.5)
    assert shown["platform"] == "demo-cluster"
    assert run_json(capsys, "workflow", "validate", str(out))["valid"] is True


def test_show_a_demo_workflow_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workflow", "show", "demo:genomics-49"]) == 0
    assert "genomics-49" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["workflow", "generate", "montage", "--tasks", "10", "--seed", "1"],
        ["workflow", "generate", "spiral", "--tasks", "10"],
        ["workflow", "generate", "chain", "--tasks", "5", "--schema-version", "1.4"],
        ["workflow", "generate", "chain", "--tasks", "0"],
        ["platform", "generate", "--nodes", "2"],
        ["platform", "export-simgrid", "missing.yaml"],
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.file"
    assert main([*argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_validate_names_the_task_that_fits_no_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text("nodes:\n  - {name: n1, cores: 1, memory: 1GiB}\n")
    assert main(["workflow", "validate", "demo:genomics-49", "--platform", str(tiny)]) == 2
    err = capsys.readouterr().err
    assert "task 'align_00' needs 4 cores" in err


def test_validate_reports_a_broken_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((DATA / "blast-mini-v1.6.json").read_text())
    doc["workflow"]["specification"]["tasks"][0]["parents"] = ["cat_blast_ID0000004"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(doc))
    assert main(["workflow", "validate", str(broken)]) == 2
    assert "cycle split_fasta_ID0000001 ->" in capsys.readouterr().err


def test_platform_generate_show_and_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    made = run_json(
        capsys,
        "platform",
        "generate",
        "--nodes",
        "16",
        "--heterogeneous",
        "--seed",
        "2",
        "-o",
        str(path),
    )
    assert made["nodes"] == 16 and load_platform(path).name == made["name"]
    shown = run_json(capsys, "platform", "show", str(path))
    assert len(shown["node_list"]) == 16  # type: ignore[arg-type]
    xml = tmp_path / "cluster.xml"
    exported = run_json(capsys, "platform", "export-simgrid", str(path), "-o", str(xml))
    assert exported["hosts"] == 17
    assert xml.read_text().count("<host ") == 17
