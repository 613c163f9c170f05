"""Claims of actions and suggested commands in a model's answer: checked, never taken on trust.

The numbers-and-ids check (:mod:`wass_chat.answers.checks.verify`) passed "I have cancelled all
other jobs; run `scancel -u root`": no number, no id, so nothing to contradict. Two more rules:

* **No claimed action without the tool result that did it.** The model has no tool that acts on
  the cluster (``submit_workflow`` only proposes a plan; a person approves it outside the
  conversation), so "I cancelled...", "I have submitted...", "the jobs have been requeued" is
  true only when the facts hold the outcome of that very action (an executed
  ``submission_outcome`` for a submission or an approval). Anything else is a false claim.
* **No destructive command that the facts do not give.** A command that cancels, kills,
  changes or deletes (``scancel``, ``scontrol update/hold/requeue/delete...``, ``sacctmgr
  delete/modify``, ``kill``, ``rm -r``, ``sudo``...) may appear only when it is one of our own
  suggestions in the facts, word for word (the explainer's ``scontrol update JobId=42
  StartTime=now``); a model writing ``scancel -u root`` of its own is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

_ACTION_VERBS = {
    "submit": r"(?:re)?submitted|launched|queued(?: up)?|sent",
    "approve": r"approved|confirmed",
    "cancel": r"cancell?ed|killed|terminated|stopped|aborted|scancell?ed",
    "change": r"requeued|held|released|suspended|resumed|drained|undrained|rebooted|restarted|"
    r"deleted|removed|modified|updated|reprioriti[sz]ed|moved",
}
"""What a sentence may claim was done on the cluster, by kind of action."""
_VERB_KIND = [(kind, re.compile(rf"^(?:{verbs})$", re.I)) for kind, verbs in _ACTION_VERBS.items()]
_ANY_VERB = "|".join(_ACTION_VERBS.values())
_FIRST_PERSON = re.compile(
    rf"\b(?:I|we)(?:'ve|'ll| have| had| just| now| already| successfully| also|\s)*"
    rf"\s*({_ANY_VERB})\b",
    re.I,
)
_PASSIVE = re.compile(
    r"\b(?:(?:the|your|all|other|every|each|these|those|its|their)\s+)*"
    r"(?:jobs?|runs?|workflows?|plans?|submissions?|tasks?|nodes?|it|they|everything)\s+"
    r"(?:has|have)\s+(?:now\s+|already\s+|successfully\s+|just\s+)*been\s+"
    rf"({_ANY_VERB})\b",
    re.I,
)
"""A result claimed in the present perfect ("the jobs have been cancelled"); the simple past
("your job was cancelled by root") reports history, which sacct's facts ground or not."""
_NEGATED = re.compile(r"\b(?:not|never|no|nothing|none|n't|cannot|can't|won't)\b", re.I)

SLURM_CHANGES = re.compile(
    r"(?<![\w/.-])(?:sudo\s+\S.*|scancel\b.*|"
    r"scontrol\s+(?:-\S+\s+)*(?:update|delete|requeue\w*|hold|uhold|release|suspend|resume|"
    r"shutdown|reconfigure|takeover|reboot|top|kill\w*|cancel_reboot)\b.*|"
    r"sacctmgr\s+(?:-\S+\s+)*(?:add|create|delete|remove|modify|update|archive|load)\b.*)",
)
"""Slurm commands that cancel, change or delete (and ``sudo``): words no sentence uses in
passing, so they are looked for in prose too."""
SHELL_CHANGES = re.compile(
    r"(?<![\w/.-])(?:(?:kill|pkill|killall)\s+\S.*|rm\s+-\S*[rRf]\S*\s.*|"
    r"systemctl\s+(?:stop|restart|disable|kill|mask)\b.*|"
    r"(?:shutdown|reboot|halt|poweroff|mkfs\S*|dd)\s+\S.*)",
)
"""Shell commands that kill or destroy: looked for only in code (``kill`` is also English)."""
_CODE = re.compile(r"`([^`\n]+)`|^\s*\$\s+(.+)$", re.M)
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
_PROSE_END = re.compile(r"[();,]|\.(?:\s|$)| - ")


def actions_in(facts: Any) -> set[str]:
    """The kinds of action the tools' results show as done: ``submit`` and ``approve`` for an
    executed submission; nothing else can be done from a conversation."""
    executed = any(
        isinstance(node, Mapping)
        and node.get("kind") == "submission_outcome"
        and node.get("executed") is True
        for node in _nodes(facts)
    )
    return {"submit", "approve"} if executed else set()


def false_claims(text: str, facts: Any) -> list[str]:
    """Sentences of ``text`` that claim an action on the cluster no tool result shows done.

    "I/we <verb>" is always the assistant's claim. A present-perfect passive ("the jobs have
    been cancelled") may instead report a state Slurm gave: it passes when the facts hold that
    state in Slurm's spelling (``CANCELLED``, ``REQUEUED``...)."""
    done = actions_in(facts)
    states = " ".join(fact_strings(facts))
    found: dict[str, None] = {}
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", text):
        for pattern in (_FIRST_PERSON, _PASSIVE):
            for match in pattern.finditer(sentence):
                if _NEGATED.search(sentence[: match.end()]):
                    continue  # "nothing has been submitted", "I have not cancelled"
                if _kind_of(match.group(1)) in done:
                    continue
                if pattern is _PASSIVE and _slurm_state(match.group(1)) in states:
                    continue
                found[sentence.strip()] = None
    return list(found)


def _slurm_state(verb: str) -> str:
    """The stem of ``verb`` as Slurm spells a state (``cancelled`` -> ``CANCEL``)."""
    word = verb.strip().lower()
    special = {"held": "HELD", "killed": "CANCEL", "terminated": "CANCEL", "stopped": "STOP"}
    return special.get(word) or re.sub(r"(?:l?ed|d)$", "", word).upper()


def _kind_of(verb: str) -> str:
    return next(kind for kind, pattern in _VERB_KIND if pattern.match(verb.strip()))


def suggested_commands(text: str) -> list[str]:
    """Destructive commands in ``text``: any kind in code (inline, fenced, ``$ ...`` lines),
    the Slurm ones (:data:`SLURM_CHANGES`) in prose as well."""
    code = [m.group(1) or m.group(2) or "" for m in _CODE.finditer(_FENCE.sub("", text))]
    code += [line for block in _FENCE.findall(text) for line in block.splitlines()]
    commands: dict[str, None] = {}
    for piece in code:
        for pattern in (SLURM_CHANGES, SHELL_CHANGES):
            for found in pattern.finditer(piece):
                commands[found.group(0).strip().rstrip(".,;")] = None
    prose = _CODE.sub(" ", _FENCE.sub(" ", text))
    for found in SLURM_CHANGES.finditer(prose):  # in a sentence, a command ends where it does
        commands[_PROSE_END.split(found.group(0))[0].strip()] = None
    return list(commands)


def fact_strings(facts: Any) -> list[str]:
    """Every string in ``facts`` (our sentences included): where a suggested command may come
    from."""
    return [node for node in _nodes(facts) if isinstance(node, str)]


def _nodes(value: Any) -> Iterator[Any]:
    """``value`` and everything nested in it (mappings' values, lists' and tuples' items)."""
    yield value
    children = value.values() if isinstance(value, Mapping) else value
    if isinstance(value, Mapping | list | tuple):
        for child in children:
            yield from _nodes(child)


def unsafe_commands(text: str, fact_strings: Iterable[str]) -> list[str]:
    """Destructive commands in ``text`` that are not, word for word, one the facts suggest."""
    known = [" ".join(s.split()) for s in fact_strings]
    return [
        command
        for command in suggested_commands(text)
        if not any(" ".join(command.split()) in s for s in known)
    ]
