"""v1 embedder: the shipped policy network's GNN encoder, and the store switching to it for good.

Everything here is real: the shipped checkpoint, WfCommons and shape workflows, the simulator
(through seeding), Chroma on temporary directories, and the CLI.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kb.decisions import decisions_from_case
from kb.embedders import embedder_by_name, registry_name
from kb.embedding import StructuralEmbedder
from kb.embedding_gnn import GnnEmbedder
from kb.records import workflow_hash
from kb.seed import SeedConfig, resolve_platform, seed_knowledge_base
from kb.store import KnowledgeBase
from sim.errors import InputError
from sim.recipes import generate_recipe

SEEDED = SeedConfig(
    count=40,
    recipes=("epigenomics", "blast"),
    shapes=("fork-join", "layered", "chain"),
    platforms=("homo-4", "hetero-8@0"),
    schedulers=("heft", "slurm", "wass", "random"),
    sizes=(50,),
    jobs=1,
    batch=40,
    decisions_per_case=2,
)
"""10 workflows x 4 schedulers: two WfCommons recipes and three shapes on two platforms."""

pytestmark = pytest.mark.xdist_group("gnn-embedder")


@pytest.fixture(scope="module")
def gnn() -> GnnEmbedder:
    """The shipped checkpoint's encoder (loading torch and the network once per module)."""
    embedder = embedder_by_name("gnn-v1")
    assert isinstance(embedder, GnnEmbedder)
    return embedder


@pytest.fixture(scope="module")
def seeded_v0(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 40-case store seeded through the simulator with v0 (copied by each test using it)."""
    directory = tmp_path_factory.mktemp("seeded") / "kb"
    kb = KnowledgeBase(directory)
    assert seed_knowledge_base(kb, SEEDED).added == 40
    kb.close()
    return directory


def _copy(store: Path, tmp_path: Path) -> Path:
    target = tmp_path / "kb"
    shutil.copytree(store, target)
    return target


def test_rows_are_deterministic_unit_vectors_of_the_declared_width(gnn: GnnEmbedder) -> None:
    platform = resolve_platform("hetero-8@0")
    pairs = [(generate_recipe(r, 60, 1), platform) for r in ("montage", "epigenomics", "blast")]
    first, again = gnn.embed_cases(pairs), gnn.embed_cases(pairs)
    assert first.shape == (3, gnn.dim) and gnn.dim == 192 and first.dtype == np.float32
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(first, again)
    assert gnn.embed_cases([]).shape == (0, gnn.dim)


def test_different_workflows_differ_and_a_regenerated_one_matches(gnn: GnnEmbedder) -> None:
    platform = resolve_platform("homo-4")
    montage, blast = generate_recipe("montage", 60, 1), generate_recipe("blast", 50, 1)
    rebuilt = generate_recipe("montage", 60, 1)
    assert rebuilt is not montage and workflow_hash(rebuilt) == workflow_hash(montage)
    a, b, c = gnn.embed_cases([(montage, platform), (blast, platform), (rebuilt, platform)])
    assert np.array_equal(a, c)
    assert float(a @ b) < 0.9999
    other_platform = gnn.embed_cases([(montage, resolve_platform("hetero-8@0"))])[0]
    assert not np.array_equal(a, other_platform)


def test_decisions_use_the_v0_decision_embedding(gnn: GnnEmbedder, seeded_v0: Path) -> None:
    kb = KnowledgeBase(seeded_v0)
    case = next(iter(kb.get_cases(sorted(kb.sidecar.ids())[:1]).values()))
    kb.close()
    states = [d.state for d in decisions_from_case(case, limit=5)]
    assert gnn.decision_dim == StructuralEmbedder.decision_dim
    assert np.array_equal(gnn.embed_decisions(states), StructuralEmbedder().embed_decisions(states))


def test_the_checksum_follows_the_checkpoint_bytes_not_its_path(
    gnn: GnnEmbedder, tmp_path: Path
) -> None:
    import torch

    copy = tmp_path / "copy.pt"
    shutil.copyfile(gnn.checkpoint, copy)
    same = embedder_by_name(f"gnn-v1:{copy}")
    assert same.checksum == gnn.checksum and len(gnn.checksum) == 12
    assert registry_name(gnn) == "gnn-v1" and registry_name(same) == f"gnn-v1:{copy}"
    blob = torch.load(copy, weights_only=True)
    blob["state"]["eft_prior"] = blob["state"]["eft_prior"] + 1.0
    torch.save(blob, copy)
    assert embedder_by_name(f"gnn-v1:{copy}").checksum != gnn.checksum
    with pytest.raises(InputError, match="no policy checkpoint"):
        embedder_by_name(f"gnn-v1:{tmp_path / 'missing.pt'}")


def test_reembedding_keeps_every_case_first_for_its_workflow_and_sticks(
    gnn: GnnEmbedder, seeded_v0: Path, tmp_path: Path
) -> None:
    directory = _copy(seeded_v0, tmp_path)
    kb = KnowledgeBase(directory)
    assert kb.embedder.name == "structural-v0"  # no record: a store filled by v0
    done: list[int] = []
    kb.reembed(gnn, progress=done.append)
    assert sum(done) == kb.count() + kb.sidecar.count("decisions")
    # Only gnn-v1's collections are left: its case shards (one per platform family) and its
    # decisions.
    names = kb.collection_names()
    assert names[-1] == f"decisions-gnn-v1-{gnn.checksum}"
    assert names[:-1] and all(n.startswith(f"cases-gnn-v1-{gnn.checksum}.") for n in names[:-1])
    kb.close()

    reopened = KnowledgeBase(directory)  # not told which embedder: the record says gnn-v1
    assert reopened.embedder.name == "gnn-v1" and reopened.embedder.checksum == gnn.checksum
    assert reopened.cases.count() == reopened.count() == 40
    cases = reopened.get_cases(sorted(reopened.sidecar.ids()))
    for case in list(cases.values())[::4]:
        (hit,) = reopened.query(case.workflow, case.platform, k=1)
        assert cases[hit.case_id].workflow_hash == case.workflow_hash
        assert hit.similarity > 1 - 1e-5
    reopened.close()


def test_seeding_into_a_gnn_store_embeds_with_gnn(gnn: GnnEmbedder, tmp_path: Path) -> None:
    kb = KnowledgeBase(tmp_path / "kb", embedder=gnn)
    small = SeedConfig(**{**SEEDED.__dict__, "count": 8, "recipes": ()})
    assert seed_knowledge_base(kb, small).added == 8  # workers embed with v0; the store redoes it
    case = next(iter(kb.get_cases(sorted(kb.sidecar.ids())[:1]).values()))
    stored = kb.cases.get(ids=[case.case_id], include=["embeddings"])["embeddings"][0]
    assert np.allclose(stored, gnn.embed_cases([(case.workflow, case.platform)])[0], atol=1e-6)
    kb.close()


def test_an_interrupted_reembed_leaves_the_old_embedder_in_charge(
    gnn: GnnEmbedder, seeded_v0: Path, tmp_path: Path
) -> None:
    directory = _copy(seeded_v0, tmp_path)
    kb = KnowledgeBase(directory)

    def interrupt(_: int) -> None:
        raise KeyboardInterrupt  # as if killed after the cases, before the decisions

    with pytest.raises(KeyboardInterrupt):
        kb.reembed(gnn, progress=interrupt)
    kb.close()
    reopened = KnowledgeBase(directory)
    assert reopened.embedder.name == "structural-v0" and reopened.cases.count() == 40
    case = next(iter(reopened.get_cases(sorted(reopened.sidecar.ids())[:1]).values()))
    assert reopened.query(case.workflow, case.platform, k=1)[0].similarity > 1 - 1e-5
    reopened.reembed(gnn)  # resumes: fills only what the gnn collections lack
    reopened.close()
    switched = KnowledgeBase(directory)
    assert switched.embedder.name == "gnn-v1" and switched.decisions.count() == 80
    switched.close()


def test_a_recorded_checkpoint_that_vanished_or_changed_is_an_input_error(
    gnn: GnnEmbedder, seeded_v0: Path, tmp_path: Path
) -> None:
    import torch

    directory = _copy(seeded_v0, tmp_path)
    checkpoint = tmp_path / "trained.pt"
    shutil.copyfile(gnn.checkpoint, checkpoint)
    kb = KnowledgeBase(directory)
    kb.reembed(embedder_by_name(f"gnn-v1:{checkpoint}"))
    kb.close()

    blob = torch.load(checkpoint, weights_only=True)
    blob["state"]["eft_prior"] = blob["state"]["eft_prior"] * 2
    torch.save(blob, checkpoint)  # retrained in place: a different space
    with pytest.raises(InputError, match="kb reembed --embedder structural-v0") as changed:
        KnowledgeBase(directory)
    assert "checksum" in str(changed.value) and "\n" not in str(changed.value)
    checkpoint.unlink()
    with pytest.raises(InputError, match="cannot be rebuilt"):
        KnowledgeBase(directory)

    from wass_chat.cli import main

    assert main(["kb", "reembed", "--embedder", "structural-v0", "--kb", str(directory)]) == 0
    recovered = KnowledgeBase(directory)  # the gnn vectors went with their checkpoint
    assert recovered.embedder.name == "structural-v0" and recovered.cases.count() == 40
    assert all(
        n.startswith(("cases-structural-v0-", "decisions-structural-v0-"))
        for n in recovered.collection_names()
    )
    recovered.close()


def test_the_cli_reembeds_reports_counts_and_recovers_a_broken_store(
    seeded_v0: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wass_chat.cli import main

    directory = _copy(seeded_v0, tmp_path)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["kb", *args, "--kb", str(directory)])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = run("reembed", "--embedder", "gnn-v1", "--json")
    data = json.loads(out)
    assert code == 0 and data["embedder"] == "gnn-v1" and data["cases"] == 40
    assert data["decisions"] == 40 * SEEDED.decisions_per_case and data["cases_per_second"] > 0
    stats = json.loads(run("stats", "--json")[1])
    assert stats["embedder"] == {"name": "gnn-v1", "checksum": data["checksum"], "spec": "gnn-v1"}

    code, _, err = run("reembed", "--embedder", "gnn-v1", "--checkpoint", str(tmp_path / "x.pt"))
    assert code == 2 and "no policy checkpoint" in err and err.count("\n") == 1
    code, out, _ = run("reembed", "--embedder", "structural-v0", "--json")
    assert code == 0 and json.loads(out)["cases"] == 40
    reopened = KnowledgeBase(directory)
    assert reopened.embedder.name == "structural-v0"
    assert reopened.collection_names()[0].startswith("cases-structural-v0-")
    reopened.close()
