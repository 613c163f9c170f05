"""When a message asks for a submission: the only wording that lets the router plan one.

A submission is planned (for a person's approval) only when it is clearly asked for:

* **explicitly**: submit, sbatch, launch, enqueue, queue up, send it to Slurm, plan a
  submission, "for real";
* **indirectly**, as a request: an action with the cluster as destination ("get genomics-49
  running on the cluster", "kick off epigenomics-50 on the real cluster", "I'd like montage-60
  to run on slurm tonight"), said as an imperative, a wish (I want, I'd like, let's) or a request
  to the assistant (can you, could you), and not as a question about what would happen ("how
  would montage-60 run on the cluster?" is a simulation; "can montage-60 go on the cluster?"
  is asked back).

A negation ("don't submit", "do not put it on the cluster", "without submitting") refuses it
whatever else is said. An indirect phrase that is neither a request nor a hypothetical
("montage-60 needs to go on the cluster at some point") is asked back, with the submission as
one of the choices.
"""

from __future__ import annotations

import re

EXPLICIT = re.compile(
    r"\b(submit\w*|sbatch|launch\w*|enqueue|queue\s+up|send\s+.*\bto\s+(?:slurm|the\s+cluster)|"
    r"for\s+real|plan\s+a\s+submission)",
    re.I,
)
"""Words that ask for a submission wherever they stand."""
_ACTION = (
    r"(?:run\w*|put|start\w*|get|getting|kick\w*\s+off|fire\w*\s+off|schedul\w*|send|go|going|"
    r"have|want|like|need|queue)"
)
_DESTINATION = (
    r"(?:on|onto|to|into|in)\s+(?:the\s+|our\s+)?(?:real\s+|actual\s+|production\s+|live\s+)?"
    r"(?:cluster|slurm|queue|machines)\b"
)
INDIRECT = re.compile(r"\b" + _ACTION + r"\b.{0,60}?\b" + _DESTINATION, re.I)
"""An action with the cluster as its destination: a submission if said as a request."""
_REQUEST = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|so|now|then|right|alright|please|pls|hey)[\s,]+)*"
    r"(?:(?:can|could|would|will)\s+(?:you|u)\b|i\s+(?:want|need)\b|i'?d\s+like\b|"
    r"i\s+would\s+like\b|we\s+(?:want|need)\b|let'?s\b|go\s+ahead\b|time\s+to\b|"
    r"(?:run|put|start|get|kick|fire|schedule|send|queue)\b)",
    re.I,
)
"""A request form at the start: an imperative, a wish, or a request to the assistant."""
_HYPOTHETICAL = re.compile(
    r"\b(?:how|what\s*if|whether|suppose|supposing|if|might|should|would(?!\s+(?:you|u)\b))\b",
    re.I,
)
"""A question about what would happen, which a simulation answers."""
_CAN_IT = re.compile(r"\b(?:can|could)\b(?!\s+(?:you|u)\b)", re.I)
""""Can montage-60 go on the cluster?": a request or a question; asked back."""
REFUSED = re.compile(
    r"\b(?:don'?t|do\s+not|never|no\s+need\s+to|not\s+yet|without)\s+(?:\w+\s+){0,2}?"
    r"(?:submit\w*|launch\w*|sbatch|queue\s+up|run\w*|put|start\w*|send\w*|schedul\w*|"
    r"kick\w*\s+off)\b",
    re.I,
)
"""A negated submission ("don't submit", "do not put it on the cluster")."""


def refused(*texts: str) -> bool:
    """The message says not to submit."""
    return any(REFUSED.search(t) for t in texts)


def hypothetical(text: str) -> bool:
    """The message asks what would happen (a simulation), not for an action."""
    return bool(_HYPOTHETICAL.search(text))


def asks_to_submit(text: str, fixed: str = "") -> bool:
    """Whether ``text`` (or its spell-corrected form ``fixed``) clearly asks for a submission."""
    texts = (text, fixed or text)
    if refused(*texts):
        return False
    if any(EXPLICIT.search(t) for t in texts):
        return True
    return any(
        INDIRECT.search(t) and _REQUEST.search(t) and not hypothetical(t) and not _CAN_IT.search(t)
        for t in texts
    )


def may_mean_submit(text: str, fixed: str = "") -> bool:
    """An indirect submission phrase that is no request and no question ("montage-60 needs to
    go on the cluster"): worth offering the submission among the choices, never planned."""
    texts = (text, fixed or text)
    if refused(*texts) or any(hypothetical(t) for t in texts):
        return False
    return any(INDIRECT.search(t) for t in texts)
