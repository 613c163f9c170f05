"""The offline router: one user message -> one tool call, a reply, or a question back.

Slash commands are parsed exactly by their row of
:data:`wass_chat.agent.understanding.intents.INTENTS` (``/help`` lists them). Free text goes through
three steps:

1. **Refusals and small talk**, deterministic: actions the assistant cannot take (cancel, kill,
   delete, reboot, drain) get a plain "I can't", greetings a greeting.
   A question about what a Slurm reason or state code means gets its meaning from the
   explainer's table (:mod:`wass_chat.agent.understanding.glossary`).
2. **Intent**: the nearest-exemplar classifier of :mod:`wass_chat.agent.understanding.nlu`
(all-MiniLM-L6-v2
   embeddings) ranks the intents, and a few unambiguous cues (a job id after "why", the word
   "submit", a period with "waited") settle what embeddings blur.
3. **Slots**: :mod:`wass_chat.agent.understanding.slots` reads job ids, runs, tasks, nodes,
workflows,
   schedulers, periods, users and counts; the row's builder turns them into tool arguments.

When the best reading is weak, or two tools are nearly tied, the router asks back with the
likeliest readings instead of guessing; it never plans a submission unless the message says so
(submit, launch, sbatch, queue up, send to Slurm). Only the user's message is routed; text from
tools is never parsed for commands.
"""

from __future__ import annotations

import getpass
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

from wass_chat.agent.understanding.cluster_whatif_words import (
    ENERGY_WORDS,
    HYPOTHETICAL,
    Subject,
    asks_recorded_energy,
    cluster_changes,
    whatif_subject,
)
from wass_chat.agent.understanding.glossary import glossary_reply
from wass_chat.agent.understanding.gpu_words import GPU_USE, asks_gpu_use, gpu_arguments
from wass_chat.agent.understanding.intents import (
    INTENTS,
    SPEC_BY_NAME,
    Intent,
    help_text,
    parse_slash,
)
from wass_chat.agent.understanding.nlu import IntentClassifier, Reading, shared_classifier
from wass_chat.agent.understanding.parse import is_small_talk
from wass_chat.agent.understanding.scope import GPU_READINGS, outside_topic, refusal
from wass_chat.agent.understanding.slots import Slots, delexicalise, find_jobid, parse_slots
from wass_chat.agent.understanding.submit_wording import (
    asks_to_submit,
    hypothetical,
    may_mean_submit,
    refused,
)

__all__ = ["GREETING", "HELP", "Intent", "Routed", "route", "routed"]

HELP = help_text()

GREETING = (
    "Hello! I explain scheduling decisions, run what-if simulations and prepare workflow "
    "submissions for your approval. Type `/help` to see what I can do."
)

MIN_SCORE = 0.42
"""Below this cosine to its nearest exemplar, the best reading is not trusted (ask back)."""
MARGIN = 0.03
"""Two different tools closer than this are a tie: ask which one was meant."""
TOOLS_OFFERED = 3
"""How many tools the online model is offered for one question (:meth:`Routed.likely_tools`):
each tool's schema is in every prompt, and a small model picks worse among many."""

_REFUSE = re.compile(
    r"^\s*(?:please\s+|pls\s+|can you\s+|could you\s+)?"
    r"(cancel|scancel|kill|delete|remove\s+job|rm|reboot|restart|(?:un-?)?drain|resume|requeue|"
    r"(?:un-?)?hold|release|(?:un-?)?suspend|shutdown|shut\s+down|power\s+off)\b",
    re.I,
)
REPORT_CUE = re.compile(r"\b(report\w*|audit|export|write[\s-]?up)\b", re.I)
"""``generate_report`` writes a file: only chosen when the text names a report."""
_HELP_CUE = re.compile(
    r"^\s*(what\s+can\s+you\s+do|help(\s+me)?|show\s+help|commands|usage)\s*[?!.]*\s*$", re.I
)
_NOW = re.compile(r"\b(now|right now|currently|at the moment|queue(?:d)?\s+now)\b", re.I)
_MINE = re.compile(r"\b(my|mine)\b", re.I)
"""A job question without an id about the asker's own jobs: their pending jobs, with reasons."""
_ENDED = re.compile(
    r"\b(fail\w*|crash\w*|die|died|killed|broke|error\w*|oom|out of memory|timed?\s*out|"
    r"cancel+ed)\b",
    re.I,
)
"""A job question without an id about how the asker's job ended: their latest bad ending."""
_PENDING = re.compile(r"\b(pending|queued|waiting|stuck|holding\s+up|blocking)\b", re.I)
"""The queue's wording: with a partition, account or user named and no job, the queue there."""
_WAITED = re.compile(r"\b(waited|waiters?|waits|waiting users|longest|worst)\b", re.I)
_EFFICIENCY = re.compile(
    r"\b(efficien\w*|inefficien\w*|wast\w*|seff|idle\s+(?:cores?|cpus?|core[\s-]?hours?)|"
    r"core[\s-]?hours?|cpu[\s-]?hours?|over[\s-]?(?:request|ask)\w*)\b",
    re.I,
)
"""Efficiency wording: a job's or a period's use of what was allocated (``efficiency``)."""
_JOB_STATE = re.compile(
    r"\b(run|running|start|started|starting|pending|queued|stuck|wait|waiting|held|blocked|"
    r"fail|failed|die|died|killed|efficient|efficiency|use|used|wasted?)\b",
    re.I,
)
"""Words about a job's fate: with a lone number ("why won't 144 run?") the number is a job id."""
_LIVE_LOAD = re.compile(
    r"\b(busy|full|loaded|free|idle|in\s+use|using|hogging|running\s+(?:jobs|on)|"
    r"(?:what|who)(?:'s|\s+is)\s+(?:[a-z][\w.-]*\s+)?running)\b",
    re.I,
)
_RUN_WORDS = re.compile(r"\b(runs?|workflows?|tasks?|plan)\b", re.I)
"""Without these (or a run's name), "what's running?" is about the cluster, as ``/status`` is."""
_NODE_STATE = re.compile(r"\b(down|drain\w*|offline|resum\w*|fail\w*|state|up|broken)\b", re.I)
"""A node's state words: with a node named and no "what if", a question about that node."""
_PARTITION_SETTINGS = re.compile(
    r"\b(?:max(?:imum)?\s*(?:wall\s*)?time|(?:wall\s*)?time\s*limits?|maxtime|max\s*nodes|"
    r"maxnodes|limits?|settings?|configured|which\s+nodes|how\s+many\s+(?:nodes|cpus)|"
    r"nodes\s+(?:are\s+)?in|allowed|admits?)\b",
    re.I,
)
"""A partition's settings asked about now ("what is the max time of small?"): with a partition
named and nothing hypothetical, the cluster answer's partition, not a what-if to replay."""
_JOBS_NOW = re.compile(
    r"\bhow\s+many\s+(?:of\s+\w+\s+)?jobs?\b(?!.{0,40}\b(?:ran|finished|completed|failed|were|did|"
    r"submitted)\b).{0,40}\b(?:running|run(?:s|ning)?\s+now|pending|queued|waiting|in\s+(?:the\s+)?"
    r"queue|on\s+the\s+cluster)\b|"
    r"\b(?:longest|oldest)[\s-]+running\s+jobs?\b|\bjobs?\s+(?:that\s+)?(?:has|have)\s+(?:been\s+)?"
    r"run(?:ning)?\s+(?:the\s+)?longest\b|"
    r"\b(?:which|what)\s+users?\b.{0,30}\bmost\s+(?:running\s+|pending\s+|queued\s+)?jobs\b|"
    r"\bwho\s+has\s+the\s+most\s+jobs\b|"
    r"\bwhat\s+(?:is|are)\s+(?:user\s+)?[a-z][\w.-]*\s+running\b|"
    r"\b(?:list|show)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?(?:running\s+|pending\s+|queued\s+)?"
    r"jobs\b(?:\s+(?:of|for|from|by|in)\b|\s*[?.!]*\s*$)",
    re.I,
)
"""The live queue's jobs counted or listed ("how many jobs are running?", "what is alice
running?", "which user has the most jobs in the queue?", "the longest-running job"): squeue
answers them now (``queue_overview``), not a week of accounting or a run's status."""
_CLUSTER_SIZE = re.compile(
    r"\bhow\s+many\s+(?:cpus?|cores?|nodes?)\s+(?:does\s+(?:the|our|this)\s+(?:cluster|system)\s+"
    r"have|do\s+we\s+have|are\s+there|(?:are\s+)?in\s+(?:the|our|this)\s+(?:cluster|system)|in\s+"
    r"total)\b",
    re.I,
)
"""The cluster's size ("how many CPUs does the cluster have?"): the cluster answer counts its
CPUs and nodes (not its GPUs: it does not list them)."""
_SIMILAR = re.compile(
    r"\b(similar\w*|resembl\w*|alike|precedents?|(?:runs?|cases?|executions?|workflows?)\s+like)\b",
    re.I,
)
"""Wording of a similar-cases request ("runs like this one", "precedents for montage")."""
_PRESENT = re.compile(r"\b(?:is|are)\b|\w's\b", re.I)
"""Present tense: "is the cluster busy?" is about now; "how busy was it?" is accounting."""


def route(
    text: str,
    today: date | None = None,
    classifier: IntentClassifier | None = None,
    cluster_live: Callable[[], bool] | None = None,
) -> Intent:
    """The intent of one user message (slash command, refusal, small talk, or classified text).

    ``cluster_live`` says whether a live Slurm cluster is there (asked only for a what-if that
    names neither a run nor the cluster): then "what if I add 2 nodes?" is the cluster's
    what-if, not a simulation of whatever run was last recorded.
    """
    return routed(text, today, classifier, cluster_live).intent


@dataclass(frozen=True)
class Routed:
    """One message routed: its intent, and the readings it was decided from."""

    intent: Intent
    readings: tuple[Reading, ...] = ()
    """The intents by score after the cues, best first; empty when the message was settled
    before it was classified (a slash command, a refusal, small talk, a glossary term, GPU
    use)."""
    gated: frozenset[str] = frozenset()
    """Intents the wording does not license (a submission not asked for, a report not named)."""

    def likely_tools(self, count: int = TOOLS_OFFERED) -> tuple[str, ...]:
        """The ``count`` tools likeliest to answer the message, best first: the routed intent's
        tool, then those of the best readings, never a gated one. Empty when the router has no
        confident ranking: the best reading scores under :data:`MIN_SCORE` or is no tool's
        (help, small talk, what no tool answers) and no tool was routed to.

        The online session offers its model only these (and the tools the conversation
        already used), not every tool: :class:`~wass_chat.agent.online.OnlineSession`."""
        top = self.readings[0] if self.readings else None
        confident = top is not None and top.score >= MIN_SCORE and _is_tool(top.intent)
        if not confident and not self.intent.tool:
            return ()
        tools = [self.intent.tool] if self.intent.tool else []
        if confident:
            tools += [
                SPEC_BY_NAME[r.intent].tool
                for r in self.readings
                if _is_tool(r.intent) and r.intent not in self.gated
            ]
        return tuple(dict.fromkeys(tools))[:count]


def _is_tool(intent: str) -> bool:
    return intent in SPEC_BY_NAME and bool(SPEC_BY_NAME[intent].tool)


def routed(
    text: str,
    today: date | None = None,
    classifier: IntentClassifier | None = None,
    cluster_live: Callable[[], bool] | None = None,
) -> Routed:
    """:func:`route`'s intent with the readings it was decided from (see :class:`Routed`)."""
    stripped = text.strip()
    if not stripped or stripped in {"?", "??"}:
        return Routed(Intent(reply=HELP, name="help"))
    if stripped.startswith("/"):
        return Routed(parse_slash(stripped))
    if (match := _REFUSE.match(stripped)) and not _cluster_hypothetical(stripped):
        return Routed(
            Intent(
                reply=f"I can't {match.group(1).lower()} anything: I only explain, simulate and "
                "prepare submissions for your approval. Nothing was done.",
                name="none",
            )
        )
    if _HELP_CUE.match(stripped):
        return Routed(Intent(reply=HELP, name="help"))
    if is_small_talk(stripped):
        return Routed(Intent(reply=GREETING, name="smalltalk"))
    if not find_jobid(stripped) and (meaning := glossary_reply(stripped)):
        return Routed(Intent(reply=meaning, name="glossary"))
    classifier = classifier or shared_classifier()
    fixed = classifier.spelling.fix(delexicalise(stripped))
    slots = parse_slots(stripped, today)
    if (
        slots.jobid is None
        and slots.period is None
        and not slots.cluster_changes
        and _bare_job(stripped, slots)
    ):
        slots = replace(slots, jobid=find_jobid(stripped, bare=True))
    topic = outside_topic(stripped)
    if (topic is None or topic is GPU_READINGS) and asks_gpu_use(stripped, slots):
        return Routed(Intent("gpu_usage", gpu_arguments(stripped, slots), name="gpu_usage"))
    if (
        topic
        and not _cluster_hypothetical(stripped)
        and not (topic.qualifiable and _in_scope(stripped, slots))
        and not (topic.order and _simulated_or_submitted(stripped, slots))
    ):  # "what if we raised the long partition's limit to 48 h?" is a what-if, not an order
        return Routed(Intent(reply=refusal(topic.reason), name="none", refused=True))
    unqualified: Subject = "workflow"
    if cluster_live is not None and _whatif_subject(stripped, slots, "cluster") != (
        _whatif_subject(stripped, slots)
    ):
        unqualified = "cluster" if cluster_live() else "workflow"
    readings = _with_cues(stripped, fixed, slots, classifier.rank(fixed), unqualified)
    return Routed(
        decide(stripped, fixed, readings, slots, unqualified),
        tuple(readings),
        frozenset(_gated(stripped, fixed)),
    )


def _cluster_hypothetical(text: str) -> bool:
    """ "Power off idle nodes after 30 min: how much would we save?" asks a what-if, it does
    not order an action (which is refused)."""
    asked = _POLITE.sub("", text)  # "could you update the weight to 5000" is a request
    return bool(HYPOTHETICAL.search(asked)) and bool(cluster_changes(text))


_POLITE = re.compile(r"^\s*(?:please\s+)?(?:could|can|would|will)\s+you\s+(?:please\s+)?", re.I)
_WHATIF_CUE = re.compile(
    r"\b(?:what\s+happens|replay\w*|simulat\w*|effect|impact|how\s+(?:would|much|many|long))\b",
    re.I,
)
"""Wording that makes an imperative change a what-if ("cap the long partition at 24 h, what
happens to waits?")."""


def _whatif_subject(text: str, slots: Slots, unqualified: Subject = "workflow") -> Subject | None:
    named = slots.workflow or slots.run or slots.task or slots.schedulers
    return whatif_subject(text, slots.cluster_changes, bool(named), unqualified)


def _simulated_or_submitted(text: str, slots: Slots) -> bool:
    """An imperative about a workflow, a scheduler or a simulated change ("bump the bandwidth
    2x for montage-60"), or a submission asked for: not an order to change the cluster."""
    named = slots.workflow or slots.run or slots.schedulers or slots.changes
    whatif = slots.cluster_changes and (_cluster_hypothetical(text) or _WHATIF_CUE.search(text))
    return bool(named or whatif) or asks_to_submit(text)


def _in_scope(text: str, slots: Slots) -> bool:
    """Names or wording that make a question one the assistant answers, whatever else it says
    ("what did job 42's waste cost in core-hours?")."""
    named = slots.jobid or slots.run or slots.task or slots.workflow or slots.changes
    return bool(named or slots.cluster_changes) or bool(_EFFICIENCY.search(text))


def _with_cues(
    text: str,
    fixed: str,
    slots: Slots,
    readings: list[Reading],
    unqualified: Subject = "workflow",
) -> list[Reading]:
    """Unambiguous wording that overrides the embedding's order (documented, deterministic)."""
    boost: dict[str, float] = {}
    lowered = f"{fixed} \n {text}".lower()  # a cue counts as typed or as corrected
    efficiency = _EFFICIENCY.search(lowered)
    if slots.jobid and not efficiency:
        why = re.search(
            r"\b(why|what|which|where|how|reason|explain|happened|wrong|use|used)\b", lowered
        )
        boost["job_why"] = 0.2 if why else 0.1
        if re.search(r"\b(?:which|what)\s+(?:node|nodes|host|partition)\b|\bwhere\b", lowered):
            boost["job_why"] += 0.15  # "which node is job 11 on?": its answer says where
    if efficiency:
        boost["efficiency"] = 0.25
    if not GPU_USE.search(lowered):  # GPU-use wording routes before this; without it, no GPU use
        boost["gpu_usage"] = -0.3
    now = _NOW.search(lowered) or _PRESENT.search(text)
    if slots.period is None and not slots.run and _LIVE_LOAD.search(text) and now:
        boost["cluster_status"] = 0.12
    hypothetical_node = re.search(r"\bwhat\s*if\b", lowered) or slots.changes.get("remove_nodes")
    if _CLUSTER_SIZE.search(text) and slots.period is None and not slots.jobid:
        boost["cluster_status"] = boost.get("cluster_status", 0.0) + 0.3
    listed = re.search(r"\b(?:reserv(?:ations?|ed)|licen[cs]es?(?!\s+server))\b", lowered)
    if listed and not hypothetical_node:  # the cluster answer lists them
        boost["cluster_status"] = boost.get("cluster_status", 0.0) + 0.2
    if slots.host and _NODE_STATE.search(text) and not hypothetical_node:
        boost["cluster_status"] = boost.get("cluster_status", 0.0) + 0.1  # "why did n2 go down?"
    if slots.task and re.search(
        r"\b(why|explain\w*|placement|placed|put|go|went|land\w*)\b", lowered
    ):
        boost["explain_placement"] = 0.1
    if asks_to_submit(text, fixed):
        boost["submit_workflow"] = 0.15
    if re.search(r"\breport\b", lowered):
        boost["generate_report"] = 0.15
    subject = _whatif_subject(text, slots, unqualified)
    if re.search(r"\b(simulat\w*|what\s*if)\b", lowered):
        boost["simulate"] = 0.1
    if slots.changes and subject != "cluster":  # a node failing, the network scaled: a what-if
        boost["simulate"] = boost.get("simulate", 0.0) + 0.15
    if subject == "cluster":  # the queue, waits, energy, a limit, power saving, predictions
        boost["cluster_whatif"] = 0.3
        if unqualified == "cluster":  # a live cluster's what-if: no run was named to simulate
            boost["simulate"] = boost.get("simulate", 0.0) - 0.5
    elif not slots.cluster_changes and not HYPOTHETICAL.search(text):
        boost["cluster_whatif"] = -0.15  # "queue status for partition gpu" asks about now
    choosing = slots.job_time and re.search(
        r"\b(?:which|what|any)\s+partitions?\b|\bwhere\s+(?:can|should|do)\b", lowered
    )
    settings = slots.partition and _PARTITION_SETTINGS.search(text)
    if (settings or choosing) and not slots.cluster_changes and not HYPOTHETICAL.search(text):
        boost["cluster_status"] = boost.get("cluster_status", 0.0) + 0.5
        boost["cluster_whatif"] = boost.get("cluster_whatif", 0.0) - 0.5
    energy = asks_recorded_energy(text, slots.cluster_changes) and not slots.jobid
    if energy and not REPORT_CUE.search(lowered):
        boost["energy_usage"] = 0.3
    elif not ENERGY_WORDS.search(lowered) or REPORT_CUE.search(lowered):
        boost["energy_usage"] = -0.15  # "usage last month" is accounting; the report has energy
    if slots.workflow and re.search(r"\b(would|predict\w*|estimat\w*|how\s+long)\b", lowered):
        boost["simulate"] = boost.get("simulate", 0.0) + 0.08  # "how would X run on the cluster"
    if _SIMILAR.search(lowered):
        boost["similar_cases"] = 0.06
    if re.search(r"\b(compare|vs|versus|better|faster|quicker|beat|rank)\b", lowered):
        boost["compare_schedulers"] = 0.08
    if _WAITED.search(lowered) and not _NOW.search(lowered) and "pending" not in lowered:
        boost["top_waiters"] = 0.08
    if _NOW.search(lowered) or re.search(r"\b(queue|partition)\b", lowered):
        boost["queue_overview"] = 0.05
    if _JOBS_NOW.search(text) and slots.period is None and not _about_one_thing(slots):
        boost["queue_overview"] = boost.get("queue_overview", 0.0) + 0.4
    named = slots.partition or slots.account or slots.user
    if named and _PENDING.search(lowered) and not (slots.jobid or slots.run or slots.workflow):
        boost["queue_overview"] = boost.get("queue_overview", 0.0) + 0.2  # "pending in gpu"
    if slots.period is not None:
        for name in (
            "sacct_summary",
            "top_waiters",
            "generate_report",
            "efficiency",
            "energy_usage",
        ):
            boost[name] = boost.get(name, 0.0) + 0.05
    if _about_the_cluster(text, slots):  # "what's running right now?", as `/status` alone is
        readings = [
            r if r.intent != "run_status" else replace(r, intent="cluster_status") for r in readings
        ]
    adjusted = [Reading(r.intent, r.score + boost.get(r.intent, 0.0), r.exemplar) for r in readings]
    best: dict[str, Reading] = {}
    for r in sorted(adjusted, key=lambda r: -r.score):
        best.setdefault(r.intent, r)
    return list(best.values())


def _about_the_cluster(text: str, slots: Slots) -> bool:
    """Load wording ("what's running", "who is using", "busy") that names no run, workflow or
    task: the cluster's state. A bare "still running?" stays the current run's question."""
    if slots.run or slots.workflow or slots.task or _RUN_WORDS.search(text):
        return False
    return bool(_LIVE_LOAD.search(text))


def _about_one_thing(slots: Slots) -> bool:
    """A job, run, workflow, task or node named: the question is about it, not the queue."""
    return bool(slots.jobid or slots.run or slots.workflow or slots.task or slots.host)


def _bare_job(text: str, slots: Slots) -> bool:
    """A lone number about a job's fate, with no run or workflow it could belong to."""
    named = slots.run or slots.workflow or slots.task
    return not named and bool(_JOB_STATE.search(text)) and bool(find_jobid(text, bare=True))


def decide(
    text: str,
    fixed: str,
    readings: list[Reading],
    slots: Slots,
    unqualified: Subject = "workflow",
) -> Intent:
    """Act on the best reading, or ask back when it is weak, tied, or would act unasked."""
    top = readings[0]
    if top.intent == "none":  # nearest to what no tool answers ("tell me a joke")
        return Intent(reply=refusal(), name="none", refused=True)
    if top.score < MIN_SCORE:
        return _not_understood(readings)
    if top.intent == "help":
        return Intent(reply=HELP, name="help")
    if top.intent == "smalltalk":
        return Intent(reply=GREETING, name="smalltalk")
    gated = _gated(text, fixed)
    if top.intent in gated:
        rest = [r for r in readings if r.intent not in gated]
        if not rest:
            return _not_understood(readings)
        if top.intent == "submit_workflow" and not refused(text, fixed) and not hypothetical(text):
            offer = [top] if may_mean_submit(text, fixed) else []  # offered, never planned
            return _ask_back([*offer, *rest], text, slots)
        return decide(text, fixed, rest, slots, unqualified)  # "how would it run...": simulate
    if top.intent in WHATIFS and _whatif_subject(text, slots, unqualified) in ("both", "unclear"):
        return _ask_back(_whatif_readings(readings), text, slots)  # the run's, or the cluster's?
    spec = SPEC_BY_NAME[top.intent]
    readings = [r for r in readings if r.intent not in gated]
    rivals = [
        r
        for r in readings[1:3]
        if top.score - r.score < MARGIN and r.intent in SPEC_BY_NAME and SPEC_BY_NAME[r.intent].tool
    ]
    if rivals and not _slots_decide(top.intent, slots):
        return _ask_back([top, *rivals], text, slots)
    return _as_intent(text, spec.name, slots)


def _as_intent(text: str, name: str, slots: Slots) -> Intent:
    """The decided intent with its arguments, asking for a missing job id or workflow."""
    spec = SPEC_BY_NAME[name]
    if spec.name == "job_why" and slots.jobid is None:
        slots = Slots(**{**slots.__dict__, "jobid": find_jobid(text, bare=True)})
        if slots.jobid is None and _MINE.search(text) and _ENDED.search(text):
            return Intent("job_why", {}, name="job_why")  # "why did my job crash?": the latest
        if slots.jobid is None and _MINE.search(text):  # "why is my job not running?"
            return Intent("queue_overview", {"user": getpass.getuser()}, name="queue_overview")
        if slots.jobid is None and slots.user:  # "why is alice's job pending?"
            return Intent("queue_overview", {"user": slots.user}, name="queue_overview")
        if slots.jobid is None:
            return Intent(reply="Which job? For example `/why 42`.", name="clarify")
    if spec.name == "efficiency" and slots.jobid is None and slots.period is None:
        slots = replace(slots, jobid=find_jobid(text, bare=True))  # "seff 311"
    if spec.name == "cluster_whatif" and not slots.cluster_changes:
        return Intent(reply=_WHICH_CHANGE, name="clarify")
    if spec.name == "submit_workflow" and slots.workflow is None:
        return Intent(
            reply="Which workflow? For example `/submit montage-60 heft`.", name="clarify"
        )
    arguments = {k: v for k, v in spec.arguments(slots).items() if v is not None}
    return Intent(spec.tool, arguments, name=spec.name)


WHATIFS = ("simulate", "cluster_whatif")
"""The workflow what-if (a run on a platform) and the cluster's (its queue replayed)."""
_WHICH_CHANGE = (
    "Which change should I replay on the cluster's workload? For example: \"if we add 8 GPU "
    'nodes", "a 24 h cap on the long partition", "idle nodes powered off after 30 '
    'minutes", "walltimes predicted instead of requested", or `/whatif-cluster ...`.'
)


def _whatif_readings(readings: list[Reading]) -> list[Reading]:
    """Both what-ifs, the likelier first, to ask which one was meant."""
    found = {r.intent: r for r in readings if r.intent in WHATIFS}
    both = [found.get(name, Reading(name, 0.0, "")) for name in WHATIFS]
    return sorted(both, key=lambda r: -r.score)


def _gated(text: str, fixed: str) -> set[str]:
    """Intents the wording does not license: a submission not clearly asked for (or refused,
    :mod:`wass_chat.agent.understanding.submit_wording`), a report file not named."""
    gated = set()
    if not asks_to_submit(text, fixed):
        gated |= {spec.name for spec in INTENTS if spec.side_effecting}
    if not REPORT_CUE.search(fixed):
        gated.add("generate_report")
    return gated


def _slots_decide(intent: str, slots: Slots) -> bool:
    """Whether the slots found make the top reading clear despite a close second."""
    if intent in ("job_why", "efficiency"):
        return slots.jobid is not None
    if intent == "explain_placement":
        return slots.task is not None
    if intent == "simulate":
        return bool(slots.changes)
    if intent == "cluster_whatif":
        return bool(slots.cluster_changes)
    return False


def _describe(intent: str, slots: Slots | None = None) -> str:
    spec = SPEC_BY_NAME.get(intent)
    if spec is None or not spec.commands:
        return ""
    if spec.side_effecting and slots is not None and slots.workflow:
        return f"{spec.summary} (`{spec.commands[0].name} {slots.workflow}`)"
    return f"{spec.summary} (`{spec.commands[0].usage}`)"


def _choices(names: list[str], slots: Slots | None = None) -> str:
    return "\n".join(f"{i}. {_describe(name, slots)}" for i, name in enumerate(names, 1))


def _ask_back(readings: list[Reading], text: str, slots: Slots | None = None) -> Intent:
    choices = list(dict.fromkeys(r.intent for r in readings if _describe(r.intent)))[:3]
    if not choices:
        return _not_understood(readings)
    reply = f"I am not sure what you mean. Did you want one of these?\n\n{_choices(choices, slots)}"
    return Intent(reply=reply, name="clarify", readings=tuple(choices))


def _not_understood(
    readings: list[Reading], lead: str = "I did not recognise that request"
) -> Intent:
    """Not understood (or outside what the assistant knows): said so, and asked back with the
    two closest things it can do as choices (never one that acts or writes a file)."""
    tools = [
        r.intent
        for r in readings
        if r.intent in SPEC_BY_NAME
        and SPEC_BY_NAME[r.intent].tool
        and not SPEC_BY_NAME[r.intent].side_effecting
        and r.intent != "generate_report"
    ][:2]
    if not tools:
        return Intent(reply=f"{lead}.\n\n{HELP}", name="none")
    reply = (
        f"{lead}. Did you mean one of these?\n\n{_choices(tools)}\n\n"
        "Or type `/help` to see everything I can do."
    )
    return Intent(reply=reply, name="none", readings=tuple(tools))


_CHOICE = re.compile(r"^\s*(?:number\s+|option\s+|#)?\(?([1-9])[.)]?\s*$", re.IGNORECASE)


def chosen_number(text: str) -> int | None:
    """The number of a choice typed on its own ("2", "2.", "(2)", "option 2"), else None."""
    match = _CHOICE.match(text)
    return int(match.group(1)) if match else None


def route_choice(question: str, intent: str, today: date | None = None) -> Intent:
    """A numbered choice the router offered, picked by its number: the original question
    routed as the chosen intent, with no second asking back (its slots read from the question
    again, so a missing job id or workflow is still asked for, and a submission is only
    planned: it goes through the approval gate)."""
    slots = parse_slots(question, today)
    return _as_intent(question, intent, slots)
