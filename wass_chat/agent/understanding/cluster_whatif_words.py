"""Whole-cluster what-ifs and energy questions said in words, and whose what-if a question is.

"If we add 8 GPU nodes, how much shorter are waits?", "what does a 24 h cap on the long
partition do?", "how much energy would powering idle nodes down after 30 minutes save?",
"would backfill work better if walltimes were predicted instead of requested?", "what if
fairshare weight were 0": :func:`cluster_changes` reads them into the arguments of the
``cluster_whatif`` tool (nodes added or removed, by count, type or percentage; a partition's
time limit; power saving with its delay and boot time; predicted walltimes; another
scheduler; priority weights).

The workflow what-if ("what if I add 4 nodes?" to the current run) uses some of the same
words, so :func:`whatif_subject` says whose question it is: the cluster's when it speaks of the
queue, waits, partitions, backfill, walltimes, energy or power, or asks for a change only the
replay can make (a time limit, power saving, predictions, a percentage, a batch scheduler); the
workflow's when it names a workflow, run, task or workflow scheduler, or speaks of the
makespan; ``unclear`` when it only adds nodes "to the cluster" or adds GPU or CPU nodes and
says nothing else, and ``both`` when it mixes the two (the router then asks back with both
choices). A bare "what if we add 4 nodes?" stays the current run's question, as it always was.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from wass_chat.agent.understanding.period_words import COUNT, count_word

_DURATION = r"(\d+(?:\.\d+)?|an?|one|two|three|four|five|six|ten|twelve)\s*-?\s*"
_UNIT = r"(h|hrs?|hours?|d|days?|min|mins|minutes?)\b"
_HOURS = {"h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "d": 24.0, "day": 24.0}
_NOT_PARTITIONS = frozenset(
    (
        "the",
        "a",
        "an",
        "cluster",
        "queue",
        "system",
        "site",
        "machine",
        "it",
        "them",
        "more",
        "extra",
        "new",
        "additional",
        "compute",
        "idle",
        "of",
        "our",
        "its",
        "their",
        "all",
        "every",
        "each",
        "nodes",
        "node",
        "partition",
        "pool",
        "we",
        "us",
        "fewer",
        "less",
        "gpu",
        "cpu",
        "run",
        "jobs",
        "job",
        "users",
    )
)
"""Words next to "nodes" that name no partition ("8 more nodes", "nodes to the cluster")."""


def _number(word: str) -> float:
    return float(word) if word[0].isdigit() else float(count_word(word) or 1)


def _hours(number: str, unit: str) -> float:
    """A duration in hours (minutes divided by 60)."""
    unit = unit.lower()
    value = _number(number)
    return value / 60 if unit.startswith("min") else value * _HOURS.get(unit.rstrip("s"), 1.0)


def _partition_word(word: str | None) -> str | None:
    if word is None or word in _NOT_PARTITIONS or not re.fullmatch(r"[a-z][\w-]*", word):
        return None
    return word


_RESIZED = (
    r"\b(shrink\w*|cut\w*|reduc\w*|grow\w*|expand\w*|enlarg\w*)\s+(?:the\s+)?"
    r"(?:cluster|nodes?)\s+by\s+(\d+(?:\.\d+)?)\s*(?:%|percent)"
)


def node_changes(lowered: str) -> dict[str, Any]:
    """Nodes added or removed: a count (``8 more gpu nodes``, ``retire 20 nodes from
    batch``) or a percentage (``10% fewer nodes``, ``a 10% bigger cluster``)."""
    out: dict[str, Any] = {}
    node = r"(?:(?:more|extra|new|additional|fewer|less)\s+)?(?:([a-z][\w-]*)\s+)?nodes?\b"
    added = (
        re.search(
            r"\b(?:add\w*|buy\w*|bought|gets?|got|install\w*|with|had|have|plus|another)\s+"
            + COUNT
            + r"\s+(?!(?:fewer|less)\b)"
            + node,
            lowered,  # "had 2 fewer nodes" removes
        )
        or re.search(
            r"\b" + COUNT + r"\s+(?:more|extra|new|additional)\s+(?:([a-z][\w-]*)\s+)?"
            r"nodes?\b",
            lowered,
        )
    )
    removed = re.search(
        r"\b(?:remov\w*|drop\w*|los[et]\w*|retir\w*|decommission\w*|without|minus|take\s+away|"
        r"fewer|less)\s+" + COUNT + r"\s+" + node,
        lowered,
    ) or re.search(r"\b" + COUNT + r"\s+(?:fewer|less)\s+(?:([a-z][\w-]*)\s+)?nodes?\b", lowered)
    removed = removed or re.search(
        r"\b" + COUNT + r"\s+" + node + r"\s+(?:were|are|was|get|got)"
        r"\s+(?:removed|retired|lost|dropped)",
        lowered,
    )
    for key, match in (("add_nodes", added), ("remove_nodes", removed)):
        if match:
            out[key] = count_word(match.group(1))
            word = match.group(2)
            if word in ("gpu", "cpu"):
                out["node_type"] = word
            elif part := _partition_word(word):
                out["partition"] = part
    if m := re.search(
        r"\b(\d+(?:\.\d+)?)\s*(?:%|percent)\s+(more|fewer|less|bigger|larger|"
        r"smaller)\b",
        lowered,
    ):
        sign = 1 if m.group(2) in ("more", "bigger", "larger") else -1
        out["nodes_pct"] = sign * float(m.group(1))
    elif m := re.search(_RESIZED, lowered):
        sign = -1 if m.group(1)[:2] in ("sh", "cu", "re") else 1
        out["nodes_pct"] = sign * float(m.group(2))
    if "add_nodes" in out or "remove_nodes" in out:
        where = re.search(
            r"\bnodes?\s+(?:to|from|in|into|for|of)\s+(?:the\s+)?(?:partition\s+)?"
            r"([a-z][\w-]*)",
            lowered,
        )
        if where and (part := _partition_word(where.group(1))):
            out.setdefault("partition", part)
    return out


def time_limit_h(lowered: str) -> float | None:
    """A partition's new MaxTime in hours: ``a 24 h cap``, ``48 hour limit``, ``capping jobs
    on long at 12h``, ``maxtime on extended were 3 days``, ``limit debug to 1 hour``."""
    limit = r"(?:time\s+)?(?:cap|limit|max\s*-?\s*time|maxtime|wall\s*time\s+(?:limit|cap))\b"
    if m := re.search(r"\b" + _DURATION + _UNIT + r"\s+" + limit, lowered):
        return _hours(m.group(1), m.group(2))
    after = (
        r"\b(?:cap\w*|limit\w*|max\s*-?\s*time|maxtime|time\s+limit)\b[^.?!,]{0,40}?"
        r"\b(?:at|to|of|=|were|was|is|be|set\s+to)\s+"
    )
    if m := re.search(after + _DURATION + _UNIT, lowered):
        return _hours(m.group(1), m.group(2))
    return None


_POWER_VERB = re.compile(
    r"\b(?:power|switch|turn|shut)(?:s|es|ed|ing|ting)?\s*(?:[\w']+\s+){0,3}?(?:down|off)\b"
)
_POWER_SAVING = re.compile(r"\bpower[\s-]?sav\w*|\bsuspend\w*|\bhibernat\w*")


def power_saving(lowered: str) -> dict[str, Any]:
    """Idle nodes powered off: the delay (``after 30 minutes``, ``idle for 2 hours``; 30 min
    when unsaid) and the boot time (``boot takes 3 minutes``, ``a 10 minute boot``)."""
    about_nodes = re.search(r"\b(?:idle|nodes?|machines?)\b", lowered)
    idle_off = re.search(
        r"\bidle\s+(?:nodes?|machines?)\s+(?:[\w']+\s+){0,2}?(?:off|down)\b", lowered
    )
    if not (
        _POWER_SAVING.search(lowered) or idle_off or (_POWER_VERB.search(lowered) and about_nodes)
    ):
        return {}
    out: dict[str, Any] = {"power_off_after_min": 30.0}
    if m := re.search(
        r"\b(?:after|idle\s+for|idle\s+over|idle\s+longer\s+than)\s+" + _DURATION + _UNIT, lowered
    ):
        out["power_off_after_min"] = round(_hours(m.group(1), m.group(2)) * 60, 3)
    boot = re.search(
        r"\bboot\w*\s+(?:time\s+)?(?:takes\s+|of\s+|is\s+|in\s+|lasts\s+)?"
        + _DURATION
        + r"(s|secs?|seconds?|min|mins|minutes?)\b",
        lowered,
    )
    boot = boot or re.search(
        r"\b" + _DURATION + r"(s|secs?|seconds?|min|mins|minutes?)\s+boot", lowered
    )
    if boot:
        seconds = _number(boot.group(1)) * (60 if boot.group(2).startswith("min") else 1)
        out["boot_time_s"] = int(seconds)
    return out


_PREDICT = re.compile(r"\bpredict\w*|\bprediction\w*")
_WALLTIME = re.compile(
    r"\b(?:wall\s*-?\s*times?|run\s*-?\s*times?|time\s*limits?|limits?|durations?|estimates?)\b"
)


def predicted_walltimes(lowered: str) -> bool:
    """Walltimes predicted from history instead of the requested limits."""
    return bool(_PREDICT.search(lowered) and _WALLTIME.search(lowered))


def batch_scheduler(lowered: str) -> str | None:
    """Another batch scheduler: FIFO, SJF, EASY backfill, or no backfill (multifactor)."""
    if re.search(r"\bfifo\s+(?:with|plus|and)\s+(?:easy\s+)?backfill", lowered):
        return "fifo-easy"
    if re.search(r"\bfifo\b|\bfirst[\s-]come[\s-]first[\s-]served\b", lowered):
        return "fifo"
    if re.search(r"\bsjf\b|\bshortest[\s-]jobs?[\s-]first\b", lowered):
        return "sjf"
    if re.search(r"\beasy\s+backfill", lowered):
        return "easy"
    if re.search(
        r"\b(?:without|no|turn\w*\s+off|disabl\w*|drop\w*)\s+(?:the\s+)?backfill", lowered
    ):
        return "priority"
    return None


_FACTOR = r"(fair\s*-?\s*share|age|job\s*-?\s*size|size|partition|qos)"
_FACTOR_NAMES = {"age": "age", "size": "job_size", "partition": "partition", "qos": "qos"}


def _factor(word: str) -> str:
    word = re.sub(r"[\s-]", "", word)
    return "fairshare" if word == "fairshare" else _FACTOR_NAMES.get(word.removeprefix("job"), word)


AGE_ONLY_WEIGHTS = "age=1000,fairshare=0,job_size=0,partition=0,qos=0"
"""A queue ordered by age alone (FIFO-like); the same as ``wass_chat.batch.whatif``'s, which
this package may not import (tests/agent/test_cluster_whatif_words.py holds them equal)."""
_AGE_ONLY = re.compile(
    r"\bage[\s-]+only\b|\bonly\s+(?:by\s+|on\s+)?(?:the\s+)?(?:job'?s?\s+)?age\b|"
    r"\b(?:by|on)\s+age\s+(?:only|alone)\b|\b(?:just|purely|solely)\s+(?:by\s+|on\s+)?age\b|"
    r"\bage\s+alone\b"
)


def priority_weights(lowered: str) -> str | None:
    """Priority weights: ``fairshare weight were 0``, ``age weight set to 5000``, ``weight of
    age to 1000``, ``fair share weighed 10000``, ``and age 1000`` after one, ``turn off
    fairshare`` (0); ``priority by age only`` (:data:`AGE_ONLY_WEIGHTS`)."""
    if _AGE_ONLY.search(lowered):
        return AGE_ONLY_WEIGHTS
    found: dict[str, int] = {}
    value = r"\s+(?:to|=|of|was|were|is|at|set\s+to|be)?\s*(\d+)\b"
    patterns = (
        _FACTOR + r"\s+(?:priority\s+)?weight" + value,
        r"\bweight\s+(?:of\s+|for\s+)?" + _FACTOR + value,
        _FACTOR + r"\s+(?:were\s+|was\s+|is\s+)?weigh(?:ed|s|ted)?\s+(?:at\s+|by\s+)?(\d+)\b",
    )
    for pattern in patterns:
        for m in re.finditer(r"\b" + pattern, lowered):
            found.setdefault(_factor(m.group(1)), int(m.group(2)))
    if found:
        for m in re.finditer(
            r"\band\s+" + _FACTOR + r"\s+(?:weight\s+)?(?:to\s+|=\s*)?(\d+)\b", lowered
        ):
            found.setdefault(_factor(m.group(1)), int(m.group(2)))
    for m in re.finditer(
        r"\b(?:turn\w*\s+off|no|without|disabl\w*|drop\w*)\s+(?:the\s+)?" + _FACTOR + r"\b", lowered
    ):
        found.setdefault(_factor(m.group(1)), 0)
    return ",".join(f"{k}={v}" for k, v in found.items()) or None


def limited_partition(lowered: str) -> str | None:
    """The partition a time limit is for: ``cap on the long partition``, ``maxtime on
    extended``, ``capping jobs on partition long`` (``the X partition`` is read by
    :func:`~wass_chat.agent.understanding.slots.find_partition`)."""
    m = re.search(
        r"\b(?:cap\w*|limit\w*|max\s*-?\s*time|maxtime)\b[^.?!,]{0,20}?\b(?:on|for|of|in)\s+"
        r"(?:the\s+)?(?:partition\s+)?([a-z][\w-]*)",
        lowered,
    )
    return _partition_word(m.group(1)) if m else None


def cluster_changes(text: str) -> dict[str, Any]:
    """Every whole-cluster change ``text`` states, as ``cluster_whatif`` arguments."""
    lowered = text.lower()
    out: dict[str, Any] = {}
    if (hours := time_limit_h(lowered)) is not None:
        out["max_time_h"] = hours
        if part := limited_partition(lowered):
            out["partition"] = part
    out |= power_saving(lowered)
    out |= node_changes(lowered)
    if predicted_walltimes(lowered):
        out["predict_walltime"] = True
    if scheduler := batch_scheduler(lowered):
        out["scheduler"] = scheduler
    if weights := priority_weights(lowered):
        out["weights"] = weights
    return out


CHANGE_DURATIONS = re.compile(
    r"\b\d+(?:\.\d+)?\s*-?\s*(?:h|hrs?|hours?|d|days?|min|mins|minutes?)\s+"
    r"(?:time\s+)?(?:cap|limit|max\s*-?\s*time|maxtime|boot)\b|\b(?:at|to|after|for|were|was|"
    r"takes)\s+\d+(?:\.\d+)?\s*-?\s*(?:h|hrs?|d)\b",
    re.I,
)
"""Durations that belong to a change ("a 24 h cap", "at 12h"), not to the period replayed."""

QUEUE_WORDS = re.compile(
    r"\b(waits?|waiting|waited|wait\s*times?|queue\w*|backlog|partitions?|backfill\w*|"
    r"wall\s*times?|walltimes?|time\s*limits?|utili[sz]ation|throughput|energy|kwh|kilowatt\w*|"
    r"power|electricity|idle\s+nodes?|replay\w*|whole\s+cluster|our\s+workload|the\s+site)\b",
    re.I,
)
"""Words of the cluster's queue, waits and energy: a what-if with them is the cluster's."""
WORKFLOW_WORDS = re.compile(r"\b(makespan|workflows?|my\s+run|the\s+run|tasks?|finish\w*)\b", re.I)
STRONG_CHANGES = frozenset(
    ("max_time_h", "power_off_after_min", "predict_walltime", "scheduler", "weights", "nodes_pct")
)
"""Changes only the cluster replay makes: with one of them, the question is the cluster's."""
ENERGY_WORDS = re.compile(
    r"\b(energy|kwh|kilowatt[\s-]?hours?|electricity|power\s+(?:consum\w*|usage|use|used)|"
    r"consum\w*|joules?|megawatt[\s-]?hours?|mwh)\b",
    re.I,
)
HYPOTHETICAL = re.compile(r"\b(would|could|if|save[sd]?|saving|savings|what\s*if|suppose)\b", re.I)

Subject = Literal["cluster", "workflow", "both", "unclear"]


def whatif_subject(
    text: str, changes: dict[str, Any], workflow_named: bool, unqualified: Subject = "workflow"
) -> Subject | None:
    """Whose what-if ``text`` is, given the cluster changes it states and whether it names a
    workflow, run, task or workflow scheduler (None: no cluster change at all).

    ``unqualified`` is whose a what-if naming neither is: the current run's offline, the
    cluster's when a live cluster is there to replay (see the router's ``cluster_live``)."""
    if not changes:
        return None
    workflow = workflow_named or bool(WORKFLOW_WORDS.search(text))
    cluster = bool(QUEUE_WORDS.search(text)) or bool(STRONG_CHANGES & set(changes))
    if cluster and workflow:
        return "both"
    if cluster:
        return "cluster"
    if workflow:
        return "workflow"
    if unqualified == "cluster":
        return "cluster"  # a live cluster: "what if we add 4 nodes?" replays its workload
    if "node_type" in changes or re.search(r"\b(?:the|our|this)\s+cluster\b", text, re.I):
        return "unclear"
    return "workflow"  # "what if we add 4 nodes?": the current run, as it always was


def asks_recorded_energy(text: str, changes: dict[str, Any]) -> bool:
    """Energy the cluster used (not what a change would save)."""
    return bool(ENERGY_WORDS.search(text)) and not changes and not HYPOTHETICAL.search(text)


COMMAND_USAGE = (
    "/whatif-cluster add N [gpu|cpu|PARTITION] | remove N [...] | pct +-P | "
    "cap PARTITION HOURS | power-off MIN | predict | scheduler S | weights K=V,... [period=P]"
)


_WEIGHT_OPTIONS = ("age", "fairshare", "job_size", "qos")


def command_changes(words: list[str], options: dict[str, str]) -> dict[str, Any]:
    """``/whatif-cluster`` typed exactly (see :data:`COMMAND_USAGE`): the tool's arguments."""
    args: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word, rest = words[i].lower(), words[i + 1 :]
        nxt = rest[0] if rest else ""
        if word in ("add", "remove") and nxt.isdigit():
            args["add_nodes" if word == "add" else "remove_nodes"] = int(nxt)
            target = rest[1].lower() if len(rest) > 1 else ""
            if target in ("gpu", "cpu"):
                args["node_type"] = target
            elif target and target not in ("nodes", "node"):
                args["partition"] = target
            i += 3 if target else 2
        elif word == "pct" and re.fullmatch(r"[+-]?\d+(?:\.\d+)?", nxt):
            args["nodes_pct"] = float(nxt)
            i += 2
        elif word == "cap" and len(rest) >= 2 and re.fullmatch(r"\d+(?:\.\d+)?h?", rest[1].lower()):
            args["partition"], args["max_time_h"] = rest[0], float(rest[1].rstrip("hH"))
            i += 3
        elif word in ("power-off", "poweroff") and re.fullmatch(r"\d+(?:\.\d+)?", nxt):
            args["power_off_after_min"] = float(nxt)
            i += 2
        elif word == "predict":
            args["predict_walltime"] = True
            i += 1
        elif word in ("scheduler", "weights") and nxt:
            args[word] = nxt
            i += 2
        elif word == "weights":  # "weights age=0": the pairs were read as options
            pairs = [f"{k}={v}" for k, v in options.items() if k in _WEIGHT_OPTIONS]
            args["weights"] = ",".join(pairs) or None
            i += 1
        else:
            i += 1
    for key in ("partition", "period", "scheduler", "weights"):
        if key in options:
            args[key] = options[key]
    if options.get("boot", "").isdigit():
        args["boot_time_s"] = int(options["boot"])
    return args
