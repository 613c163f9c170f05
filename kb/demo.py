"""A small knowledge base over the embedded demo, shipped ready-made so a first answer is quick.

The agent and the TUI retrieve from it offline: the shipped demo workflows under every
registered scheduler, plus small synthetic shapes under the schedulers the paper compares, all
on the demo platform. Simulating them takes about a minute on two cores (the search-based
learned schedulers dominate), so the finished cases ship in the package twice, both written by
``scripts/make-demo-kb`` and kept equal by tests:

* ``demo-cases.npz``, the portable source: encoded bodies and embeddings as plain arrays.
  :func:`ensure_demo_kb` loads it into any knowledge base (about 3 s: Chroma's import and
  inserts), and seeds whatever it lacks (a scheduler added since it was written);
* ``demo-kb.tar.gz``, the same cases as a finished on-disk store (Chroma's files and the
  sidecar). :func:`install_demo_store` unpacks it in milliseconds: it is how a fresh data home
  gets its knowledge base before the first answer (under 5 s, issue 20).
"""

from __future__ import annotations

import gzip
import tarfile
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np

from kb.codec import case_from_bytes
from kb.decisions import decisions_from_case
from kb.seed import (
    SeedConfig,
    SeedJob,
    SeedReport,
    WorkflowSpec,
    pending_jobs,
    run_job,
    run_seed_jobs,
)
from kb.sidecar import Sidecar
from kb.store import SIDECAR_FILE, KnowledgeBase
from sim.model import Workflow

DEMO_SHAPES = ("chain", "fan-out", "fan-in", "fork-join", "layered", "genomics")
DEMO_SHAPE_SIZES = (10, 20, 30)
DEMO_SEEDS = 3
DEMO_SHAPE_SCHEDULERS = ("heft", "wass", "slurm", "random")
DEMO_ASSET = "demo-cases.npz"
DEMO_STORE = "demo-kb.tar.gz"
DEMO_SEED_CONFIG = SeedConfig(count=0, jobs=1, platforms=("demo",))
"""How the demo cases are simulated (the asset holds exactly these)."""


def demo_jobs() -> list[SeedJob]:
    """The demo knowledge base's seed plan (about 250 cases)."""
    from policy.registry import scheduler_names
    from sim.demo import demo_workflow, demo_workflow_names

    jobs = [
        SeedJob(
            WorkflowSpec(f"demo:{name}", len(demo_workflow(name)), 0), "demo", scheduler_names()
        )
        for name in demo_workflow_names()
    ]
    shapes = {
        WorkflowSpec.sized(shape, size, seed)
        for shape in DEMO_SHAPES
        for size in DEMO_SHAPE_SIZES
        for seed in range(DEMO_SEEDS)
    }
    jobs += [
        SeedJob(spec, "demo", DEMO_SHAPE_SCHEDULERS) for spec in sorted(shapes, key=lambda s: s.key)
    ]
    return jobs


def demo_asset_path() -> Path:
    return Path(str(resources.files("kb").joinpath(DEMO_ASSET)))


def demo_store_path() -> Path:
    return Path(str(resources.files("kb").joinpath(DEMO_STORE)))


def write_demo_store(path: Path, asset: Path | None = None) -> int:
    """Load the demo asset into a fresh knowledge base and pack its directory as ``path`` (a
    gzipped tar with fixed owners and times, so equal stores pack alike); returns the cases."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "kb"
        kb = KnowledgeBase(store)
        try:
            count = load_demo_asset(kb, asset)
        finally:
            kb.close()

        def normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            return info

        with gzip.GzipFile(path, "wb", mtime=0) as raw, tarfile.open(fileobj=raw, mode="w") as tar:
            for member in sorted(store.rglob("*")):
                tar.add(
                    member,
                    arcname=str(member.relative_to(store)),
                    recursive=False,
                    filter=normalised,
                )
    return count


def stored_case_ids(store: Path | None = None) -> set[str]:
    """The case ids in the shipped demo store's sidecar (unpacked into a scratch directory)."""
    with tempfile.TemporaryDirectory() as tmp:
        install_demo_store(Path(tmp) / "kb", store)
        sidecar = Sidecar(Path(tmp) / "kb" / SIDECAR_FILE)
        try:
            return sidecar.ids()
        finally:
            sidecar.close()


def install_demo_store(target: Path, store: Path | None = None) -> None:
    """Unpack the shipped demo store into the directory ``target`` (which must not exist).

    Raises :class:`OSError`, :class:`EOFError` or :class:`tarfile.TarError` if the archive is
    missing, cut short or broken;
    the caller unpacks into a scratch directory and renames it, so a failure leaves nothing.
    """
    target.mkdir(parents=True)
    with tarfile.open(store or demo_store_path(), "r:gz") as tar:
        tar.extractall(target, filter="data")


DEMO_WRITER = "wass-chat demo"
"""Who the shipped demo cases say wrote them (not the machine that regenerated them)."""


def write_demo_asset(path: Path) -> int:
    """Simulate every demo case (about a minute) and save them as ``path``; returns the count.

    The file holds each case's encoded body (concatenated, with offsets) and its structural
    embedding: plain arrays, so loading it needs no pickle.
    """
    bodies: list[bytes] = []
    embeddings = []
    for job in demo_jobs():
        done = run_job(
            job, DEMO_SEED_CONFIG.network_model, DEMO_SEED_CONFIG.decisions_per_case, by=DEMO_WRITER
        )
        bodies += done.bodies
        embeddings.append(done.embeddings)
    offsets = np.cumsum([0, *(len(b) for b in bodies)])
    np.savez_compressed(
        path,
        bodies=np.frombuffer(b"".join(bodies), dtype=np.uint8),
        offsets=offsets.astype(np.int64),
        embeddings=np.concatenate(embeddings).astype(np.float32),
    )
    return len(bodies)


def read_demo_asset(path: Path | None = None) -> tuple[list[bytes], np.ndarray]:
    """The shipped demo cases: encoded bodies and their embeddings (one row each)."""
    with np.load(path or demo_asset_path(), allow_pickle=False) as data:
        blob, offsets = data["bodies"].tobytes(), data["offsets"]
        embeddings = np.asarray(data["embeddings"])
    bodies = [blob[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    return bodies, embeddings


def load_demo_asset(kb: KnowledgeBase, path: Path | None = None) -> int:
    """Store the shipped demo cases (and their decisions) in ``kb``; returns cases added."""
    bodies, embeddings = read_demo_asset(path)
    workflows: dict[str, Workflow] = {}  # one parse per workflow, not per case
    cases = [case_from_bytes(body, workflows) for body in bodies]
    decisions = [
        d for case in cases for d in decisions_from_case(case, DEMO_SEED_CONFIG.decisions_per_case)
    ]
    return kb.add_cases(cases, embeddings=embeddings, decisions=decisions, bodies=bodies)


def ensure_demo_kb(path: Path) -> SeedReport:
    """Fill the demo knowledge base at ``path`` unless every demo case is already there: load
    the shipped cases, then seed whatever the asset lacks."""
    kb = KnowledgeBase(path)
    try:
        jobs = demo_jobs()
        loaded = load_demo_asset(kb) if pending_jobs(kb, jobs) else 0
        report = run_seed_jobs(kb, jobs, DEMO_SEED_CONFIG)
        report.added += loaded
        report.skipped = report.planned - report.added  # every other planned case was there
        return report
    finally:
        kb.close()
