"""The agent on a site's served knowledge base (``chroma_mode = "http"``): it reads the cases
another client stored there, and unpacks no demo store into its own home."""

from __future__ import annotations

from pathlib import Path

from kb.chroma_client import ChromaTarget
from kb.store import KnowledgeBase
from tests.kb.conftest import make_case
from tests.kb.served_server import served_kb
from wass_chat.agent.facts.sources import Sources
from wass_chat.config import Settings

kb_server = served_kb


def test_the_agent_reads_the_served_store(kb_server: ChromaTarget, tmp_path: Path) -> None:
    writer = KnowledgeBase(kb_server)
    cases = [make_case(seed) for seed in range(6)]
    assert writer.add_cases(cases) == 6
    home = tmp_path / "sysadmin-2"
    settings = Settings(
        home=home, chroma_mode="http", chroma_host=kb_server.host, chroma_port=kb_server.port
    )
    kb = Sources(settings).knowledge_base
    assert kb.count() == 6 and kb.sidecar.ids() == {c.case_id for c in cases}
    assert kb.query(cases[3].workflow, cases[3].platform, k=1)[0].case_id == cases[3].case_id
    assert not (home / "kb").exists()  # no demo store, no sidecar: all on the server
