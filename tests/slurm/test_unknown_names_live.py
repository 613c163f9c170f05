"""A misspelt partition, user, account, node, QOS, reservation or run on the real cluster: refused
with the nearest real name, while the real name still answers with the pending jobs.

Slurm itself answers ``squeue -p debgu`` and ``squeue -u wassbbo`` with an empty queue (exit 0),
which used to read "No job is pending: nothing blocks the queue" while jobs pended. Each question
goes through the offline router (as a person asks) and the LangChain tool (as the model calls
it); the counts are compared with squeue's own.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.errors import NoSuchName
from tests.slurm.conftest import Cluster
from tests.slurm.why_cases import ask_offline, ensure_unix_user, reset_cluster, run, sbatch
from wass_chat.answers.checks.answer_check import problems
from wass_chat.cli import main
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.names import check_name, known_names

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

RESERVATION = "wass-names"
USER, ACCOUNT = "wassnamer", "wassnames"
"""This module's own user and account (the why suite's users have limits of their own)."""


@pytest.fixture(scope="module")
def pending(cluster: Cluster) -> Iterator[list[str]]:
    """Five held jobs pending in partition debug: three of wassnamer's (account wassnames),
    two of root's; and a reservation, so every kind has a real name."""
    reset_cluster()
    ensure_unix_user(USER)
    sacctmgr = ["sacctmgr", "-i", "add"]
    run([*sacctmgr, "account", ACCOUNT, "Description=wass", "Organization=wass"], check=False)
    run([*sacctmgr, "user", USER, f"Account={ACCOUNT}"], check=False)
    jobs = [sbatch("--hold", "-p", "debug", user=USER) for _ in range(3)]
    jobs += [sbatch("--hold", "-p", "debug") for _ in range(2)]
    run(
        [
            "scontrol",
            "create",
            f"ReservationName={RESERVATION}",
            "StartTime=now+1day",
            "Duration=60",
            "Nodes=n4",
            "Users=root",
        ]
    )
    try:
        yield jobs
    finally:
        run(["scontrol", "delete", f"ReservationName={RESERVATION}"], check=False)
        reset_cluster()


def _pending_in_squeue(*options: str) -> int:
    return len(run(["squeue", "-h", "-t", "PD", "-o", "%i", *options]).split())


def _tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The agent's tool path: the LangChain tool the model calls; its artifact is the facts."""
    from wass_chat.agent.facts.workflow_tools import WorkflowTools
    from wass_chat.agent.session import OfflineSession
    from wass_chat.agent.tools import langchain_tools
    from wass_chat.config import settings

    tools = {t.name: t for t in langchain_tools(OfflineSession(WorkflowTools(settings())).toolbox)}
    call = {"name": name, "args": arguments, "id": "call-1", "type": "tool_call"}
    return dict(tools[name].invoke(call).artifact)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    ("kind", "typo", "nearest"),
    [
        ("partition", "debgu", "debug"),
        ("user", "wassnamre", USER),
        ("account", "wassnmaes", ACCOUNT),
        ("node", "nn2", "n2"),
        ("QOS", "normla", "normal"),
        ("reservation", RESERVATION.replace("names", "nmaes"), RESERVATION),
    ],
)
def test_every_kind_is_refused_with_its_nearest_name(
    pending: list[str], kind: str, typo: str, nearest: str
) -> None:
    commands = SlurmCommands()
    known = known_names(commands, kind)
    assert nearest in known
    check_name(commands, kind, nearest)  # the real name passes
    with pytest.raises(NoSuchName) as raised:
        check_name(commands, kind, typo)
    assert raised.value.nearest[0] == nearest
    assert raised.value.one_line().startswith(f"No {kind} {typo!r} on this cluster; did you mean")


def test_accounts_come_from_the_jobs_and_sacctmgr(pending: list[str]) -> None:
    commands = SlurmCommands()
    accounts = set(run(["squeue", "-h", "-t", "all", "-o", "%a"]).split())
    assert {"root", ACCOUNT} <= accounts  # and those of jobs other modules left ended
    assert accounts and accounts <= set(known_names(commands, "account"))
    check_name(commands, "account", ",".join(sorted(accounts)))
    with pytest.raises(NoSuchName, match=r"No account 'rooot' on this cluster; did you mean root"):
        check_name(commands, "account", "rooot")


def test_a_login_without_jobs_is_a_user_with_an_empty_queue(pending: list[str]) -> None:
    """``nobody`` exists (getpwnam) and has no job: "none pending" is then the true answer."""
    facts = ask_offline("/queue user=nobody")["facts"]
    assert facts["kind"] == "queue" and facts["pending"] == 0
    assert facts["verdict"] == "No job of user nobody is pending. No job of user nobody is running."


def test_queue_with_a_misspelt_partition_is_refused_and_the_real_one_answers(
    pending: list[str], wass_home: Path
) -> None:
    typo = ask_offline("/queue debgu")
    assert typo["facts"]["kind"] == "error"
    assert typo["facts"]["unknown"]["nearest"] == ["debug"]
    assert typo["text"].startswith("There is no partition `debgu`, so I did not answer.")
    assert "Did you mean `debug`?" in typo["text"] and "nothing blocks" not in typo["text"]
    assert problems(typo["text"], typo["facts"]) == []  # the answer checks pass the refusal
    real = ask_offline("/queue debug")["facts"]
    assert real["pending"] == _pending_in_squeue("-p", "debug") == 5
    model = _tool("queue_overview", {"partition": "debgu"})  # what the model is given
    assert model["kind"] == "error" and model["unknown"]["nearest"] == ["debug"]
    assert model["error"].startswith("No partition 'debgu' on this cluster; did you mean debug?")


def test_queue_with_a_misspelt_user_is_refused_and_the_real_one_answers(
    pending: list[str], wass_home: Path
) -> None:
    typo_name = "wassnamre"
    typo = ask_offline(f"/queue user={typo_name}")
    assert typo["facts"]["unknown"]["nearest"][0] == USER
    assert typo["text"].startswith(f"There is no user `{typo_name}`, so I did not answer.")
    nobody = ask_offline("/queue user=wassbbo")  # the issue's: near no user at all
    assert nobody["facts"]["kind"] == "error" and "nothing blocks" not in nobody["text"]
    assert "Users: " in nobody["text"] and f"`{USER}`" in nobody["text"]
    real = ask_offline(f"/queue user={USER}")["facts"]
    assert real["pending"] == _pending_in_squeue("-u", USER) == 3
    account = ask_offline(f"/queue account={ACCOUNT.replace('names', 'nmaes')}")["facts"]
    assert account["unknown"]["nearest"][0] == ACCOUNT
    assert ask_offline(f"/queue account={ACCOUNT}")["facts"]["pending"] == 3
    plain = ask_offline(f"what is blocking the queue for user {typo_name}?")
    assert plain["facts"]["kind"] == "error", plain["text"]
    model = _tool("queue_overview", {"user": typo_name, "partition": "debug"})
    assert model["kind"] == "error" and model["unknown"]["name"] == typo_name


def test_a_misspelt_node_and_run_are_refused(pending: list[str], wass_home: Path) -> None:
    node = ask_offline("why is nn2 drained?")
    assert node["facts"]["unknown"] == {
        "what": "node",
        "name": "nn2",
        "nearest": ["n2"],
        "known": ["n1", "n2", "n3", "n4"],
        "known_count": 4,
    }
    assert _tool("cluster_status", {"node": "n2"})["node"] == "n2"
    status = ask_offline("status of run foo")
    assert status["facts"]["kind"] == "error" and status["facts"]["unknown"]["name"] == "foo"
    assert status["text"].startswith("There is no run `foo`, so I did not answer.")


def test_a_run_question_on_the_cluster_is_never_answered_with_a_demo_run(
    pending: list[str], wass_home: Path
) -> None:
    """Issue #41: "what is the backfill scheduler doing?" on a busy cluster got a placement
    story about a demo run on nodes the cluster does not have. With no run of the site's own,
    a question that names no run is refused, saying why; a demo run named still answers."""
    for question in ("what is the backfill scheduler doing?", "why did merge_bams go to gpu02?"):
        answer = ask_offline(question)
        assert answer["facts"]["kind"] == "error", (question, answer["facts"]["kind"])
        said = _one_line(answer["text"])
        assert "no run of this site to answer from" in said, said
        assert "/queue" in said and "gpu02" not in said
    named = ask_offline("why did task merge_bams of run demo-genomics-49-heft go to gpu02?")
    assert named["facts"]["kind"] == "placement" and named["facts"]["chosen_node"] == "gpu02"


def test_an_unknown_job_names_the_nearest_queued_ids(pending: list[str], wass_home: Path):
    last = max(pending, key=int)
    answer = ask_offline(f"why is job {last}9 pending?")
    assert answer["facts"]["kind"] == "error"
    said = _one_line(answer["text"])
    assert f"Slurm knows no job {last}9: it is neither queued nor in accounting" in said
    assert f"the nearest queued: {last}" in said
    far = _one_line(ask_offline("why is job 987654321 pending?")["text"])
    assert far.endswith("neither queued nor in accounting")  # nothing near: none offered


def test_cli_refuses_in_one_line_with_exit_2(
    pending: list[str], wass_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the CLI's entry point in this process (as tests/test_cli_bad_input.py): the
    claim is the exit code and the one line, not the process (three CLI starts per version)."""

    def cli(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, err = cli("ask", "--offline", "/queue debgu")
    assert code == 2, out + err
    assert "Did you mean debug?" in _one_line(out)
    code, _, err = cli("platform", "from-slurm", "--partition", "debgu")
    assert code == 2 and err.strip() == (
        "error: No partition 'debgu' on this cluster; did you mean debug? Partitions: debug, small"
    )
    code, _, err = cli("status", "foo")
    assert code == 2 and "Traceback" not in err
    assert err.strip().startswith("error: No run 'foo' in ")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("present", [("scontrol", "squeue"), ("scontrol", "squeue", "sacct")])
def test_without_sacctmgr_users_and_accounts_come_from_the_queue_and_sacct(
    pending: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, present: tuple[str, ...]
) -> None:
    """A site without slurmdbd has no sacctmgr (and maybe no sacct): the queue, then sacct,
    still name its users and accounts, and a typo is still refused (not an error about the
    missing commands)."""
    only = tmp_path / "bin"
    only.mkdir()
    for command in present:
        found = shutil.which(command)
        assert found is not None
        (only / command).symlink_to(found)
    monkeypatch.setenv("PATH", str(only))
    commands = SlurmCommands()
    assert USER in known_names(commands, "user") and ACCOUNT in known_names(commands, "account")
    check_name(commands, "user", USER)
    with pytest.raises(NoSuchName, match=f"did you mean {USER}\\b"):
        check_name(commands, "user", "wassnamre")
