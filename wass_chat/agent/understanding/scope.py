"""Questions the assistant's tools cannot answer, near enough to its own to be misread.

"What's the temperature of gpu02?", "how do I add a user to an account?", "which version of
slurm?", "is the gpu on n4 being used?" share words with questions it answers (a node, an
account, Slurm, "used"), so the classifier alone would send them to the node list, the
accounting summary or a placement: a confident answer about something else. The assistant reads
Slurm's queue, nodes and accounting and simulates workflows; it has no sensors, prices, logins,
storage, software installs, Slurm administration, Slurm's version or a node's live GPU
readings (how jobs used their GPUs it answers, `gpu_usage`). Such a
question gets "I can't answer that here", why, and what it can answer (:func:`refusal`).
Energy over a period is in scope (modelled from the recorded schedule, `energy_usage`); a
live power reading or a carbon figure is not.

A *qualifiable* topic's words next to a job, run or task, or efficiency wording, qualify a
question the assistant does answer ("what did job 42's idle cores cost us?"); the others are
refused whatever they name ("notify me when job 42 ends" is no question about job 42's fate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wass_chat.agent.understanding.intents import INTENTS


@dataclass(frozen=True)
class Topic:
    """Something the tools have no data on: why not, in words, and the wording that asks it."""

    reason: str
    words: re.Pattern[str]
    qualifiable: bool = True
    """Named jobs, runs, tasks or efficiency wording make the question an answerable one."""
    order: bool = False
    """An order to change the cluster: not one when it names a workflow, a scheduler or a
    change the simulators replay (then it is a what-if or a submission, decided elsewhere)."""


_HOW = r"(?:how\s+(?:do|can|could|should|would)\s+(?:i|we|you|one|an?\s+admin)|how\s+to|can\s+you|could\s+you|please|help\s+me)"  # noqa: E501
_ADMIN_VERB = r"(?:add|create|make|register|remove|delete|modify|change|edit|configure|set\s*up|enable|disable|grant|give|restrict|raise|lower|increase|decrease)"  # noqa: E501
_ADMIN_OBJECT = (
    r"(?:users?|accounts?|associations?|qos|coordinators?|fairshare\s+shares?|shares|"
    r"reservations?|(?:a|new)\s+partitions?|partition\s+limits?|config\w*|slurm\.conf|"
    r"gres\.conf|cgroup\.conf|limits?\s+for|permissions?|access|max\w*\s+(?:wall)?time|"
    r"(?:wall)?time\s+limits?|default\s+\w+|priority|priorities)"
)
_GPU = r"(?:gpus?|[ahv]100s?|h200s?|a40s?|l40s?|mi\d{3}x?s?|rtx\s*\w+)"
"""A GPU, or a GPU model named as one ("the A100s on gpu03")."""
_SLURM_COMMANDS = (
    r"(?:sbatch|srun|salloc|scancel|squeue|sinfo|sacct|sacctmgr|scontrol|sstat|sprio|sshare|"
    r"sreport|sattach|strigger)"
)

GPU_READINGS = Topic(
    "I have no live readings of a node's GPUs (their load, memory, clocks or power): I read "
    "how jobs used their GPUs where the site records it (`/gpu`: running jobs now, a job, "
    "a period's waste)",
    re.compile(
        r"\bgpus?[\s-]*(?:utili[sz]ation|util|usage|load|memory|occupancy|activity|duty\s+cycle|"
        r"clocks?|power)\b|"
        rf"\b(?:using|use|used|utili[sz]ing)\s+(?:the\s+|their\s+|its\s+|my\s+|all\s+)?{_GPU}\b"
        r"(?!\s+(?:nodes?|partition|queue))|"
        r"\b(?:utili[sz]ation|usage|load|occupancy)\s+(?:of|on)\s+(?:the\s+|a\s+|my\s+)?gpus?\b|"
        rf"\b(?:running|used|busy|working)\s+on\s+(?:the\s+)?{_GPU}\b(?!\s+(?:nodes?|"
        r"partition|queue))|"
        rf"\b{_GPU}\b(?!\s+(?:nodes?|partition|queue|jobs?|hours?))(?:\s+[\w'-]+){{0,4}}?\s+"
        r"(?:being\s+used|in\s+use|used|utili[sz]ed|working|doing\s+(?:any\s+)?\w+|busy|idle|"
        r"free|occupied|loaded)\b|\b(?:nvidia-smi|nvtop|dcgm\w*|rocm-smi|nvml)\b|"
        r"\bhow\s+(?:much|hard|busy)\b.{0,20}\bgpus?\b(?!\s+(?:nodes?|partition|queue))"
        r".{0,20}\b(?:used|working|loaded)\b|"
        r"\bhow\s+(?:busy|loaded|hard)\s+(?:is|are)\s+(?:the\s+|its\s+|my\s+)?gpus?\b"
        r"(?!\s+(?:nodes?|partition|queue))",
        re.I,
    ),
    qualifiable=False,
)
"""A node's GPUs read live: refused unless it asks how jobs use them
(:func:`~wass_chat.agent.understanding.gpu_words.asks_gpu_use`)."""

TOPICS: tuple[Topic, ...] = (
    Topic(
        "I have no data on temperatures, fans, hardware or network health, live power readings "
        "or carbon",
        re.compile(
            r"\b(temperatures?|thermal|overheat\w*|fans?|fan\s+speed|power\s+draw|watts?|"
            r"infini\s*band|omni[\s-]?path|interconnect|fabric|network\s+switch\w*|"
            r"carbon|co2|cooling|how\s+hot|humid\w*|throttl\w*|ecc\s+errors?|xid)\b|\bpower\s+(?:usage|use|consumption|draw)\b.{0,40}"
            r"\b(?:now|at\s+(?:this|the)\s+moment|currently|live|real[\s-]?time)\b",
            re.I,
        ),
    ),
    Topic(
        "I have no data on prices, costs or billing",
        re.compile(
            r"\b(price|pricing|billing|bill|invoice|budget|money|dollars?|euros?|cost\s+(?:us|per)|"
            r"how\s+much\s+(?:does|did|do|would|will)\b.{0,40}\bcost)\b",
            re.I,
        ),
    ),
    Topic(
        "I have no data on accounts, passwords or logins",
        re.compile(r"\b(passwords?|passwd|ssh|log\s*in|login|sudo|vpn|api\s+key)\b", re.I),
    ),
    Topic(
        "I have no data on disk quotas or storage",
        re.compile(
            r"\b(quotas?|disk\s+space|storage|file\s*systems?|scratch\s+space|inodes?)\b", re.I
        ),
    ),
    Topic(
        "I have no data on the site's plans (upgrades, maintenance, downtime) beyond Slurm's "
        "reservations (/cluster lists them)",
        re.compile(
            r"^(?!.*\breserv(?:ations?|ed)\b).*?"  # a maintenance reservation is Slurm's
            r"\b(?:upgrad(?:e|ed|es|ing)|maintenance|downtime|scheduled\s+outage)\b",
            re.I,
        ),
    ),
    Topic(
        "I do not list the running jobs by when they will end (`squeue -t R --sort=e -o "
        "'%i %u %e'` does, by their time limits; jobs may end sooner); for one job ask 'when "
        "will job N end?', and '/cluster NODE' names when its jobs' limits run out",
        re.compile(
            r"\b(?:which|what|any|how\s+many)\s+(?:running\s+|of\s+the\s+)?jobs?\b.{0,40}"
            r"\b(?:will|going\s+to|about\s+to)\s+(?:finish|end|complete|be\s+done|free\s+up)\b|"
            r"\b(?:which|what|any)\s+(?:running\s+)?jobs?\b.{0,30}\b(?:finish|end|complet)\w*\s+"
            r"(?:in\s+the\s+next|within\s+the\s+next|soon)\b|"
            r"\bwhen\s+will\s+(?:the\s+|my\s+|our\s+)?(?:running\s+)?jobs\s+(?:finish|end|"
            r"complete|be\s+done)\b",
            re.I,
        ),
    ),
    Topic(
        "I do not install or upgrade software",
        re.compile(
            r"^\s*(?:please\s+|pls\s+|can you\s+|could you\s+)?(install|upgrade|compile|"
            r"uninstall|module\s+load)\b",
            re.I,
        ),
    ),
    Topic(
        "I do not administer Slurm (users, accounts, QOS, limits, its configuration): an "
        "administrator does that with `sacctmgr` and `slurm.conf`",
        re.compile(
            rf"\b{_ADMIN_VERB}\b.{{0,40}}\b{_ADMIN_OBJECT}|\bsacctmgr\b|\bslurm(?:dbd)?\.conf\b|"
            r"\bscontrol\s+(?:update|create|delete|reconfigure)\b|"
            rf"^\s*{_HOW}\b.{{0,30}}\b(?:admin\w*|manage|reconfigure)\b",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "none of my tools reads software or its versions (Slurm's: `scontrol --version`; the "
        "nodes' system or packages) or whether its daemons are up (`scontrol ping`, "
        "`sacctmgr ping`)",
        re.compile(
            r"\b(?:slurmctld|slurmd|slurmdbd|munged?|mariadb|mysql|daemons?)\b.{0,20}\b(?:up|"
            r"down|running|alive|responding|healthy|dead|crashed)\b|\bversions?\b.{0,30}\b(?:slurm|sinfo|squeue|sbatch|sacct|scontrol|slurmctld|"
            r"slurmd|slurmdbd)\b|\b(?:slurm|slurmctld|slurmd|slurmdbd)(?:'s)?\s+(?:versions?|"
            r"release)\b|\b(?:which|what)\s+(?:slurm\s+)?(?:version|release)\b|"
            r"\bslurm\b.{0,30}\b(?:versions?|release|up\s+to\s+date|outdated|latest|uptime)\b|"
            r"\bslurm\b.{0,40}(?<![\w.])\d{2}\.\d{2}(?:\.\d+)?\b|"
            r"\bwhat\s+slurm\s+(?:are|is|do)\b|\buptime\b|\b(?:which|what)\b.{0,30}\bversions?\b|"
            r"\bversions?\s+(?:of|is|are|do|does)\b|\blast\s+restart\w*\b|"
            r"\b(?:which|what)\s+(?:os|operating\s+systems?|distro\w*|kernel|gcc|compilers?|python|"
            r"cuda|drivers?|mpi|software|packages?|modules?|libraries)\b|\binstalled\b",
            re.I,
        ),
        qualifiable=False,
    ),
    GPU_READINGS,
    Topic(
        "I cannot replay a drained or down node's return to service: the queue what-if adds "
        'or removes nodes of a partition ("what if the debug partition had 1 more node?" '
        "asks much the same), and the node list says why a node is drained and since when",
        re.compile(
            r"\b(?:resum\w*|undrain\w*|un-drain\w*|reopen\w*|re-?enabl\w*|reinstat\w*|"
            r"bring\w*\s+back|brought\s+back|return\w*)\s+(?:the\s+)?(?:nodes?\s+)?"
            r"(?:[a-z][a-z-]*[\d\[][\w\[\],-]*|nodes?|it|them)(?!\w)|"
            r"\b(?:nodes?\s+)?[a-z][a-z-]*[\d\[][\w\[\],-]*\s+(?:is|are|was|were|gets?|got|came|"
            r"comes|"
            r"goes|went)\s+(?:resumed|undrained|reopened|re-?enabled|reinstated|"
            r"back(?:\s+(?:up|online|in\s+service))?|returned)\b",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "I have no live readings of nodes' memory or CPU load (the node list gives their "
        "states, CPUs and memory and what jobs hold of them, a job's efficiency its CPU and "
        "memory use)",
        re.compile(
            r"\b(?:free|available|used)\s+(?:memory|ram)\b|\b(?:memory|ram|swap)\b.{0,20}\busing\b|"
            r"\bhow\s+much\s+(?:memory|ram|swap)\b(?!.{0,30}\b(?:have|has|got|total|configured)\b(?!\s+(?:free|available|left|used|in\s+use)))|\b(?:memory|ram)\s+(?:is\s+)?"
            r"(?:free|available|left|usage|use|used)\b|\bload\s+average\b|"
            r"\bcpu\s+(?:load|usage|utili[sz]ation)\s+(?:on|of)\s+(?:node\s+)?[a-z]+\d",
            re.I,
        ),
    ),
    Topic(
        "I have no live network readings (a simulation's network is a model: `/whatif "
        "bandwidth F` scales it)",
        re.compile(
            r"\b(?:network|interconnect|infiniband|ethernet|bandwidth|links?|switch(?:es)?)\b.{0,30}"
            r"\b(?:utili[sz]ation|usage|traffic|throughput|congest\w*|saturat\w*|errors?|"
            r"right\s+now|currently|at\s+the\s+moment)\b",
            re.I,
        ),
    ),
    Topic(
        "I do not change the cluster (nodes, partitions, priorities or settings): I read it, "
        "simulate, and prepare submissions for your approval",
        re.compile(
            r"^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:(?:turn|switch)\s+(?:on|off)|"
            r"(?:turn|switch)\s+\S+\s+(?:on|off)|enable|disable|put|mark|bring|take|allow|deny|"
            r"block|ban|grant|revoke|raise|lower|increase|decrease|boost|bump|reset|reserve|"
            r"pause|unpause|preempt|update|modify|adjust|tweak)\b|^\s*(?:please\s+)?set\s+(?:node\s+)?\S+\s+(?:to|as|into)\b",
            re.I,
        ),
        qualifiable=False,
        order=True,
    ),
    Topic(
        "I do not recommend books, courses or other reading",
        re.compile(
            r"\b(?:recommend|suggest)\w*\b.{0,30}\b(?:books?|papers?|courses?|tutorials?|"
            r"articles?|videos?|websites?|blogs?|reading)\b|\b(?:good|best)\s+(?:books?|"
            r"courses?|tutorials?)\b|\b(?:conferences?|journals?|papers?|publications?|"
            r"textbooks?)\b",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "I do not read QOS or partition limit settings (a job's pending reason names the "
        "limit that holds it: `/why JOBID`)",
        re.compile(
            r"\bqos\b.{0,20}\blimits?\b|\blimits?\b.{0,20}\bqos\b|\b(?:partition|qos)\s+"
            r"(?:limits?|settings|config\w*)\b",
            re.I,
        ),
    ),
    Topic(
        "I do not read allocations, balances or service units (`sshare` and your site's "
        "allocation tool do)",
        re.compile(
            r"\b(?:remaining|left|balance)\b.{0,20}\b(?:allocation|allowance|service\s+units?|"
            r"credits?)\b|\b(?:allocation|allowance)\b.{0,20}\b(?:remaining|left|balance)\b|"
            r"\bservice\s+units?\b|\bsu\s+balance\b",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "I do not read Slurm's accounts, associations or who belongs to them",
        re.compile(
            r"\b(?:belong\w*|members?|membership)\b.{0,30}\baccounts?\b|\baccounts?\b.{0,30}"
            r"\b(?:members?|membership)\b|\b(?:which|what)\s+accounts?\b|\bassociations?\b|"
            r"\b(?:max|grp)(?:submit|jobs|tres|wall|cpus|nodes)\w*\b|\blimits?\s+(?:for|of|on)\s+"
            r"(?:my|our|the|this)\s+(?:\w+\s+)?(?:account|group|project)\b",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "I do not read which QOS a user or account may use (`sacctmgr show assoc user=USER "
        "format=account,partition,qos` lists them); for a pending job I explain the QOS limit "
        "that holds it (`/why JOBID`)",
        re.compile(
            r"\b(?:what|which)\s+(?:qos(?:es|s)?|quality\s+of\s+service)\b|"
            r"\bqos(?:es|s)?\b.{0,30}\b(?:can|may|allowed|available|access|have|has)\b|"
            r"\b(?:list|show)\s+(?:the\s+|all\s+|my\s+)?qos(?:es|s)?\b",
            re.I,
        ),
    ),
    Topic(
        "I do not read fair-share standings or what an account or user may run (`sshare -A "
        "ACCOUNT` and `sacctmgr show assoc` do); for a pending job I explain its priority "
        "factors and the limit that holds it (`/why JOBID`)",
        re.compile(
            r"\b(?:what|which)\s+(?:are\s+)?(?:the\s+|my\s+|our\s+|its\s+)?limits?\s+(?:does|do|has|"
            r"have|apply|are|is|for|of|on)\b(?!.{0,25}\bpartitions?\b)|"  # a partition's: /cluster
            r"\bfair[\s-]?share\b|\bsshare\b|\busage\s+factor\b|\ballowed\s+to\s+(?:run|use|"
            r"submit)\b|\b(?:can|may)\s+(?!i\b|we\b|you\b)\w+\s+(?:run|submit|use)\s+(?:on|in|"
            r"how\s+many|more)\b",
            re.I,
        ),
    ),
    Topic(
        "I do not write poems, stories or jokes, draw or translate",
        re.compile(
            r"^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:write|compose|make\s+up|tell)\s+"
            r"(?:me\s+|us\s+)?(?:a|an|some)\s+(?:\w+\s+)?(?:poems?|haikus?|songs?|story|stories|"
            r"limericks?|jokes?|raps?|sonnets?|essays?|riddles?)\b|\b(?:puns?|jokes?|riddles?)\b|"
            r"^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:sing|recite|draw|paint|translate)\b|"
            r"\btranslat\w*\b.{0,40}\b(?:into|to)\s+(?:english|spanish|french|german|italian|"
            r"chinese|japanese|\w+ish|\w+ese|\w+an)\b",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "I cannot send emails, messages or notifications",
        re.compile(
            r"\b(?:e-?mail|notify|notification|alert|remind|ping|text|message|slack)\s+(?:me|us|"
            r"the\s+team|when)\b|^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:send|write|"
            r"forward|post)\s+(?:an?\s+)?(?:e-?mail|message|note|ticket|slack|text)\b|"
            r"\bopen\s+a\s+ticket\b",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "I cannot read jobs' output or log files",
        re.compile(
            r"\b(?:show|read|tail|cat|print|open|see|what(?:'s|\s+is|\s+was))\b.{0,30}"
            r"(?:\b(?:stdout|stderr|log\s+files?|logs?)\b|\.(?:out|err)\b|\b(?:job'?s?|its)\s+"
            r"output\b|\boutput\s+(?:of|from)\s+(?:the\s+|my\s+|a\s+)?job\b|"
            r"\b(?:error|output|log)\s+files?\b)",
            re.I,
        ),
        qualifiable=False,
    ),
    Topic(
        "I do not teach Slurm's commands or job scripts (Slurm's documentation does); I can "
        "plan a workflow's submission for your approval (`/submit WORKFLOW`)",
        re.compile(
            rf"\b{_SLURM_COMMANDS}\b.{{0,20}}\b(?:flags?|options?|switch\w*|arguments?|syntax)\b|"
            r"\b(?:what|which)\s+(?:slurm\s+)?command\b|\b(?:with|using|in)\s+(?:one|a|which|what)\s+"
            r"(?:single\s+)?commands?\b|"
            rf"\b{_SLURM_COMMANDS}\s+-{{1,2}}[a-z]|\b(?:flags?|options?|switch\w*)\b.{{0,20}}"
            rf"\b{_SLURM_COMMANDS}\b|\bwhat\s+does\s+(?:the\s+)?{_SLURM_COMMANDS}\b|"
            rf"^\s*{_HOW}\b.{{0,30}}\b(?:write|use|run|make|request|ask\s+for|set|pass|start|"
            r"submit|cancel|kill|stop|hold|requeue|check|see|list)\b.{0,30}"
            r"\b(?:sbatch|srun|salloc|scancel|squeue|sinfo|sacct|scontrol|sstat|job\s+scripts?|"
            r"batch\s+scripts?|#sbatch|array\s+jobs?|job\s+arrays?|interactive\s+(?:jobs?|"
            r"sessions?)|gres|--\w+)(?:\b|$)",
            re.I,
        ),
        qualifiable=False,
    ),
)
"""What the tools have no data on, and the words that ask about it."""


def outside_topic(text: str) -> Topic | None:
    """The topic ``text`` asks about that the tools have no data on, if any."""
    return next((topic for topic in TOPICS if topic.words.search(text)), None)


def capabilities() -> str:
    """What the assistant can answer, one short phrase per tool of the intent table."""
    return "; ".join(spec.topic for spec in INTENTS if spec.tool and spec.topic)


def refusal(reason: str = "") -> str:
    """ "I can't answer that here", why (when known), and what it can answer instead."""
    why = f": {reason}" if reason else ""
    return (
        f"I can't answer that here{why}.\n\nWhat I can answer: {capabilities()}. "
        "Type `/help` for the commands."
    )
