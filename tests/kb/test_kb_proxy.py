"""The shared knowledge base behind scripts/kb-server's nginx proxy: TLS and bearer tokens.

Anonymous requests are refused whatever they do, a read token reads but never writes, a write
token does both, and the real client (kb.store over chromadb.HttpClient) works through it."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kb.chroma_client import AccessRefused, ChromaTarget
from kb.store import KnowledgeBase, StoreMissing
from sim.errors import ConfigError, ServiceUnavailable
from tests.kb.conftest import make_case
from tests.kb.served_server import SCRIPT, free_port
from wass_chat.secret_files import read_secret

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
# As root (CI) scripts/install-system-deps installs nginx, so a missing one fails there.
pytestmark = [
    pytest.mark.skipif(
        NGINX is None and os.geteuid() != 0, reason="no nginx (scripts/install-system-deps)"
    ),
    pytest.mark.xdist_group("kb_proxy"),  # one server for the module, in one worker
]

COLLECTIONS = "/api/v2/tenants/default_tenant/databases/default_database/collections"


@dataclass(frozen=True)
class Proxied:
    port: int
    cert: Path
    read: str
    write: str

    def target(self, token: str | None, tmp: Path, ca: bool = True) -> ChromaTarget:
        return ChromaTarget(
            tmp / "unused",
            "http",
            "127.0.0.1",
            self.port,
            tls=True,
            ca_file=self.cert if ca else None,
            token=token,
        )

    def call(self, method: str, path: str, token: str | None = None, body: object = None) -> int:
        """The HTTP status of one request through the proxy, TLS checked against its cert."""
        data = json.dumps(body).encode() if body is not None else None
        url = f"https://127.0.0.1:{self.port}{path}"
        request = urllib.request.Request(url, data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        context = ssl.create_default_context(cafile=str(self.cert))
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as refused:
            return int(refused.code)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    data = tmp_path_factory.mktemp("kb-server")
    port, chroma_port = free_port(), free_port()
    env = {
        **os.environ,
        "WASS_KB_SERVER_DIR": str(data),
        "WASS_KB_SERVER_PORT": str(port),
        "WASS_KB_SERVER_CHROMA_PORT": str(chroma_port),
        "WASS_KB_SERVER_PROXY": "on",
    }
    up = subprocess.run(
        [str(SCRIPT), "up"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert up.returncode == 0, up.stderr
    tokens = dict(line.split("=", 1) for line in (data / "tokens").read_text().split())
    assert (data / "tokens").stat().st_mode & 0o777 == 0o600
    assert tokens["read"] not in up.stdout + up.stderr  # never printed
    assert tokens["write"] not in up.stdout + up.stderr
    try:
        yield Proxied(port, data / "tls" / "cert.pem", tokens["read"], tokens["write"])
    finally:
        logs = "".join(p.read_text() for p in (data / "log").glob("*.log"))
        down = subprocess.run(
            [str(SCRIPT), "down"], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert down.returncode == 0, down.stderr
        assert tokens["read"] not in logs and tokens["write"] not in logs  # never logged


def test_anonymous_reads_writes_and_deletes_all_get_401(proxied: Proxied) -> None:
    assert proxied.call("GET", "/api/v2/heartbeat") == 401
    assert proxied.call("GET", COLLECTIONS) == 401
    assert proxied.call("POST", f"{COLLECTIONS}/x/query", body={"query_embeddings": [[0.0]]}) == 401
    assert proxied.call("POST", COLLECTIONS, body={"name": "forged"}) == 401
    assert proxied.call("POST", f"{COLLECTIONS}/x/update", body={"ids": ["a"]}) == 401
    assert proxied.call("DELETE", f"{COLLECTIONS}/x") == 401
    assert proxied.call("GET", COLLECTIONS, token="not-a-token-at-all") == 401


def test_the_read_token_reads_but_cannot_write_and_the_write_token_can(proxied: Proxied) -> None:
    assert proxied.call("GET", COLLECTIONS, token=proxied.read) == 200
    # The write token makes a collection the read token then tries to change.
    assert proxied.call("POST", COLLECTIONS, token=proxied.write, body={"name": "probe"}) == 200
    with urllib.request.urlopen(
        urllib.request.Request(
            f"https://127.0.0.1:{proxied.port}{COLLECTIONS}/probe",
            headers={"Authorization": f"Bearer {proxied.read}"},
        ),
        context=ssl.create_default_context(cafile=str(proxied.cert)),
        timeout=30,
    ) as answer:
        probe = json.loads(answer.read())["id"]
    add = {"ids": ["a"], "embeddings": [[1.0, 0.0]]}
    assert proxied.call("POST", f"{COLLECTIONS}/{probe}/add", proxied.read, add) == 403
    assert proxied.call("POST", f"{COLLECTIONS}/{probe}/delete", proxied.read, add) == 403
    assert proxied.call("DELETE", f"{COLLECTIONS}/probe", token=proxied.read) == 403
    assert proxied.call("POST", f"{COLLECTIONS}/{probe}/add", proxied.write, add) == 201
    query = {"query_embeddings": [[1.0, 0.0]], "n_results": 1, "include": ["distances"]}
    assert proxied.call("POST", f"{COLLECTIONS}/{probe}/query", proxied.read, query) == 200
    assert proxied.call("DELETE", f"{COLLECTIONS}/probe", token=proxied.write) == 200


def test_the_real_client_works_through_the_proxy_over_tls(proxied: Proxied, tmp_path: Path) -> None:
    case = make_case(11)
    with pytest.raises(AccessRefused, match="no valid token"):
        KnowledgeBase(proxied.target(None, tmp_path))
    with pytest.raises(AccessRefused, match="may only read"):  # opening an unset store writes
        KnowledgeBase(proxied.target(proxied.read, tmp_path))
    empty = KnowledgeBase(proxied.target(proxied.write, tmp_path))
    with pytest.raises(StoreMissing, match="the Chroma server"):  # no case yet: not "nothing"
        empty.query(case.workflow, case.platform, k=1)
    empty.close()
    writer = KnowledgeBase(proxied.target(proxied.write, tmp_path))
    assert writer.add_cases([case]) == 1
    writer.close()
    reader = KnowledgeBase(proxied.target(proxied.read, tmp_path))
    hits = reader.query(case.workflow, case.platform, k=1)
    assert [h.case_id for h in hits] == [case.case_id]
    with pytest.raises(AccessRefused, match="needs the site's write token"):
        reader.add_cases([make_case(12)])
    assert reader.count() == 1
    reader.close()


def test_tls_is_checked_and_the_token_never_shows(proxied: Proxied, tmp_path: Path) -> None:
    target = proxied.target(proxied.write, tmp_path, ca=False)  # the system CAs: self-signed fails
    assert proxied.write not in repr(target)
    with pytest.raises(ServiceUnavailable, match=r"https://127\.0\.0\.1") as failed:
        KnowledgeBase(target)
    assert proxied.write not in str(failed.value)


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("0123456789abcdef0123\n")
    token.chmod(0o644)
    with pytest.raises(ConfigError, match="readable by others") as refused:
        read_secret(token, None, "chroma_token")
    assert "0123456789abcdef" not in str(refused.value)
    token.chmod(0o600)
    assert read_secret(token, None, "chroma_token") == "0123456789abcdef0123"


def test_a_served_store_backs_up_through_the_proxy_while_it_runs(
    proxied: Proxied, tmp_path: Path
) -> None:
    from kb.backup import BrokenBackup, backup, restore

    served = KnowledgeBase(proxied.target(proxied.write, tmp_path))
    served.add_cases([make_case(21), make_case(22)])
    held = served.sidecar.ids("cases")
    served.close()
    reader = KnowledgeBase(proxied.target(proxied.read, tmp_path))  # a read token suffices
    counts = backup(reader, tmp_path / "backup")
    reader.close()
    assert counts["cases"] == len(held) >= 2
    local = KnowledgeBase(tmp_path / "local")
    assert restore(local, tmp_path / "backup")["cases"] == len(held)
    assert local.sidecar.ids("cases") == held
    local.close()
    # A truncated backup restored into the running server: refused, the served store as it was
    whole = (tmp_path / "backup" / "cases.sqlite").read_bytes()
    (tmp_path / "backup" / "cases.sqlite").write_bytes(whole[: len(whole) - 4096])
    served = KnowledgeBase(proxied.target(proxied.write, tmp_path))
    before = served.sidecar.ids("cases")
    with pytest.raises(BrokenBackup, match="truncated or corrupt, nothing restored"):
        restore(served, tmp_path / "backup")
    assert served.sidecar.ids("cases") == before
    served.close()


def test_a_forged_slurm_case_through_the_proxy_with_a_write_token_is_refused(
    proxied: Proxied, tmp_path: Path
) -> None:
    """#45: a write token wrote a ``slurm:`` case straight in. The write path every client uses
    confirms a real run with sacct: no accounting, or rows that do not match (the forged
    8,471 s timeline of a genuine run), and nothing is stored; the genuine case is."""
    from dataclasses import replace

    from kb.decisions import decisions_from_case
    from kb.provenance import UnconfirmedRun
    from tests.kb.learn_killed import RecordedAccounting, example_case

    genuine = example_case("20261202-080000-f0f0")
    work = genuine.timeline["work_a"]
    longer = (work[0], work[1], work[1] + 8471.0)
    forged = replace(genuine, timeline={**genuine.timeline, "work_a": longer})
    forged = replace(forged, metrics=replace(forged.metrics, makespan=work[1] + 8471.0))
    writer = KnowledgeBase(proxied.target(proxied.write, tmp_path))  # no Slurm accounting
    try:
        with pytest.raises(UnconfirmedRun, match="opened without Slurm's accounting"):
            writer.add_real_case(genuine)
        writer.accounting = RecordedAccounting(genuine)  # sacct's rows of the genuine run
        with pytest.raises(UnconfirmedRun, match=r"task work_a: the case says 8471\.0 s"):
            writer.add_real_case(forged, decisions_from_case(forged, 4))
        with pytest.raises(UnconfirmedRun, match="task work_a"):
            writer.add_cases([forged])  # the other write path checks it too
        assert forged.case_id not in writer.sidecar.ids("cases")
        assert writer.add_real_case(genuine) is True  # the positive control
        assert genuine.case_id in writer.sidecar.ids("cases")
    finally:
        writer.close()


def test_a_slurm_case_written_around_the_checks_is_never_cited_as_a_real_run(
    proxied: Proxied, tmp_path: Path
) -> None:
    """#45: a write token's holder writes a ``slurm:`` case straight to the server (its record
    and vector, with a forged "confirmed by sacct" stamp and the genuine run's job ids), around
    ``confirm_real_run``. The why-answer re-checks with the reader's sacct: the forged case is
    named as unconfirmed and never cited as a real run; once the genuine run is learned, it is
    the one cited; limited to trusted sources, the forged one is left out altogether."""
    from dataclasses import replace

    from tests.kb.learn_killed import RecordedAccounting, example_case, written_around_the_checks
    from wass_chat.agent.facts.counterfactual import RecordedRun
    from wass_chat.agent.facts.sources import Sources
    from wass_chat.agent.facts.workflow_tools import WorkflowTools
    from wass_chat.answers.placement import render_placement
    from wass_chat.config import Settings

    genuine = example_case("20261202-090000-aaaa")
    forged = example_case("20261202-090500-bbbb")  # a run Slurm never had, its job ids reused
    assert forged.real is not None
    stamp = replace(
        forged.real,
        confirmed="2026-12-02T09:06:00+00:00",  # the record's word
        job_ids=genuine.real.job_ids if genuine.real else {},
    )
    forged = replace(forged, written_by="mallory@elsewhere", real=stamp)
    raw = KnowledgeBase(proxied.target(proxied.write, tmp_path))
    written_around_the_checks(raw, forged)
    raw.close()
    sacct = RecordedAccounting(genuine)  # the cluster's accounting: the genuine run's jobs
    run = RecordedRun(
        "20261202-100000-cccc",
        genuine.workflow,
        genuine.platform,
        "heft",
        dict(genuine.placements),
        {t: s for t, (_, s, _) in genuine.timeline.items()},
        genuine.metrics.makespan,
        source="decision log",
    )

    def why(sources: set[str] | None = None) -> tuple[dict[str, Any], str]:
        settings = Settings(home=tmp_path / "home")
        where = Sources(settings)
        where._kb = KnowledgeBase(
            proxied.target(proxied.read, tmp_path), sources=sources, accounting=sacct
        )
        where._runs[run.run_id] = run
        try:
            facts = WorkflowTools(settings, where).explain_placement(run.run_id, "work_a")
        finally:
            where._kb.close()
        return facts, render_placement(facts)

    facts, text = why()
    assert "real_case" not in facts and "The real run" not in text, text
    (flagged,) = [u for u in facts["unconfirmed_cases"] if u["case_id"] == forged.case_id]
    assert flagged["written_by"] == "mallory@elsewhere"
    assert flagged["why"].startswith("unconfirmed: sacct disagrees"), flagged
    assert f"{forged.case_id}`" in text and "not cited as a real run" in text
    assert all(c["case_id"] != forged.case_id or "real" not in c for c in facts["cases"])

    learner = KnowledgeBase(proxied.target(proxied.write, tmp_path), accounting=sacct)
    assert learner.add_real_case(genuine) is True  # through the checks: confirmed, stamped
    learner.close()
    facts, text = why()
    assert facts["real_case"]["case_id"] == genuine.case_id
    assert facts["real_case"]["confirmation"] == "confirmed by sacct, checked again now"
    assert "The real run `20261202-090000-aaaa`" in text and "checked again now" in text
    assert "mallory" not in text  # the newer genuine run is cited first, the forged one never
    facts, text = why({"simulated", "slurm"})  # trusted sources only
    assert facts["real_case"]["case_id"] == genuine.case_id
    assert "unconfirmed_cases" not in facts and forged.case_id not in text
    assert forged.case_id not in {c["case_id"] for c in facts["cases"]}
