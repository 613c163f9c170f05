"""Deterministic slot parsers: job ids, runs, tasks, nodes, workflows, schedulers, periods, users,
counts and what-if changes, read out of free text with typos and in any word order.

The intent classifier (:mod:`wass_chat.agent.understanding.nlu`) says *what* is asked; these
functions say *about what*. Known names come from their one source (demo workflows and the demo
platform from :mod:`sim.demo`, schedulers from :mod:`policy.registry`) and are matched fuzzily, so
``montgae`` finds ``montage-60`` and ``min-min`` finds ``minmin``. Periods come out in the forms
:func:`wass_chat.agent.facts.accounting_periods.parse_period` accepts (``7d``, ``24h``, ``2w``,
``2024-05``, ``START..END``, ``all``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Any

from wass_chat.agent.understanding.cluster_whatif_words import CHANGE_DURATIONS, cluster_changes
from wass_chat.agent.understanding.period_words import (
    COUNT,
    MONTHS,
    count_word,
    find_count,
    find_period,
)
from wass_chat.agent.understanding.whatif_words import bandwidth_factor, failed_node_word

_RUN = re.compile(r"\b((?:demo|run)-[\w.-]*[\w])", re.I)
_FILE = re.compile(r"(?<![\w/.-])([\w./-]+\.(?:json|ya?ml))\b", re.I)
_JOB = re.compile(r"\bjob+(?:\s*id)?\s*(?:#|no\.?|number)?\s*(\d+(?:_\d+)?)\b", re.I)
_BARE_JOB = re.compile(r"(?:#|(?<![\w-]))(\d+(?:_\d+)?)(?![\w-])")
"""A lone number (not the ``60`` of ``montage-60``)."""


@dataclass(frozen=True)
class Slots:
    """Everything the parsers found in one message (``None`` or empty: not mentioned)."""

    jobid: str | None = None
    run: str | None = None
    named_run: str | None = None
    """A word after "run" that is no run id (``status of run foo``): a run the person named,
    checked against the decision log, never dropped for the latest run."""
    task: str | None = None
    node: str | None = None
    """A node of the demo platform (placements and what-ifs are about simulated runs)."""
    host: str | None = None
    """A node of a live cluster: a demo node, or a name like ``n2``, ``cn017``, ``node 12b``."""
    workflow: str | None = None
    schedulers: tuple[str, ...] = ()
    period: str | None = None
    user: str | None = None
    count: int | None = None
    partition: str | None = None
    account: str | None = None
    format: str | None = None
    changes: dict[str, Any] = field(default_factory=dict)
    """What-if changes: add_nodes, remove_count, remove_nodes, bandwidth_factor."""
    cluster_changes: dict[str, Any] = field(default_factory=dict)
    """Whole-cluster what-if changes (see
    :mod:`wass_chat.agent.understanding.cluster_whatif_words`)."""
    runtimes: str | None = None
    """``kb`` when the message asks to plan on the runtimes past runs give (the knowledge
    base's estimates, ``submit --estimates kb``)."""
    job_time: str | None = None
    """A job's length as asked ("a 2 hour job", "--time=2:00:00"): ``2h``, ``90min``,
    ``2:00:00`` (:func:`~wass_chat.slurm.explain.partitions.time_limit_seconds` reads it)."""


@cache
def demo_workflows() -> tuple[str, ...]:
    from sim.demo import demo_workflow_names

    return demo_workflow_names()


@cache
def demo_nodes() -> tuple[str, ...]:
    from sim.demo import demo_platform

    return tuple(node.name for node in demo_platform().nodes)


@cache
def scheduler_aliases() -> dict[str, str]:
    """Every name a scheduler answers to (lower case) -> its canonical registry name."""
    from policy.registry import _ALIASES, scheduler_names

    names = {name: name for name in scheduler_names()}
    names.update(_ALIASES)
    names.update({k.replace("-", "").replace("_", ""): v for k, v in list(names.items())})
    return names


def _words(text: str) -> list[str]:
    return re.findall(r"[\w.-]*\w", text)


def find_run(text: str) -> str | None:
    """A run id (``demo-...`` or ``run-...``) as typed; a demo run id written with another
    spelling of its parts (``demo-Montage-60-HEFT``, ``demo-forkjoin-20-heft``) is written as
    the log has it. A run id is an identifier: a near miss (``demo-montage-60-cpop2``) is kept as
    typed, so that the tool refuses it and offers the nearest runs, never shows another run."""
    match = _RUN.search(text)
    if not match:
        return None
    run = match.group(1)
    if run.lower().startswith("demo-"):
        body, _, sched = run[5:].rpartition("-")
        workflow = _exact_workflow(body)
        scheduler = scheduler_aliases().get(sched.lower())
        if workflow and scheduler:
            return f"demo-{workflow}-{scheduler}"
    return run


def _exact_workflow(word: str) -> str | None:
    """The demo workflow ``word`` names exactly (``montage-60``, ``forkjoin-20``, any case)."""
    word = word.lower()
    for name in demo_workflows():
        if word in {name, name.replace("-", "", name.count("-") - 1)}:
            return name
    return None


_NAMED_RUN = re.compile(r"\brun\s+(?:named\s+|called\s+|id\s+)?[`'\"]?([a-z0-9][\w.-]*[\w])", re.I)
_NOT_RUN_NAMES = frozenset(
    (
        "is",
        "was",
        "are",
        "has",
        "have",
        "had",
        "did",
        "does",
        "the",
        "a",
        "an",
        "my",
        "this",
        "that",
        "it",
        "its",
        "of",
        "on",
        "in",
        "at",
        "to",
        "for",
        "with",
        "from",
        "by",
        "and",
        "or",
        "finished",
        "done",
        "over",
        "complete",
        "completed",
        "ended",
        "failed",
        "running",
        "still",
        "status",
        "state",
        "progress",
        "now",
        "yet",
        "so",
        "going",
        "doing",
        "ok",
        "okay",
        "went",
        "go",
        "look",
        "looks",
        "there",
        "here",
        "again",
        "last",
        "latest",
        "first",
        "before",
    )
)
"""Words after "run" that name no run ("is my run finished", "run status")."""


def find_named_run(text: str) -> str | None:
    """The name after "run" when it is no run id, workflow or scheduler (``run foo``)."""
    if find_run(text):
        return None
    for match in _NAMED_RUN.finditer(text):
        word = match.group(1)
        lowered = word.lower()
        if lowered in _NOT_RUN_NAMES or lowered.isdigit():
            continue
        if find_workflow(word) is None and not find_schedulers(word):
            return word
    return None


def _fuzzy(word: str, choices: Any, cutoff: float = 0.8) -> str | None:
    options = list(choices)
    hit = difflib.get_close_matches(word.lower(), options, n=1, cutoff=cutoff)
    if not hit:
        return None
    return choices[hit[0]] if isinstance(choices, dict) else hit[0]


def _fuzzy_workflow(word: str) -> str | None:
    """``montage``, ``montage-60``, ``montgae``, ``forkjoin`` -> the demo workflow they name.

    A demo's stem with another number (``montage-61``) is another workflow, which does not
    exist: it is returned as typed, so that the tool refuses it and offers ``montage-60``."""
    word = word.lower().strip(".-")
    if len(word) < 4:
        return None
    for name in demo_workflows():
        base = name.rsplit("-", 1)[0]
        if word in {name, base, base.replace("-", "")}:
            return name
    bases = {name.rsplit("-", 1)[0]: name for name in demo_workflows()}
    hit = _fuzzy(re.sub(r"-?\d+$", "", word), bases, cutoff=0.8)
    number = re.search(r"\d+$", word)
    if hit and number and hit.rsplit("-", 1)[1] != number.group(0):
        return word  # "montage-61" names no demo: kept as typed, refused by the tool
    return hit


_NAMED_WORKFLOW = re.compile(
    r"\b(?:workflows?|simulat\w*|compar\w*|submit|cases|like|on|for|of|to|about)\s+(?:the\s+)?"
    r"((?!(?:gpu|cpu|node|top|last|past|next)-)(?=[a-z0-9_]*[a-z])[a-z0-9][a-z0-9_]{2,}-\d+)"
    r"(?![\w.-])",
    re.I,
)
"""A workflow-shaped name (``blast-12``) where a workflow goes: kept as typed, so that the tool
refuses it with the nearest real names instead of answering about the current run."""


def find_workflow(text: str) -> str | None:
    """A workflow file (``*.json``/``*.yaml``) as typed, or a demo workflow (fuzzy), or an
    unknown workflow-shaped name where a workflow goes (as typed)."""
    if match := _FILE.search(text):
        return match.group(1)
    without_runs = _RUN.sub(" ", text)
    for word in _words(without_runs):
        if found := _fuzzy_workflow(word):
            return found
    if match := _NAMED_WORKFLOW.search(without_runs):
        return match.group(1).lower()
    return None


def find_schedulers(text: str) -> tuple[str, ...]:
    """Scheduler names in order of mention (canonical, no repeats), typos within reason."""
    aliases = scheduler_aliases()
    found: dict[str, None] = {}
    for word in _words(_RUN.sub(" ", _FILE.sub(" ", text))):
        key = word.lower()
        name = aliases.get(key) or aliases.get(key.replace("-", "").replace("_", ""))
        if name is None and len(key) >= 5 and key not in _NOT_SCHEDULERS:
            name = _fuzzy(key, aliases, cutoff=0.85)
        if name is not None and key not in _NOT_SCHEDULERS:
            found[name] = None
    return tuple(found)


_NOT_SCHEDULERS = frozenset({"random", "policy", "slurm", "rag", "guarded", "sjf", "ljf", "left"})
"""Registry names that are everyday words here ("the slurm cluster", "random")."""


def find_node(text: str) -> str | None:
    """A node of the demo platform (``gpu02``, ``GPU 2``, ``cpu6``)."""
    nodes = {n.lower(): n for n in demo_nodes()}
    for match in re.finditer(r"\b([a-z]+)[ -]?0*(\d+)\b", text.lower()):
        prefix, number = match.group(1), int(match.group(2))
        for candidate in (f"{prefix}{number:02d}", f"{prefix}{number}"):
            if candidate in nodes:
                return nodes[candidate]
    return None


_NOT_HOSTS = frozenset({"top", "last", "past", "next", "first", "x", "k", "q", "v", "py", "h"})
"""Letters before a number that make a count or a factor (``top3``, ``x2``), not a node."""


_BARE_HOST = r"(?<![\w-])[a-z]{1,8}\d{1,5}(?:-\d{1,5})?(?![\w-])"
"""``n2``, ``gpu02``, ``c12-3`` standing alone (not inside ``montage-60`` or a file name)."""


def _looks_like_host(word: str) -> bool:
    """``n2``, ``cn017``, ``c12-3``: letters then digits, not a count or a factor (``top3``,
    ``x2``)."""
    match = re.fullmatch(r"([a-z]{1,8})\d{1,5}(?:-\d{1,5})?", word.lower())
    return match is not None and match.group(1) not in _NOT_HOSTS


def find_host(text: str) -> str | None:
    """A node of a live cluster: a demo node, the name after the word ``node`` (``node c12-3``),
    or a letters-then-digits word (``n2``, ``gpu02``, ``cn017``). Whether the cluster has it is
    for Slurm to say (an unknown node is a one-line error naming the cluster's nodes)."""
    if node := find_node(text):
        return node
    lowered = _RUN.sub(" ", _FILE.sub(" ", text)).lower()
    if partition := find_partition(text):  # "the gpuh100 partition" names no node
        lowered = re.sub(rf"(?<![\w-]){re.escape(partition)}(?![\w-])", " ", lowered)
    if match := re.search(r"\bnode\s+([a-z][\w.-]*\d[\w-]*)", lowered):
        return match.group(1)
    return next((w for w in re.findall(_BARE_HOST, lowered) if _looks_like_host(w)), None)


def find_task(text: str) -> str | None:
    """A task id: after the word ``task``, or a ``name_123`` / ``merge_bams`` token (every task
    id of the demo workflows has that shape; loading them to check costs a second)."""
    cleaned = _RUN.sub(" ", _FILE.sub(" ", text))
    if match := re.search(r"\btask\s+([A-Za-z_][\w.-]*\w)", cleaned, re.I):
        return match.group(1)
    return next((word for word in _words(cleaned) if _looks_like_task(word)), None)


_NOT_TASKS = frozenset({"wass_heuristic", "traditional_slurm", "min_min", "max_min"})


def find_jobid(text: str, bare: bool = False) -> str | None:
    """A Slurm job id after ``job``/``#``; with ``bare``, any lone number not part of a period."""
    if match := _JOB.search(text):
        return match.group(1)
    if match := re.search(r"#(\d+(?:_\d+)?)\b", text):
        return match.group(1)
    if bare:
        cleaned = _PERIOD_NUMBERS.sub(" ", text)
        for match in _BARE_JOB.finditer(cleaned):
            return match.group(1)
    return None


_PERIOD_NUMBERS = re.compile(
    r"\b\d+\s*(?:d|h|w|days?|hours?|weeks?|months?|nodes?)\b|\b\d{4}-\d{2}(?:-\d{2})?\b", re.I
)


_USER_STOP = frozenset(
    (
        "the",
        "a",
        "an",
        "me",
        "us",
        "my",
        "our",
        "this",
        "that",
        "last",
        "past",
        "previous",
        "all",
        "any",
        "every",
        "each",
        "cluster",
        "queue",
        "jobs",
        "job",
        "run",
        "runs",
        "week",
        "month",
        "day",
        "year",
        "today",
        "yesterday",
        "users",
        "user",
        "partition",
        "node",
        "nodes",
        "account",
        "accounts",
        "group",
        "groups",
        "qos",
        "project",
        "everyone",
        "it",
        "them",
        "him",
        "her",
        "you",
        "we",
        "now",
        "time",
        "times",
        "while",
        "wait",
        "waits",
        "waiting",
        "gpu",
        "cpu",
        "days",
        "hours",
        "weeks",
        "months",
        "since",
        "summary",
        "stats",
        "statistics",
        "usage",
        "accounting",
        "report",
        "sacct",
        "average",
        "mean",
        "median",
        "total",
        "number",
        "count",
        "makespan",
        "default",
        "demo",
        "real",
        "example",
        "wait",
        "time",
        "now",
        "in",
        "on",
        "at",
        "per",
        "and",
        "or",
        "to",
        "with",
        "energy",
        "power",
        "partitions",
        "we",
        "i",
        "they",
        "for",
        "of",
        "by",
        "from",
        # what jobs wait for: "which jobs are waiting for licences?" names no user
        "licences",
        "licenses",
        "licence",
        "license",
        "resources",
        "memory",
        "cpus",
        "gpus",
        "dependencies",
        "dependency",
        "priority",
        "reservations",
        "reservation",
        "maintenance",
        "approval",
        "jobs",
        "job",
        # verbs and question words: "which user has the most pending jobs?" names no user
        "has",
        "have",
        "had",
        "is",
        "was",
        "are",
        "were",
        "does",
        "did",
        "do",
        "can",
        "could",
        "would",
        "will",
        "should",
        "may",
        "might",
        "must",
        "who",
        "whose",
        "which",
        "what",
        "most",
        "least",
        "more",
        "less",
        "waited",
        "used",
        "uses",
        "submitted",
        "ran",
        "runs",
        "got",
        "gets",
        "holds",
        "held",
    )
)
"""Words after "user", "for", "of" or "by" that are not user names."""


def find_user(text: str) -> str | None:
    """A user name: ``user alice``, ``for alice``, ``of bob``, ``by carol``, ``alice's``."""
    lowered = _RUN.sub(" ", text.lower())
    patterns = (
        r"\buser\s+([a-z][\w.-]*)",
        r"\b([a-z][\w.-]*)'s\s+(?:jobs?|usage|waits?|accounting)",
        r"\b(?:for|of|by)\s+(?:user\s+)?([a-z][\w.-]*)",
        r"^(?:sacct|accounting)\s+(?:\S+\s+)?([a-z][\w.-]*)\s*$",
        r"\b(?:did|does|has)\s+(?:user\s+)?([a-z][\w.-]*)\s+(?:use|consume|burn|draw|run|"
        r"submit|start|finish|complete|cancel|lose|waste)\b",
        r"\bwhat\s+(?:is|are)\s+(?:user\s+)?([a-z][\w.-]*)\s+running\b",
        r"\bhow\s+(?:in)?efficient(?:ly)?\s+(?:was|is|were|has\s+been)\s+(?:user\s+)?"
        r"([a-z][\w.-]*)",
    )
    for pattern in patterns:
        for m in re.finditer(pattern, lowered):
            name = m.group(1).strip(".-")
            if _plausible_user(name):
                return name
    return None


def _plausible_user(name: str) -> bool:
    return (
        len(name) >= 2
        and name not in _USER_STOP
        and not any(name.startswith(month[:3]) and len(name) <= len(month) for month in MONTHS)
        and not re.fullmatch(r"\d+\w*", name)
        and find_workflow(name) is None
        and not find_schedulers(name)
        and find_node(name) is None
    )


_NOT_PARTITIONS = frozenset(
    (
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "so",
        "with",
        "that",
        "this",
        "for",
        "of",
        "in",
        "on",
        "now",
        "right",
        "today",
        "congested",
        "backed",
        "busy",
        "full",
        "slow",
        "free",
        "limits",
        "limit",
        "queue",
        "and",
        "or",
        "to",
        "use",
        "used",
        "uses",
        "using",
        "do",
        "does",
        "did",
        "would",
        "will",
        "could",
        "should",
        "can",
        "at",
        "from",
        "by",
        "when",
        "if",
        "jobs",
        "job",
        "users",
        "user",
        "nodes",
        "node",
        "wait",
        "waits",
        "cap",
        "draw",
        "drew",
        "consume",
        "consumed",
        "burn",
        "burned",
        "energy",
        "power",
        "get",
        "got",
        "be",
        "been",
        "the",
        "a",
    )
)
"""Words after "partition" that are not its name ("which partition has free nodes")."""
_NOT_BEFORE = frozenset({"the", "a", "which", "what", "each", "every", "my", "per", "one", "that"})


def find_partition(text: str) -> str | None:
    """``the gpu partition``, ``partition gpu``, ``gpu partition``."""
    lowered = text.lower()
    named = re.search(r"\b(?:the|a|an|on|in|to|for|of|from)\s+([a-z][\w-]*)\s+partition\b", lowered)
    if named and named.group(1) not in _NOT_BEFORE and named.group(1) not in _NOT_PARTITIONS:
        return named.group(1)
    after = re.search(r"\bpartition\s+([a-z][\w-]*)", lowered)
    if after and after.group(1) not in _NOT_PARTITIONS:
        return after.group(1)
    before = re.search(r"\b([a-z][\w-]*)\s+partition\b", lowered)
    if before and before.group(1) not in _NOT_BEFORE:
        return before.group(1)
    return None


_ACCOUNT = (
    re.compile(r"\b(?:account|project)\s+([a-z][\w.-]*)", re.I),
    re.compile(r"\b([a-z][\w.-]*)\s+(?:account|project)\b", re.I),
)


def find_account(text: str) -> str | None:
    """A Slurm account: ``account astro``, ``the astro account``, kept as typed (whether the
    site has it is for sacctmgr to say). Words that name no account (``the account``, ``account
    limits``) are not taken."""
    for pattern in _ACCOUNT:
        for match in pattern.finditer(text):
            name = match.group(1).lower().strip(".-")
            if name not in _NOT_PARTITIONS and name not in _NOT_BEFORE and name not in _USER_STOP:
                return name
    return None


def find_format(text: str) -> str | None:
    lowered = text.lower()
    if re.search(r"\b(md|markdown)\b", lowered):
        return "md"
    if re.search(r"\bhtml\b", lowered):
        return "html"
    return None


def find_changes(text: str) -> dict[str, Any]:
    """What-if changes: nodes added or removed (by count or name), a bandwidth factor."""
    changes: dict[str, Any] = {}
    lowered = text.lower()
    node_words = r"(?:more\s+|extra\s+|new\s+|additional\s+)?(?:nodes?|machines?|servers?)"
    if m := re.search(
        r"\b(?:add(?:ed|ing)?|had|have|with|plus)\s+" + COUNT + r"\s+" + node_words, lowered
    ):
        changes["add_nodes"] = count_word(m.group(1))
    elif m := re.search(r"\badd\s+(\d+)\b", lowered):
        changes["add_nodes"] = int(m.group(1))
    remove = r"\b(?:remove|removed|drop|dropped|lose|lost|without|minus)\s+"
    if m := re.search(remove + COUNT + r"\s+(?:nodes?|machines?)", lowered):
        changes["remove_count"] = count_word(m.group(1))
    elif (word := failed_node_word(lowered)) and (node := _node_named(word)):
        changes["remove_nodes"] = [node]
    if (factor := bandwidth_factor(lowered)) is not None:
        changes["bandwidth_factor"] = factor
    return changes


def _node_named(word: str) -> str | None:
    """A demo node (``gpu 2`` -> ``gpu02``), or a node-like word kept as typed (``gpu07``), for
    the tool to refuse with the nearest nodes rather than to drop silently."""
    if node := find_node(word):
        return node
    compact = word.replace(" ", "").replace("-", "")
    return compact if _looks_like_host(compact) else None


_KB_RUNTIMES = re.compile(
    r"\b(?:(?:using|use|with|from|on|by)\s+(?:the\s+)?(?:runtimes?\s+(?:of|from)\s+)?"
    r"(?:past|previous|earlier|recorded|real)\s+runs?|(?:kb|knowledge[\s-]base(?:'s)?|history|"
    r"historical)\s+(?:estimates?|runtimes?|predictions?)|--estimates[\s=]+kb|"
    r"estimates?\s+(?:from|of)\s+(?:the\s+)?(?:kb|knowledge[\s-]base|history|past\s+runs?))\b",
    re.I,
)
"""Asking to plan on the runtimes past runs give: "using past runs", "with kb estimates",
"estimates from the knowledge base"."""


def find_runtimes(text: str) -> str | None:
    """``kb`` when ``text`` asks for the knowledge base's runtimes, else None."""
    return "kb" if _KB_RUNTIMES.search(text) else None


_UNIT = r"(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)"
_JOB_TIME = (
    re.compile(r"--time[= ](\S+)"),
    re.compile(rf"\b(\d+(?:\.\d+)?)[\s-]*{_UNIT}[\s-]+(?:long\s+)?(?:jobs?|runs?|tasks?)\b", re.I),
    re.compile(
        rf"\b(?:jobs?|runs?)\s+(?:of|for|that\s+(?:runs?|takes?|needs?|lasts?))\s+"
        rf"(?:about\s+)?(\d+(?:\.\d+)?)\s*{_UNIT}\b",
        re.I,
    ),
)


def find_job_time(text: str) -> str | None:
    """A job's length: ``a 2 hour job`` -> ``2h``, ``a job of 90 minutes`` -> ``90min``,
    ``--time=2:00:00`` as given; None when no job's length is named (a period or a what-if's
    change is not one)."""
    if match := _JOB_TIME[0].search(text):
        return match.group(1)
    for pattern in _JOB_TIME[1:]:
        if match := pattern.search(text):
            unit = match.group(2).lower()
            short = "min" if unit.startswith("m") else unit[0]
            return f"{match.group(1)}{short}"
    return None


def parse_slots(text: str, today: date | None = None) -> Slots:
    """Every slot found in ``text``."""
    return Slots(
        jobid=find_jobid(text),
        run=find_run(text),
        named_run=find_named_run(text),
        task=find_task(text),
        node=find_node(text),
        host=find_host(text),
        workflow=find_workflow(text),
        schedulers=find_schedulers(text),
        period=find_period(CHANGE_DURATIONS.sub(" ", text), today),
        user=find_user(text),
        count=find_count(text),
        partition=find_partition(text),
        account=find_account(text),
        format=find_format(text),
        changes=find_changes(text),
        cluster_changes=cluster_changes(text),
        runtimes=find_runtimes(text),
        job_time=find_job_time(text),
    )


_PERIOD_WORDS = re.compile(
    r"\b(?:(?:in|over|during|for|of|since)\s+)?(?:the\s+)?(?:(?:last|past|previous|this)\s+"
    r"(?:\d+\s+|\w+\s+)?(?:hours?|days?|weeks?|months?|years?|fortnight)|yesterday|today|"
    r"all[\s-]time|\d+\s*[dhw]|\d{4}-\d{2}(?:-\d{2})?(?:\.\.(?:\d{4}-\d{2}-\d{2})?)?)\b",
    re.I,
)
"""Period phrases, so "last week" in an example does not pull every "last week" question."""


def _looks_like_task(word: str) -> bool:
    """``name_123`` or ``merge_bams``, not a scheduler alias (plain words stay words)."""
    if word.lower() in _NOT_TASKS:
        return False
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9]\w*", word))


def delexicalise(text: str) -> str:
    """``text`` with names replaced by what they are (``demo-x-heft`` -> ``the run``), so the
    classifier compares wording, not the particular ids (which the slot parsers read)."""
    text = re.sub(r"(?:\brun\s+)?" + _RUN.pattern, "the run", text, flags=re.I)
    text = _PERIOD_WORDS.sub("over a period", text)
    text = _FILE.sub("the workflow", text)
    text = re.sub(r"\btask\s+[A-Za-z_][\w.-]*\w", "task", text, flags=re.I)
    out = []
    for token in re.split(r"(\s+|[,;:?!()])", text):
        word = token.strip(".")
        if not word or not re.fullmatch(r"[\w.-]+", word):
            out.append(token)
        elif _looks_like_task(word):
            out.append("the task")
        elif (
            find_node(word) is not None and re.fullmatch(r"[a-z]+[ -]?\d+", word.lower())
        ) or _looks_like_host(word):
            out.append("the node")
        elif _fuzzy_workflow(word) is not None:
            out.append("the workflow")
        elif find_schedulers(word) and word.lower() not in {"wass"}:
            out.append("scheduler")
        else:
            out.append(token)
    return "".join(out)
