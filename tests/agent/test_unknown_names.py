"""An unknown name is refused with the nearest real names, never answered as an empty result.

The refusal's wording (:class:`~sim.errors.NoSuchName`), the accounting cache's names
(:mod:`wass_chat.sacct.cache_names`), the router keeping a named run (``status of run foo`` is
about ``foo``, not the latest run), the answer checks, and the online session replacing a model's
all-clear about a name a tool refused. The live cluster's names:
tests/slurm/test_unknown_names_live.py.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from sim.errors import NoSuchName, UnknownName
from tests.agent.fake_ollama import MODEL, FakeOllama, Reply
from wass_chat.agent.events import Final
from wass_chat.agent.session import open_session
from wass_chat.agent.understanding.router import route
from wass_chat.answers.checks.answer_check import problems
from wass_chat.answers.checks.verify import ignored_refusals
from wass_chat.answers.kinds import render
from wass_chat.config import Settings
from wass_chat.runlog import RunLog, UnknownRunError
from wass_chat.sacct.cache_names import check_filter_names

pytestmark = pytest.mark.xdist_group("agent-home")


def test_refusal_names_the_nearest_and_every_name_there_is() -> None:
    error = NoSuchName("partition", "debgu", ["small", "debug", "debug"], "on this cluster")
    assert error.one_line() == (
        "No partition 'debgu' on this cluster; did you mean debug? Partitions: debug, small"
    )
    assert isinstance(error, UnknownName) and error.nearest == ("debug",)
    far = NoSuchName("user", "wassbbo", ["root", "alice"], "on this cluster")
    assert far.one_line() == "No user 'wassbbo' on this cluster. Users: alice, root"
    assert far.nearest == ()
    none = NoSuchName("reservation", "maint", [], "on this cluster")
    assert none.one_line() == "No reservation 'maint' on this cluster (there are no reservations)"
    qos = NoSuchName("QOS", "hihg", ["high", "normal"], "on this cluster")
    assert qos.one_line() == "No QOS 'hihg' on this cluster; did you mean high? QOS: high, normal"
    many = NoSuchName("node", "x", [f"cn{i:03d}" for i in range(40)], "on this cluster")
    assert many.one_line().endswith("cn011 and 28 more")


def test_unknown_run_in_the_decision_log_names_the_nearest(tmp_path: Any) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for run_id in ("20260101-120000-ab12", "20260102-090000-cd34"):
        (runs / f"{run_id}.json").write_text("{}")
    with pytest.raises(UnknownRunError) as raised:
        RunLog(runs).get("20260101-120000-ab13")
    assert raised.value.nearest[0] == "20260101-120000-ab12"
    assert raised.value.one_line().startswith(f"No run '20260101-120000-ab13' in {runs};")


def _jobs() -> pl.LazyFrame:
    return pl.DataFrame(
        {
            "is_step": [False, False, False, True],
            "user": ["alice", "bob", None, "stepper"],
            "account": ["physics", "chem", "physics", "x"],
            "partition": ["debug", "gpu,debug", "batch", "y"],
        }
    ).lazy()


def test_cache_filters_refuse_what_the_cache_never_saw() -> None:
    check_filter_names(_jobs(), user="alice", account="chem", partition="gpu")
    check_filter_names(_jobs(), partition="gpu,debug")  # as a pending job stores it
    with pytest.raises(NoSuchName) as raised:
        check_filter_names(_jobs(), user="alcie")
    assert raised.value.one_line() == (
        "No user 'alcie' in the accounting cache; did you mean alice? Users: alice, bob"
    )
    with pytest.raises(NoSuchName, match=r"No partition 'gpuu'.*did you mean gpu\?"):
        check_filter_names(_jobs(), partition="gpuu")
    with pytest.raises(NoSuchName, match="No user 'stepper'"):  # only a step's: no allocation
        check_filter_names(_jobs(), user="stepper")
    empty = _jobs().filter(pl.lit(False))
    check_filter_names(empty, user="anyone")  # an empty cache: its answer says so


@pytest.mark.parametrize(
    ("question", "arguments"),
    [
        ("status of run foo", {"run": "foo"}),
        ("is run 20260101-120000-ab12 finished?", {"run": "20260101-120000-ab12"}),
        ("status of run demo-genomics-49-heft", {"run": "demo-genomics-49-heft"}),
        ("is my run finished?", {}),
        ("status of the run", {}),
    ],
)
def test_a_named_run_is_kept_not_swapped_for_the_latest(question: str, arguments: dict) -> None:
    intent = route(question)
    assert (intent.tool, intent.arguments) == ("run_status", arguments)


def test_queue_slash_command_takes_an_account() -> None:
    intent = route("/queue debgu user=wassbbo account=physcs")
    assert intent.arguments == {"partition": "debgu", "user": "wassbbo", "account": "physcs"}


REFUSED = {
    "kind": "error",
    "error": "No partition 'debgu' on this cluster; did you mean debug? Partitions: debug, small",
    "unknown": {
        "what": "partition",
        "name": "debgu",
        "nearest": ["debug"],
        "known": ["debug", "small"],
        "known_count": 2,
    },
}


def test_answer_checks_fail_an_all_clear_for_an_unknown_name() -> None:
    rendered = render(REFUSED)
    assert rendered == (
        "There is no partition `debgu`, so I did not answer. Did you mean `debug`? "
        "Partitions: `debug`, `small`. Ask again with the right name."
    )
    assert problems(rendered, REFUSED) == []
    all_clear = "No job is pending in partition debgu: nothing blocks them."
    assert problems(all_clear, REFUSED) == ["the answer does not say there is no partition 'debgu'"]
    assert ignored_refusals("Nothing blocks the queue.", [REFUSED])
    assert not ignored_refusals("debgu is not a partition here; did you mean debug?", [REFUSED])


def _online(settings: Settings, server: FakeOllama) -> Any:
    return open_session(
        settings.model_copy(update={"ollama_host": server.url, "ollama_model": MODEL})
    )


async def test_online_all_clear_about_an_unknown_run_is_replaced(settings: Settings) -> None:
    """The model is told the run does not exist and answers as if it did: the refusal wins."""
    script = [
        Reply(tool_calls=[("run_status", {"run": "foo"})]),
        Reply("Run foo is done: every task completed."),
    ]
    with FakeOllama(script) as server:
        session = _online(settings, server)
        events = [event async for event in session.send("status of run foo")]
    answer = events[-1]
    assert isinstance(answer, Final)
    assert answer.text.startswith("There is no run `foo`, so I did not answer.")
    assert "completed" not in answer.text
    assert answer.facts["kind"] == "error"  # `ask` exits 2 on it
    assert not ignored_refusals(answer.text, [answer.facts])


async def test_online_answer_about_another_name_says_the_refusal_first(settings: Settings) -> None:
    """The model, refused, asks again with a real run and answers about it: the person still
    reads that the name they typed names nothing, before the answer about the other one."""
    real = "demo-genomics-49-heft"
    script = [
        Reply(tool_calls=[("run_status", {"run": "foo"})]),
        Reply(tool_calls=[("run_status", {"run": real})]),
        Reply(f"Run {real} was only simulated."),
    ]
    with FakeOllama(script) as server:
        session = _online(settings, server)
        events = [event async for event in session.send("status of run foo")]
    answer = events[-1]
    assert isinstance(answer, Final) and answer.facts["run_id"] == real
    first, _, rest = answer.text.partition("\n\n")
    assert first.startswith("There is no run `foo`, so I did not answer.")
    assert rest.startswith(f"Run {real} was only simulated.")


@pytest.mark.parametrize(
    ("question", "run"),
    [
        ("how is run demo-montage-60-cpop2 going?", "demo-montage-60-cpop2"),
        ("status of demo-montgae-60-heft", "demo-montgae-60-heft"),
        ("status of demo-Montage-60-HEFT", "demo-montage-60-heft"),  # the log's spelling
        ("status of demo-forkjoin-20-heft", "demo-fork-join-20-heft"),
    ],
)
def test_a_near_miss_run_id_is_kept_as_typed_never_repaired_into_another_run(
    question: str, run: str
) -> None:
    assert route(question).arguments == {"run": run}


@pytest.mark.parametrize(
    ("question", "arguments"),
    [
        ("what's holding up the queue for account astro9?", {"account": "astro9"}),
        ("what's pending in the gpuh100 partition?", {"partition": "gpuh100"}),
        ("what's pending in the gpu partition?", {"partition": "gpu"}),
        ("whats queued for alice", {"user": "alice"}),
    ],
)
def test_the_queue_of_a_named_partition_account_or_user_is_asked_with_that_name(
    question: str, arguments: dict
) -> None:
    """The name goes to the queue, where it is checked against the cluster: never read as a
    node ("gpuh100"), a user called "account", or a placement question."""
    intent = route(question)
    assert (intent.tool, {k: v for k, v in intent.arguments.items() if v}) == (
        "queue_overview",
        arguments,
    )


def test_a_name_no_file_can_have_is_refused_as_unknown_not_raised(settings: Settings) -> None:
    """A model's argument may be longer than a file name can be, or hold a NUL byte: the
    tool refuses it as a name naming nothing (before, ``OSError: File name too long``
    escaped the tool and the agent, and ``ask --json`` printed a traceback)."""
    from wass_chat.agent.facts.workflow_tools import WorkflowTools
    from wass_chat.agent.offline import OfflineSession
    from wass_chat.agent.tools import FILE_MAX

    toolbox = OfflineSession(WorkflowTools(settings)).toolbox
    long_name = "w" * 300  # under the schema's bound, over the system's 255 bytes a name
    assert 255 < len(long_name) <= FILE_MAX
    for arguments in ({"workflow": long_name}, {"workflow": "a\x00b"}, {"platform": long_name}):
        outcome = toolbox.call("simulate", arguments)
        assert outcome.facts["kind"] == "error", arguments
        assert outcome.error is not None and (
            "no workflow" in outcome.error or "no platform file" in outcome.error
        )
