"""The offline intent router: slash commands and a few plain-English patterns -> one tool call.

Without an LLM the assistant still answers the questions people ask most, deterministically:

=========================================  ==============================================
``/explain [RUN] TASK [NODE]``             why a task ran where it did (explain_placement)
``/cases [RUN|WORKFLOW] [K]``              similar past cases
``/simulate [WORKFLOW] [scheduler=S] ...`` simulate (``platform=P``, ``scheduler=S``)
``/whatif add N | remove N | bw F | ...``  what-if on the current run (simulate)
``/compare [WORKFLOW] [S1,S2,...]``        compare schedulers
``/submit WORKFLOW [SCHEDULER]``           plan a submission (needs approval)
``/status [RUN]``                          run status, or cluster status without a run
``/why JOBID``                             why a job waited (job_why)
``/sacct [PERIOD] [USER]``                 accounting summary
``/report [PERIOD] [html|md]``             audit report
``/help``                                  this list
=========================================  ==============================================

Plain English: "why did task X of run R go to node Y?", "what if I add 4 nodes?", "submit
montage.json", "why did job 42 wait?", "status of run R", "compare schedulers on montage".
Only the user's message is routed; text from tools is never parsed for commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from wass_chat.agent.parse import is_small_talk

HELP = """\
I can explain placements, run what-if simulations, compare schedulers, prepare submissions
(which you approve) and summarise accounting data. Commands:

- `/explain [RUN] TASK [NODE]`: why a task ran on its node (counterfactuals and similar cases)
- `/cases [RUN|WORKFLOW] [K]`: the most similar past executions
- `/simulate [WORKFLOW] [scheduler=S] [platform=P]`: simulate a workflow
- `/whatif add N | remove N | bandwidth F | scheduler S`: change the current run and re-simulate
- `/compare [WORKFLOW] [S1,S2,...]`: compare schedulers
- `/submit WORKFLOW [SCHEDULER]`: plan a submission; nothing runs until you approve
- `/status [RUN]`: a run's tasks, or the cluster's nodes
- `/why JOBID`: why a job waited (reason, wait, backfill, placement)
- `/sacct [PERIOD] [USER]`: accounting summary; `/report [PERIOD] [html|md]`: audit report

Or ask: "why did task X of run R go to node Y?", "what if I add 4 nodes?", "submit montage.json"."""

GREETING = (
    "Hello! I explain scheduling decisions, run what-if simulations and prepare workflow "
    "submissions for your approval. Type `/help` to see what I can do."
)


@dataclass(frozen=True)
class Intent:
    """One routed request: a tool and its arguments, or a canned reply (``tool`` empty)."""

    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    reply: str = ""


_TOKEN = r"([\w@.:/+-]*[\w@/+-])"
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "eight": 8,
    "ten": 10,
    "a": 1,
    "an": 1,
}


def route(text: str) -> Intent:
    """The intent of one user message (slash command, known pattern, small talk, or help)."""
    stripped = text.strip()
    if not stripped:
        return Intent(reply=HELP)
    if stripped.startswith("/"):
        return _slash(stripped)
    if is_small_talk(stripped):
        return Intent(reply=GREETING)
    for pattern, build in _PATTERNS:
        match = pattern.search(stripped)
        if match:
            return build(match)
    return Intent(reply="I did not recognise that request.\n\n" + HELP)


def _options(words: list[str]) -> tuple[list[str], dict[str, str]]:
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


def _slash(text: str) -> Intent:
    command, *words = text[1:].split()
    command = command.lower()
    pos, opt = _options(words)
    if command in {"help", "h", "?"}:
        return Intent(reply=HELP)
    if command == "explain":
        if len(pos) >= 2:
            run, task, *rest = pos
            return Intent("explain_placement", {"run": run, "task": task, "node": _first(rest)})
        if pos and pos[0].startswith(("run-", "demo-")):
            return Intent("explain_placement", {"run": pos[0], **_pick(opt, "task", "node")})
        return Intent("explain_placement", {"task": _first(pos), **_pick(opt, "run", "node")})
    if command == "cases":
        k = next((int(p) for p in pos if p.isdigit()), 5)
        subject = next((p for p in pos if not p.isdigit()), None)
        return Intent("similar_cases", {**_subject(subject), "k": k})
    if command == "simulate":
        args = {**_subject(_first(pos)), **_pick(opt, "platform", "scheduler")}
        return Intent("simulate", args)
    if command == "whatif":
        return Intent("simulate", _whatif(" ".join(words)))
    if command == "compare":
        schedulers = [s for p in pos[1:] for s in p.split(",") if s]
        if "schedulers" in opt:
            schedulers = [s for s in opt["schedulers"].split(",") if s]
        return Intent("compare_schedulers", {**_subject(_first(pos)), "schedulers": schedulers})
    if command == "submit":
        if not pos:
            return Intent(reply="Usage: `/submit WORKFLOW [SCHEDULER]`")
        args = {"workflow": pos[0], **_pick(opt, "scheduler", "platform")}
        if len(pos) > 1:
            args["scheduler"] = pos[1]
        return Intent("submit_workflow", args)
    if command == "status":
        return Intent("run_status", {"run": pos[0]}) if pos else Intent("cluster_status")
    if command == "why":
        if not pos:
            return Intent(reply="Usage: `/why JOBID`")
        return Intent("job_why", {"jobid": pos[0]})
    if command == "sacct":
        return Intent("sacct_summary", {"period": pos[0] if pos else "7d", "user": _first(pos[1:])})
    if command == "report":
        fmt = next((p for p in pos if p in {"html", "md"}), "html")
        period = next((p for p in pos if p not in {"html", "md"}), "7d")
        return Intent("generate_report", {"period": period, "format": fmt, **_pick(opt, "output")})
    return Intent(reply=f"Unknown command `/{command}`.\n\n{HELP}")


def _first(values: list[str]) -> str | None:
    return values[0] if values else None


def _pick(options: dict[str, str], *keys: str) -> dict[str, str]:
    return {k: options[k] for k in keys if k in options}


def _subject(ref: str | None) -> dict[str, str]:
    """A run id or a workflow reference: run ids are recognised by their ``run-`` or ``demo-``
    prefix, anything else is a workflow (file or demo name)."""
    if ref is None:
        return {}
    if ref.startswith(("run-", "demo-")):
        return {"run": ref}
    return {"workflow": ref}


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS.get(word.lower(), 0)


def _whatif(text: str) -> dict[str, Any]:
    """What-if changes from free text: add/remove N nodes, bandwidth factor, another scheduler."""
    args: dict[str, Any] = {}
    lowered = text.lower()
    if m := re.search(
        r"\badd(?:ed|ing)?\s+(\d+|\w+)\s+(?:more\s+|extra\s+|new\s+)?nodes?", lowered
    ):
        args["add_nodes"] = _count(m.group(1))
    elif m := re.search(r"\badd\s+(\d+)\b", lowered):
        args["add_nodes"] = int(m.group(1))
    if m := re.search(r"\b(?:remove|drop|lose|without)\s+(\d+|\w+)\s+nodes?", lowered):
        args["remove_count"] = _count(m.group(1))
    elif m := re.search(r"\b(?:remove|drop|lose|without)\s+(?:node\s+)?" + _TOKEN, text, re.I):
        if not m.group(1).isdigit():
            args["remove_nodes"] = [m.group(1)]
        else:
            args["remove_count"] = int(m.group(1))
    if re.search(r"\bdouble\b.*\bbandwidth|\bbandwidth\b.*\bdoubled?\b", lowered):
        args["bandwidth_factor"] = 2.0
    elif re.search(r"\bhalve\b.*\bbandwidth|\bbandwidth\b.*\bhalved?\b", lowered):
        args["bandwidth_factor"] = 0.5
    elif m := re.search(r"\b(?:bandwidth|bw)\s*(?:x|\*|by|factor|=)?\s*(\d+(?:\.\d+)?)", lowered):
        args["bandwidth_factor"] = float(m.group(1))
    scheduler = re.search(r"\b(?:scheduler|use|using|with)\s+([a-z][\w-]*)", lowered)
    if scheduler and scheduler.group(1) not in {"node", "nodes", "bandwidth", "more", "the", "a"}:
        args["other_scheduler"] = scheduler.group(1)
    if m := re.search(r"\b(?:on|for|of)\s+(?:run\s+)?((?:run|demo)-[\w.-]*\w)", text, re.I):
        args["run"] = m.group(1)
    return args


def _explain(m: re.Match[str]) -> Intent:
    return Intent(
        "explain_placement",
        {"task": m.group("task"), "run": m.group("run"), "node": m.group("node")},
    )


_PATTERNS: list[tuple[re.Pattern[str], Any]] = [
    (
        re.compile(
            r"\bwhy\b.*?\btask\s+"
            + _TOKEN.replace("(", "(?P<task>", 1)
            + r"\s+(?:of|in|from)\s+(?:run\s+)?"
            + _TOKEN.replace("(", "(?P<run>", 1)
            + r"(?:.*?\b(?:to|on|onto)\s+(?:node\s+)?"
            + _TOKEN.replace("(", "(?P<node>", 1)
            + r")?",
            re.I,
        ),
        _explain,
    ),
    (
        re.compile(r"\bwhy\b.*?\bjob\s+(?:id\s+)?#?(\d+(?:_\d+)?)", re.I),
        lambda m: Intent("job_why", {"jobid": m.group(1)}),
    ),
    (
        re.compile(r"\bwhat\s+(?:if|happens\s+if|would\s+happen\s+if)\b(.*)", re.I),
        lambda m: Intent("simulate", _whatif(m.group(1))),
    ),
    (
        re.compile(
            r"\bsubmit\s+(?:the\s+)?(?:workflow\s+)?"
            + _TOKEN
            + r"(?:.*?\b(?:with|using)\s+([\w-]+))?",
            re.I,
        ),
        lambda m: Intent(
            "submit_workflow",
            {"workflow": m.group(1), **({"scheduler": m.group(2)} if m.group(2) else {})},
        ),
    ),
    (
        re.compile(
            r"\b(?:similar|past)\s+(?:cases|runs|executions)\b(?:.*?\b(?:to|for|like)\s+"
            + _TOKEN
            + ")?",
            re.I,
        ),
        lambda m: Intent("similar_cases", _subject(m.group(1))),
    ),
    (
        re.compile(r"\bcompare\b.*?\bschedulers?\b(?:.*?\b(?:on|for)\s+" + _TOKEN + ")?", re.I),
        lambda m: Intent("compare_schedulers", _subject(m.group(1))),
    ),
    (
        re.compile(r"\bstatus\s+of\s+(?:run\s+)?" + _TOKEN, re.I),
        lambda m: Intent("run_status", {"run": m.group(1)}),
    ),
    (
        re.compile(
            r"\b(?:cluster|nodes?)\s+status\b|\bstatus\s+of\s+the\s+cluster\b|"
            r"\bhow\s+is\s+the\s+cluster\b",
            re.I,
        ),
        lambda m: Intent("cluster_status"),
    ),
    (
        re.compile(r"\bsimulate\s+" + _TOKEN + r"(?:.*?\bwith\s+([\w-]+))?", re.I),
        lambda m: Intent(
            "simulate",
            {**_subject(m.group(1)), **({"scheduler": m.group(2)} if m.group(2) else {})},
        ),
    ),
    (
        re.compile(r"\b(?:report)\b", re.I),
        lambda m: Intent("generate_report", {}),
    ),
    (
        re.compile(r"\b(?:sacct|accounting|wait\s+times?)\b", re.I),
        lambda m: Intent("sacct_summary", {}),
    ),
]
