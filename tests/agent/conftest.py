"""Shared fixtures of the agent tests: a data home with demo runs and a small seeded knowledge
base, settings pointing at an unreachable Ollama, and a recording ``sbatch`` on PATH."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from wass_chat.agent.facts.demo_runs import ensure_demo_runs
from wass_chat.config import Settings

UNREACHABLE = "http://127.0.0.1:9"
"""The discard port: nothing listens there, so connections are refused at once."""


def seed_demo_home(home: Path, settings: Settings) -> None:
    """The demo runs and a knowledge base seeded from real simulations, under ``home``."""
    from kb.seed import SeedConfig, seed_knowledge_base
    from kb.store import KnowledgeBase

    ensure_demo_runs(settings)
    kb = KnowledgeBase(settings.kb_dir)
    seed_knowledge_base(
        kb,
        SeedConfig(
            count=24,
            jobs=1,
            recipes=(),
            shapes=("fork-join", "genomics", "layered"),
            sizes=(20, 49),
        ),
    )
    kb.close()


@pytest.fixture(scope="session")
def agent_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home with the demo runs and a knowledge base seeded from real simulations."""
    home = tmp_path_factory.mktemp("wass-home")
    seed_demo_home(home, Settings(home=home, ollama_host=UNREACHABLE))
    return home


@pytest.fixture
def settings(agent_home: Path) -> Settings:
    """Settings on the shared data home; Ollama unreachable unless a test says otherwise."""
    return Settings(home=agent_home, ollama_host=UNREACHABLE, ollama_timeout=2.0)


def site_platform_file(folder: Path) -> Path:
    """The demo platform's nodes as a site's own platform file (``site-cluster``): a plan on it
    may be approved by a person; a plan on the embedded demo platform is never submitted."""
    from dataclasses import replace

    from sim.demo import demo_platform
    from sim.platforms import dumps_platform

    path = folder / "site-platform.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_platform(replace(demo_platform(), name="site-cluster"), as_json=True))
    return path


def submit_on_site(folder: Path, workflow: str = "fork-join-20") -> str:
    """The slash command that plans ``workflow`` on :func:`site_platform_file`."""
    return f"/submit {workflow} platform={site_platform_file(folder)}"


@dataclass(frozen=True)
class SbatchRecorder:
    """A fake ``sbatch`` executable on PATH that records every call's argv, one line each."""

    log: Path

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def sbatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SbatchRecorder]:
    """Slurm's CLI is an external process: replace ``sbatch`` (and only it) by a recorder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "sbatch-calls.txt"
    script = bin_dir / "sbatch"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"with open({str(log)!r}, 'a') as fh:\n"
        "    fh.write(' '.join(sys.argv[1:]) + '\\n')\n"
        f"count = sum(1 for _ in open({str(log)!r}))\n"
        "print(1000 + count)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    # No live cluster either: the Slurm tests' session fixture exports SLURM_CONF for the rest
    # of its worker, and a plan made on that cluster has none of the demo nodes these tests use.
    monkeypatch.delenv("SLURM_CONF", raising=False)
    monkeypatch.setenv("WASS_SLURM_PRECHECK", "off")  # no slurm.conf here: only sbatch stands in
    yield SbatchRecorder(log)
