"""One entry of the reason catalogue, and the words a limit entry is explained in.

A :class:`Reason` is a code (or a long text) Slurm prints for a job, with the explainer class
that answers for it, what it means, what helps, and its :data:`Outcome`: whether the job starts
by itself, can never start as requested, is held, or waits for an administrator. Entries that
come from a QOS or association limit carry a :class:`LimitSpec` saying which limit (the key
``scontrol show assoc_mgr`` prints it under) and which trackable resource; their meaning and
advice are put together by :func:`limit_reason` from :data:`LIMIT_KINDS` and :data:`TRES_WORDS`,
so each reads as its own sentence and the live explainer reads the limit the code names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["waits", "never", "release", "admin", "ended", "running"]
"""``waits``: starts by itself once the cause clears; ``never``: can never start as
requested, the request (or a setting) must change; ``release``: held until someone releases
it; ``admin``: waits for an administrator to fix the cluster; ``ended``: a reason Slurm gives
a job that ended or was killed; ``running``: no wait at all."""

OUTCOME_WORDS: dict[str, str] = {
    "waits": "It starts by itself once this clears.",
    "never": "It can never start as requested: the request (or the setting) must change.",
    "release": "It is held: it starts only after it is released (scontrol release).",
    "admin": "It waits for an administrator: nothing in the job itself is wrong.",
    "ended": "Slurm gives this reason to a job that ended or was killed, not to a waiting one.",
    "running": "",
}
NO_START: frozenset[str] = frozenset({"never", "release", "admin"})
"""Outcomes under which a job has no expected start as it stands."""


@dataclass(frozen=True)
class LimitSpec:
    """Which limit a reason names: its owner, its key in ``scontrol show assoc_mgr``, a TRES."""

    owner: Literal["assoc", "qos"]
    key: str
    """``GrpTRES``, ``MaxTRESPU``, ``MaxWallPJ``... (see :data:`LIMIT_KINDS`)."""
    tres: str = ""
    """``cpu``, ``mem``, ``node``, ``gres``, ``billing``, ``license``, ``bb``, ``energy``,
    ``unknown`` (any other TRES); empty for job counts and wall time."""


@dataclass(frozen=True)
class Reason:
    """A reason code (or long text, or state) Slurm prints, and what it means."""

    code: str
    """As Slurm prints it. A long text keeps Slurm's ``%s``/``%u`` where it inserts names;
    a trailing ``*`` makes a family entry that answers only for codes no other entry knows."""
    klass: str
    """The explainer class that answers for it (``resources``, ``qos_limit``...)."""
    meaning: str
    advice: str
    outcome: Outcome
    versions: str = "22.05 26.05"
    """The Slurm versions that set it; ``doc`` for codes only the documentation names."""
    limit: LimitSpec | None = None

    @property
    def is_text(self) -> bool:
        """A long text (``squeue %r`` prints the job's state description) rather than a code."""
        return " " in self.code or "%" in self.code

    def matches(self, text: str) -> bool:
        """Whether Slurm's ``text`` is this entry (a long text with its names filled in)."""
        if self.code.endswith("*"):
            return text.startswith(self.code[:-1])
        if "%" not in self.code:
            return text == self.code
        return re.fullmatch(_as_regex(self.code), text, re.S) is not None


def _as_regex(printf: str) -> str:
    parts = re.split(r"%[-0-9.]*(?:l{0,2}[sdu]|PRIu64)", printf)
    return "(.+?)".join(re.escape(p) for p in parts)


@dataclass(frozen=True)
class LimitKind:
    """How a limit key reads: the name sacctmgr sets it by, what it caps, whether it can wait."""

    name: str
    """The name an administrator sets it by with sacctmgr (``MaxTRES``, ``GrpTRESRunMins``)."""
    scope: Literal["group", "job", "node", "user", "account", "assoc_user"]
    measure: Literal[
        "amount", "minutes", "run_minutes", "running", "submitted", "wall", "wall_used", "minimum"
    ]


LIMIT_KINDS: dict[str, LimitKind] = {
    "GrpTRES": LimitKind("GrpTRES", "group", "amount"),
    "GrpTRESMins": LimitKind("GrpTRESMins", "group", "minutes"),
    "GrpTRESRunMins": LimitKind("GrpTRESRunMins", "group", "run_minutes"),
    "GrpJobs": LimitKind("GrpJobs", "group", "running"),
    "GrpSubmitJobs": LimitKind("GrpSubmitJobs", "group", "submitted"),
    "GrpWall": LimitKind("GrpWall", "group", "wall_used"),
    "MaxTRESPJ": LimitKind("MaxTRES", "job", "amount"),
    "MaxTRESPN": LimitKind("MaxTRESPerNode", "node", "amount"),
    "MaxTRESMinsPJ": LimitKind("MaxTRESMins", "job", "minutes"),
    "MaxWallPJ": LimitKind("MaxWall", "job", "wall"),
    "MinTRESPJ": LimitKind("MinTRES", "job", "minimum"),
    "MaxJobs": LimitKind("MaxJobs", "assoc_user", "running"),
    "MaxSubmitJobs": LimitKind("MaxSubmitJobs", "assoc_user", "submitted"),
    "MaxJobsPU": LimitKind("MaxJobsPU", "user", "running"),
    "MaxSubmitJobsPU": LimitKind("MaxSubmitPU", "user", "submitted"),
    "MaxTRESPU": LimitKind("MaxTRESPU", "user", "amount"),
    "MaxTRESRunMinsPU": LimitKind("MaxTRESRunMinsPU", "user", "run_minutes"),
    "MaxJobsPA": LimitKind("MaxJobsPA", "account", "running"),
    "MaxSubmitJobsPA": LimitKind("MaxSubmitPA", "account", "submitted"),
    "MaxTRESPA": LimitKind("MaxTRESPA", "account", "amount"),
    "MaxTRESRunMinsPA": LimitKind("MaxTRESRunMinsPA", "account", "run_minutes"),
}
"""Every limit key a reason can name, as ``scontrol show assoc_mgr`` prints it."""

TRES_WORDS: dict[str, tuple[str, str]] = {
    "cpu": ("CPUs", "fewer CPUs (--ntasks, --cpus-per-task)"),
    "mem": ("memory", "less memory (--mem, --mem-per-cpu)"),
    "node": ("nodes", "fewer nodes (--nodes)"),
    "gres": ("GRES (GPUs and other generic resources)", "fewer GPUs or GRES (--gres, --gpus)"),
    "billing": (
        "billing units (CPUs, memory and GPUs weighted by the partition's TRESBillingWeights)",
        "fewer CPUs, less memory or fewer GPUs",
    ),
    "license": ("licences", "fewer licences (--licenses)"),
    "bb": ("burst buffer space", "a smaller burst buffer (--bb)"),
    "energy": ("energy", "a smaller or shorter job"),
    "unknown": (
        "a trackable resource Slurm does not name (a TRES outside cpu, mem, node, "
        "billing, energy, GRES, licences and burst buffers)",
        "a smaller request",
    ),
}
"""TRES -> (what it is in words, how a job asks for less of it)."""

_OWNER = {
    "assoc": (
        "its association (the user's association, or an account above it up to root)",
        "association",
        "another account (--account)",
    ),
    "qos": ("its QOS (the job's own QOS, or its partition's QOS)", "QOS", "another QOS (--qos)"),
}


def _meaning(spec: LimitSpec, kind: LimitKind) -> str:
    whose = _OWNER[spec.owner][0]
    what = TRES_WORDS[spec.tres][0] if spec.tres else ""
    name = f"{kind.name}" + (f" {spec.tres}=" if spec.tres else "")
    texts = {
        ("group", "amount"): f"{whose} has a {name} cap on the {what} all its running jobs "
        f"hold together, and its running jobs' {what} plus this job's would pass it",
        ("group", "minutes"): f"{whose} has a {name} cap on the {what}-minutes its past and "
        f"running jobs have used (usage decays with PriorityDecayHalfLife), and adding this "
        f"job's {what} times its time limit would pass it",
        ("group", "run_minutes"): f"{whose} has a {name} cap on {what} times remaining time "
        f"limit over its running jobs, and this job's {what} times its time limit would "
        f"pass it",
        ("group", "running"): f"{whose} may have at most {kind.name} jobs running at once, "
        f"and that many run",
        ("group", "submitted"): f"{whose} may have at most {kind.name} jobs running or "
        f"pending at once, and that many are in the queue",
        ("group", "wall_used"): f"the wall time its jobs have run (decayed usage) has reached "
        f"the {kind.name} cap of {whose}",
        ("job", "amount"): f"the job asks for more {what} than {whose} allows one job ({name})",
        ("node", "amount"): f"the job asks for more {what} on one node than {whose} allows "
        f"per node ({name})",
        ("job", "minutes"): f"the job's {what} times its time limit is more than {whose} "
        f"allows one job ({name})",
        ("job", "wall"): f"the job's time limit (--time) is longer than {whose} allows one "
        f"job ({kind.name})",
        ("job", "minimum"): f"the job asks for less {what} than {whose} requires of every "
        f"job ({name})",
        ("assoc_user", "running"): f"the user already runs as many jobs as {whose} allows "
        f"({kind.name})",
        ("assoc_user", "submitted"): f"the user already has as many jobs running or pending "
        f"as {whose} allows ({kind.name})",
        ("user", "amount"): f"the {what} of the user's running jobs in {whose} plus this "
        f"job's would pass the per-user cap ({name})",
        ("user", "running"): f"the user already runs as many jobs in {whose} as its per-user "
        f"cap allows ({kind.name})",
        ("user", "submitted"): f"the user already has as many jobs running or pending in "
        f"{whose} as its per-user cap allows ({kind.name})",
        ("user", "run_minutes"): f"the user's running jobs in {whose} hold {what} times "
        f"remaining time near its per-user cap ({name}), and this job's {what} times its "
        f"time limit would pass it",
        ("account", "amount"): f"the {what} of the account's running jobs in {whose} plus "
        f"this job's would pass the per-account cap ({name})",
        ("account", "running"): f"the account already runs as many jobs in {whose} as its "
        f"per-account cap allows ({kind.name})",
        ("account", "submitted"): f"the account already has as many jobs running or pending "
        f"in {whose} as its per-account cap allows ({kind.name})",
        ("account", "run_minutes"): f"the account's running jobs in {whose} hold {what} "
        f"times remaining time near its per-account cap ({name}), and this job's {what} "
        f"times its time limit would pass it",
    }
    return texts[(kind.scope, kind.measure)]


def _advice(spec: LimitSpec, kind: LimitKind) -> str:
    _, short, other = _OWNER[spec.owner]
    what, less = TRES_WORDS[spec.tres] if spec.tres else ("", "")
    cap = f"the {short}'s {kind.name}" + (f" {spec.tres}=" if spec.tres else "")
    if kind.scope in {"job", "node"} and kind.measure in {"amount", "minutes"}:
        spread = "; or spread the job over more nodes" if kind.scope == "node" else ""
        time = " or a shorter --time" if kind.measure == "minutes" else ""
        return (
            f"ask for {less}{time} within {cap}"
            f"{spread}; or use {other}, or ask an administrator to raise it"
        )
    whose = {"user": "your", "account": "the account's", "assoc_user": "your"}.get(
        kind.scope, "the"
    )
    texts = {
        "amount": f"it starts when {whose} running jobs under {cap} free enough; {less} lets "
        f"it fit sooner; or use {other}; if this job alone asks for more than {cap} it can "
        f"never start as requested",
        "minutes": f"it starts only when the usage under {cap} decays, an administrator resets "
        f"it (sacctmgr modify ... set RawUsage=0) or raises it; a shorter --time or {less} "
        f"lowers what it needs; or use {other}",
        "run_minutes": f"it starts as {whose} running jobs use up their time under {cap}; a "
        f"shorter --time or {less} makes its share smaller; or use {other}",
        "running": f"it starts when one of {whose} running jobs counted by {cap} ends; or use "
        f"{other}",
        "submitted": f"cancel queued jobs counted by {cap} that you no longer need (scancel), "
        f"or use {other}",
        "wall_used": f"it starts only when the usage under {cap} decays or an administrator "
        f"resets or raises it; or use {other}",
        "wall": f"ask for a --time within {cap}, use {other}, or ask an administrator to raise it",
        "minimum": f"ask for at least {cap} of {what}, or use {other}",
    }
    return texts[kind.measure]


def limit_reason(
    code: str,
    owner: Literal["assoc", "qos"],
    key: str,
    tres: str = "",
    versions: str = "22.05 26.05",
) -> Reason:
    """The catalogue entry of a limit reason, its words put together from the limit it names."""
    spec, kind = LimitSpec(owner, key, tres), LIMIT_KINDS[key]
    never = kind.scope in {"job", "node"}
    klass = "qos_limit" if owner == "qos" else "assoc_limit"
    return Reason(
        code,
        klass,
        _meaning(spec, kind),
        _advice(spec, kind),
        "never" if never else "waits",
        versions,
        spec,
    )
