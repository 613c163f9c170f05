"""The one table of what the assistant understands: intents, their slash commands and tools.

Each :class:`IntentSpec` row holds the intent's name, the tool it calls, a summary, the example
questions people ask, its slash command (usage and parser) and how free-text slots become the
tool's arguments. Everything that lists commands is derived from :data:`INTENTS`: ``/help``
(:func:`help_text`), the app's completer and help screen (:func:`slash_commands`), the agent's tool
descriptions (:func:`tool_examples`), and the offline classifier's exemplars
(:mod:`wass_chat.agent.understanding.nlu`). Adding a row adds it everywhere; nothing can drift.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wass_chat.agent.understanding.cluster_whatif_words import COMMAND_USAGE, command_changes
from wass_chat.agent.understanding.slots import Slots, find_changes, find_run, find_schedulers


@dataclass(frozen=True)
class Intent:
    """One routed request: a tool and its arguments, or a reply (``tool`` empty).

    ``name`` is the intent recognised (``help``, ``smalltalk``, ``clarify``, ``none`` for
    replies); ``readings`` are the likeliest intents when the router asks back.
    """

    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    reply: str = ""
    name: str = ""
    readings: tuple[str, ...] = ()
    refused: bool = False
    """A question no tool answers: refused in both modes, whatever a model would say."""


SlashParser = Callable[[list[str], dict[str, str]], Intent]
SlotBuilder = Callable[[Slots], dict[str, Any]]


@dataclass(frozen=True)
class Command:
    """A slash command: its name, usage line and parser (positionals, ``key=value`` options)."""

    name: str
    usage: str
    parse: SlashParser
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class IntentSpec:
    """One row of the table."""

    name: str
    tool: str
    summary: str
    examples: tuple[str, ...]
    commands: tuple[Command, ...] = ()
    arguments: SlotBuilder = lambda slots: {}
    side_effecting: bool = False
    """Acts on the cluster: routed to only when the text clearly asks for it."""
    topic: str = ""
    """What it answers in a few words, for the list a refusal offers instead."""


# --- slash parsers ------------------------------------------------------------------------------
def _first(values: list[str]) -> str | None:
    return values[0] if values else None


def _pick(options: dict[str, str], *keys: str) -> dict[str, str]:
    return {k: options[k] for k in keys if k in options}


def subject(ref: str | None) -> dict[str, str]:
    """A run id (``run-``/``demo-`` prefix) or else a workflow (file or demo name)."""
    if ref is None:
        return {}
    if ref.startswith(("run-", "demo-")):
        return {"run": ref}
    return {"workflow": ref}


def _explain(pos: list[str], opt: dict[str, str]) -> Intent:
    if len(pos) >= 2 and pos[0].startswith(("run-", "demo-")):
        run, task, *rest = pos
        args = {"run": run, "task": task, "node": _first(rest)}
    elif pos and pos[0].startswith(("run-", "demo-")):
        args = {"run": pos[0], **_pick(opt, "task", "node")}
    else:
        args = {"task": _first(pos), "node": _first(pos[1:]), **_pick(opt, "run", "node")}
    return Intent("explain_placement", args)


def _cases(pos: list[str], opt: dict[str, str]) -> Intent:
    k = next((int(p) for p in pos if p.isdigit()), int(opt.get("k", 5)))
    return Intent(
        "similar_cases", {**subject(next((p for p in pos if not p.isdigit()), None)), "k": k}
    )


def _simulate(pos: list[str], opt: dict[str, str]) -> Intent:
    args: dict[str, Any] = {**subject(_first(pos)), **_pick(opt, "platform", "scheduler")}
    if len(pos) > 1 and "scheduler" not in args:
        args["scheduler"] = pos[1]
    return Intent("simulate", args)


def _whatif(pos: list[str], opt: dict[str, str]) -> Intent:
    text = " ".join(pos)
    args: dict[str, Any] = dict(find_changes(text))
    if "bandwidth_factor" not in args and (m := opt.get("bandwidth") or opt.get("bw")):
        args["bandwidth_factor"] = float(m)
    schedulers = find_schedulers(text)
    other = opt.get("scheduler") or (schedulers[0] if schedulers else None)
    if other:
        args["other_scheduler"] = other
    if run := find_run(text) or opt.get("run"):
        args["run"] = run
    return Intent("simulate", args)


def _compare(pos: list[str], opt: dict[str, str]) -> Intent:
    schedulers = [s for p in pos[1:] for s in p.split(",") if s]
    if "schedulers" in opt:
        schedulers = [s for s in opt["schedulers"].split(",") if s]
    return Intent("compare_schedulers", {**subject(_first(pos)), "schedulers": schedulers})


def _submit(pos: list[str], opt: dict[str, str]) -> Intent:
    if not pos:
        return Intent(reply="Usage: `/submit WORKFLOW [SCHEDULER]`", name="clarify")
    args = {"workflow": pos[0], **_pick(opt, "scheduler", "platform", "estimates")}
    if len(pos) > 1:
        args["scheduler"] = pos[1]
    return Intent("submit_workflow", args)


def _status(pos: list[str], opt: dict[str, str]) -> Intent:
    return Intent("run_status", {"run": pos[0]}) if pos else Intent("cluster_status")


def _cluster_slots(s: Slots) -> dict[str, Any]:
    """A node, else a partition, else a job's length ("which partition for a 2 hour job?")."""
    if s.host:
        return {"node": s.host}
    if s.partition:
        return {"partition": s.partition}
    return {"time_limit": s.job_time} if s.job_time else {}


def _cluster(pos: list[str], opt: dict[str, str]) -> Intent:
    args = ({"node": pos[0]} if pos else {}) | _pick(opt, "partition", "time_limit")
    return Intent("cluster_status", args)


def _why(pos: list[str], opt: dict[str, str]) -> Intent:
    if not pos:
        return Intent(reply="Usage: `/why JOBID`", name="clarify")
    return Intent("job_why", {"jobid": pos[0].lstrip("#")})


def _queue(pos: list[str], opt: dict[str, str]) -> Intent:
    args = {"partition": _first(pos), **_pick(opt, "partition", "user", "account")}
    return Intent("queue_overview", args)


def _waiters(pos: list[str], opt: dict[str, str]) -> Intent:
    count = next((int(p) for p in pos if p.isdigit()), None)
    period = next((p for p in pos if not p.isdigit()), None)
    args: dict[str, Any] = {"period": opt.get("period", period or "7d")}
    args["count"] = int(opt.get("count", count or 5))
    return Intent("top_waiters", args)


def _efficiency(pos: list[str], opt: dict[str, str]) -> Intent:
    jobid = next((p.lstrip("#") for p in pos if re.fullmatch(r"#?\d+(_\d+)?", p)), None)
    period = next((p for p in pos if not re.fullmatch(r"#?\d+(_\d+)?", p)), None)
    args: dict[str, Any] = {"jobid": opt.get("jobid", jobid), **_pick(opt, "user")}
    if args["jobid"] is None:
        args["period"] = opt.get("period", period or "30d")
    return Intent("efficiency", args)


def _gpu(pos: list[str], opt: dict[str, str]) -> Intent:
    jobid = next((p.lstrip("#") for p in pos if re.fullmatch(r"#?\d+(_\d+)?", p)), None)
    period = next((p for p in pos if p != "now" and not re.fullmatch(r"#?\d+(_\d+)?", p)), None)
    args: dict[str, Any] = {"jobid": opt.get("jobid", jobid), **_pick(opt, "user")}
    if args["jobid"] is None and (period or "period" in opt):
        args["period"] = opt.get("period", period)
    return Intent("gpu_usage", {k: v for k, v in args.items() if v is not None})


def _sacct(pos: list[str], opt: dict[str, str]) -> Intent:
    args = {"period": pos[0] if pos else "7d", "user": _first(pos[1:])}
    return Intent("sacct_summary", {**args, **_pick(opt, "period", "user")})


def _report(pos: list[str], opt: dict[str, str]) -> Intent:
    fmt = next((p for p in pos if p in {"html", "md"}), opt.get("format", "html"))
    period = next((p for p in pos if p not in {"html", "md"}), opt.get("period", "7d"))
    return Intent("generate_report", {"period": period, "format": fmt, **_pick(opt, "output")})


def _whatif_cluster(pos: list[str], opt: dict[str, str]) -> Intent:
    args = command_changes(pos, opt)
    if not set(args) - {"period", "partition", "boot_time_s"}:
        return Intent(reply=f"Usage: `{COMMAND_USAGE}`", name="clarify")
    return Intent("cluster_whatif", args)


def _energy(pos: list[str], opt: dict[str, str]) -> Intent:
    args = {"period": opt.get("period", pos[0] if pos else "30d")}
    return Intent("energy_usage", {**args, **_pick(opt, "partition", "user")})


def _help(pos: list[str], opt: dict[str, str]) -> Intent:
    return Intent(reply=help_text(), name="help")


# --- free-text slot builders ---------------------------------------------------------------------
def _subject_slots(s: Slots) -> dict[str, Any]:
    if s.run:
        return {"run": s.run}
    return {"workflow": s.workflow} if s.workflow else {}


def _simulate_slots(s: Slots) -> dict[str, Any]:
    args = {**_subject_slots(s), **s.changes}
    if s.schedulers:
        key = "other_scheduler" if s.changes or (s.run and not s.workflow) else "scheduler"
        args[key] = s.schedulers[0]
    return args


def _compare_slots(s: Slots) -> dict[str, Any]:
    schedulers = list(s.schedulers)
    if len(schedulers) == 1 and schedulers[0] != "heft":
        schedulers.insert(0, "heft")
    return {**_subject_slots(s), "schedulers": schedulers}


def _cluster_whatif_slots(s: Slots) -> dict[str, Any]:
    args = dict(s.cluster_changes)
    if (
        "partition" not in args
        and s.partition
        and {"max_time_h", "add_nodes", "remove_nodes", "nodes_pct"} & set(args)
    ):
        args["partition"] = s.partition
    return {**args, "period": s.period}


def _submit_slots(s: Slots) -> dict[str, Any]:
    args: dict[str, Any] = {"workflow": s.workflow}
    if s.schedulers:
        args["scheduler"] = s.schedulers[0]
    if s.runtimes:
        args["estimates"] = s.runtimes
    return args


INTENTS: tuple[IntentSpec, ...] = (
    IntentSpec(
        "explain_placement",
        "explain_placement",
        "why a task of a run ran on its node",
        (
            "why did task merge_bams of run demo-genomics-49-heft go to gpu02?",
            "why was align_03 put on cpu05",
        ),
        (Command("/explain", "/explain [RUN] TASK [NODE]", _explain),),
        lambda s: {**({"run": s.run} if s.run else {}), "task": s.task, "node": s.node},
        topic="why a task ran on its node",
    ),
    IntentSpec(
        "similar_cases",
        "similar_cases",
        "the most similar past executions",
        ("similar past cases for montage-60", "top 3 runs like genomics-49"),
        (Command("/cases", "/cases [RUN|WORKFLOW] [K]", _cases),),
        lambda s: {**_subject_slots(s), **({"k": s.count} if s.count else {})},
        topic="similar past runs",
    ),
    IntentSpec(
        "simulate",
        "simulate",
        "simulate a workflow, or a what-if change to the current run",
        ("simulate montage-60 with cpop", "what if I add 4 nodes?", "what if gpu02 goes down"),
        (
            Command("/simulate", "/simulate [WORKFLOW|RUN] [SCHEDULER] [platform=P]", _simulate),
            Command(
                "/whatif", "/whatif add N | remove N|NODE | bandwidth F | scheduler S", _whatif
            ),
        ),
        _simulate_slots,
        topic="workflow simulations and their what-ifs",
    ),
    IntentSpec(
        "compare_schedulers",
        "compare_schedulers",
        "rank schedulers by simulated makespan",
        ("compare schedulers on montage-60", "is montage faster with cpop?"),
        (Command("/compare", "/compare [WORKFLOW|RUN] [S1,S2,...]", _compare),),
        _compare_slots,
        topic="scheduler comparisons",
    ),
    IntentSpec(
        "submit_workflow",
        "submit_workflow",
        "plan a submission; nothing runs until you approve",
        ("submit montage.json", "submit genomics-49 with cpop"),
        (Command("/submit", "/submit WORKFLOW [SCHEDULER] [estimates=kb]", _submit),),
        _submit_slots,
        side_effecting=True,
        topic="workflow submissions (after your approval)",
    ),
    IntentSpec(
        "run_status",
        "run_status",
        "a run's tasks and their states (the cluster without RUN)",
        ("status of run demo-genomics-49-heft", "is my run finished?"),
        (Command("/status", "/status [RUN]", _status),),
        lambda s: {"run": s.run or s.named_run} if s.run or s.named_run else {},
        topic="a run's progress",
    ),
    IntentSpec(
        "cluster_status",
        "cluster_status",
        "the cluster's nodes, or why one node takes no jobs",
        ("cluster status", "are any nodes down?", "why is n2 drained?"),
        (
            Command(
                "/cluster",
                "/cluster [NODE] [partition=P] [time_limit=2h]",
                _cluster,
                ("/nodes", "/node"),
            ),
        ),
        _cluster_slots,
        topic="node states",
    ),
    IntentSpec(
        "job_why",
        "job_why",
        "why a job waited, failed or was slow",
        ("why is job 42 pending?", "what happened to job 7"),
        (Command("/why", "/why JOBID", _why),),
        lambda s: {"jobid": s.jobid},
        topic="why a job waited, failed or was slow",
    ),
    IntentSpec(
        "queue_overview",
        "queue_overview",
        "what is blocking the queue now, by partition and user",
        ("what is blocking the queue?", "which partition is congested"),
        (Command("/queue", "/queue [PARTITION] [user=U] [account=A]", _queue),),
        lambda s: {"partition": s.partition, "user": s.user, "account": s.account},
        topic="what blocks the queue now",
    ),
    IntentSpec(
        "top_waiters",
        "top_waiters",
        "the users who waited longest over a period",
        ("which users waited the longest last week?", "top 3 waiters in may"),
        (Command("/waiters", "/waiters [PERIOD] [COUNT]", _waiters),),
        lambda s: {"period": s.period or "7d", "count": s.count or 5},
        topic="who waited longest",
    ),
    IntentSpec(
        "efficiency",
        "efficiency",
        "CPU, memory and time efficiency of a job, or a period's idle core-hours by user",
        (
            "how efficient was job 42?",
            "which users wasted the most core-hours last month?",
            "what was the cpu efficiency in january?",
        ),
        (Command("/efficiency", "/efficiency [JOBID|PERIOD] [user=U]", _efficiency, ("/seff",)),),
        lambda s: (
            {"jobid": s.jobid}
            if s.jobid
            else {"period": s.period or "30d", "user": s.user, "count": s.count or 5}
        ),
        topic="job and user efficiency",
    ),
    IntentSpec(
        "gpu_usage",
        "gpu_usage",
        "GPU use: running jobs' GPUs at 0% now, a job's GPU use, a period's wasted GPU-hours",
        (
            "which GPU jobs are idle right now?",
            "who wasted the most GPU hours last month?",
            "how well did job 42 use its GPUs?",
        ),
        (Command("/gpu", "/gpu [now|JOBID|PERIOD] [user=U]", _gpu),),
        lambda s: (
            {"jobid": s.jobid}
            if s.jobid
            else {"period": s.period, "user": s.user, "count": s.count or 5}
        ),
        topic="how jobs used their GPUs",
    ),
    IntentSpec(
        "sacct_summary",
        "sacct_summary",
        "accounting summary: jobs, waits, states, backfill",
        ("how busy was the cluster last week?", "accounting for alice in may"),
        (Command("/sacct", "/sacct [PERIOD] [USER]", _sacct),),
        lambda s: {"period": s.period or "7d", "user": s.user},
        topic="accounting summaries",
    ),
    IntentSpec(
        "cluster_whatif",
        "cluster_whatif",
        "replay the cluster's recent workload with a change: nodes, limits, power saving, "
        "predicted walltimes, scheduler",
        (
            "if we add 8 GPU nodes, how much shorter are waits?",
            "what does a 24 h cap on the long partition do?",
            "how much energy would powering idle nodes down after 30 minutes save?",
            "would backfill work better if walltimes were predicted instead of requested?",
        ),
        (Command("/whatif-cluster", COMMAND_USAGE, _whatif_cluster),),
        _cluster_whatif_slots,
        topic="cluster what-ifs (nodes, limits, power saving)",
    ),
    IntentSpec(
        "energy_usage",
        "energy_usage",
        "the energy the cluster used over a period, by partition and user (modelled)",
        ("how much energy did the gpu partition use last month?", "energy used by alice in may"),
        (Command("/energy", "/energy [PERIOD] [partition=P] [user=U]", _energy),),
        lambda s: {"period": s.period or "30d", "partition": s.partition, "user": s.user},
        topic="modelled energy use",
    ),
    IntentSpec(
        "generate_report",
        "generate_report",
        "write the scheduling audit report (HTML or Markdown)",
        ("generate a report for last week", "audit report for may as markdown"),
        (Command("/report", "/report [PERIOD] [html|md]", _report),),
        lambda s: {"period": s.period or "7d", "format": s.format or "html"},
        topic="audit reports",
    ),
    IntentSpec(
        "help",
        "",
        "what the assistant can do",
        ("help", "what can you do?"),
        (Command("/help", "/help", _help, ("/h", "/?")),),
    ),
)
SPEC_BY_NAME = {spec.name: spec for spec in INTENTS}
SIDE_EFFECTING_TOOLS = frozenset(spec.tool for spec in INTENTS if spec.side_effecting)


def slash_commands() -> tuple[tuple[Command, IntentSpec], ...]:
    """Every slash command with the row it belongs to, in table order."""
    return tuple((command, spec) for spec in INTENTS for command in spec.commands)


def command_named(name: str) -> Command | None:
    """The command ``/name`` (or one of its aliases), case-insensitive."""
    wanted = "/" + name.lower().lstrip("/")
    for command, _spec in slash_commands():
        if wanted == command.name or wanted in command.aliases:
            return command
    return None


def tool_examples(tool: str) -> tuple[str, ...]:
    """The example questions of the row calling ``tool`` (for its description to the model)."""
    return tuple(e for spec in INTENTS if spec.tool == tool for e in spec.examples)


def help_text() -> str:
    """``/help``: every command with its summary, then example questions."""
    lines = [
        "I explain placements, run what-if simulations, compare schedulers, read the queue and "
        "the accounting data, and prepare submissions (which you approve). Commands:",
        "",
    ]
    for command, spec in slash_commands():
        lines.append(f"- `{command.usage}`: {spec.summary}")
    asked = [spec.examples[0] for spec in INTENTS if spec.tool][:6]
    lines += ["", "Or just ask, for example: " + "; ".join(f'"{q}"' for q in asked) + "."]
    return "\n".join(lines)


def parse_slash(text: str) -> Intent:
    """A slash command, parsed exactly (no guessing); unknown commands get the help."""
    command_word, *words = text[1:].split() or [""]
    command = command_named(command_word)
    if command is None:
        return Intent(reply=f"Unknown command `/{command_word}`.\n\n{help_text()}", name="none")
    positional, options = split_options(words)
    intent = command.parse(positional, options)
    arguments = {k: v for k, v in intent.arguments.items() if v is not None}
    spec_name = next((s.name for s in INTENTS if s.tool == intent.tool and s.tool), intent.name)
    return Intent(intent.tool, arguments, intent.reply, spec_name or intent.name)


def split_options(words: list[str]) -> tuple[list[str], dict[str, str]]:
    """Split ``a b key=value --key value`` into positionals and options."""
    positional: list[str] = []
    options: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and i + 1 < len(words):
            options[word[2:].replace("-", "_")] = words[i + 1]
            i += 2
            continue
        if "=" in word and not word.startswith("="):
            key, value = word.split("=", 1)
            options[key.lstrip("-").replace("-", "_")] = value
        else:
            positional.append(word)
        i += 1
    return positional, options
