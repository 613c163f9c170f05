"""What-if changes said in words: a node that fails, a network made faster or slower.

People rarely type ``/whatif remove gpu02`` or ``bandwidth 0.5``; they ask "what happens to
genomics-49 if gpu02 dies?", "with cpu03 dead", "impact of losing gpu02", "what if the network
were twice as fast", "links 4 times slower", "bandwidth cut in half". These functions read such
phrases out of lower-cased text; :func:`wass_chat.agent.understanding.slots.find_changes` turns the
node word into a node name (or keeps an unknown one as typed, for the tool to refuse with the
nearest).

A node word is only taken in a failure phrase (if/when/suppose/with ... dies, fails, goes down;
losing, without, failure of, outage), so "why did n2 go down?" stays a question about the node.
"""

from __future__ import annotations

import re

from wass_chat.agent.understanding.period_words import NUMBER_WORDS

_NODE = r"(?:node\s+)?([a-z]+[ -]?\d+)"
_BROKEN = (
    r"(?:down|away|offline|missing|drained|dead|gone|broken|lost|unavailable|dies|died|fails|"
    r"failed|crash(?:es|ed)?|breaks|broke|dark)"
)
_LINKING = (
    r"(?:(?:goes|went|go|is|are|were|was|gets|got|has|had|becomes|became|being)\s+(?:been\s+)?)?"
)
_FAILED_NODE = (
    r"\b(?:remove|removed|removing|drop|dropped|dropping|lose|lost|losing|without|minus|"
    r"excluding|exclude)\s+" + _NODE + r"\b",
    rf"\b(?:if|when|once|suppose|supposing|assuming|after|should)\s+(?:that\s+|the\s+)?"
    rf"{_NODE}\s+{_LINKING}{_BROKEN}\b",
    r"\bwith\s+(?:the\s+)?" + _NODE + r"\s+" + _LINKING + _BROKEN + r"\b",
    r"\b(?:failure|outage|loss|death|crash|breakdown)\s+of\s+(?:the\s+)?" + _NODE + r"\b",
    r"\b" + _NODE + r"\s+(?:outage|failure|breakdown|going\s+down|dies|fails|crashes|breaks)\b",
)
"""A node taken away: by a verb (remove, lose, without), a condition (if gpu02 dies, with
cpu03 dead) or a noun (failure of cpu04, gpu01 outage)."""


def failed_node_word(lowered: str) -> str | None:
    """The node word of a failure phrase (``gpu02``, ``gpu 2``), as typed."""
    for pattern in _FAILED_NODE:
        if m := re.search(pattern, lowered):
            return m.group(1)
    return None


_NETWORK = r"\b(?:bandwidth|network|interconnect|links?|bw|transfers?|ethernet|infiniband|fabric)\b"
_FACTOR = (
    r"(\d+(?:\.\d+)?|" + "|".join(w for w in NUMBER_WORDS if " " not in w and len(w) > 2) + ")"
)
_UP = r"(?:faster|quicker|higher|more|bigger|wider|better|quick|fast)"
_DOWN = r"(?:slower|lower|less|smaller|narrower|worse|slow)"


def _number(word: str) -> float:
    return float(word) if word[0].isdigit() else float(NUMBER_WORDS[word])


def bandwidth_factor(lowered: str) -> float | None:
    """The factor every bandwidth is scaled by, when the text changes the network's speed:
    "twice as fast" 2, "halve the bandwidth" 0.5, "4 times slower" 0.25, "bandwidth x4" 4."""
    if not re.search(_NETWORK, lowered):
        return None
    scaled = r"\s*(?:x|times|fold|-fold)\s*(?:as\s+)?"
    if m := re.search(r"\b" + _FACTOR + scaled + r"(" + _UP + "|" + _DOWN + r")\b", lowered):
        factor = _number(m.group(1))
        return factor if re.fullmatch(_UP, m.group(2)) else 1 / factor if factor else None
    if m := re.search(
        r"\b(" + _UP + "|" + _DOWN + r")\b[^.?!]{0,30}?\(?\b" + _FACTOR + r"\s*x\b", lowered
    ):
        factor = _number(m.group(2))
        return factor if re.fullmatch(_UP, m.group(1)) else 1 / factor if factor else None
    if re.search(r"\b(?:doubl\w*|twice)\b", lowered):
        return 0.5 if re.search(r"\btwice\s+as\s+" + _DOWN + r"\b", lowered) else 2.0
    if re.search(r"\bhal(?:f|ve|ves|ved|ving)\b", lowered):
        return 2.0 if re.search(r"\bhalf\s+(?:the\s+)?(?:transfer\s+)?time\b", lowered) else 0.5
    if m := re.search(
        r"\b(?:bandwidth|bw)\s*(?:x|\*|by|factor|=|times)?\s*(\d+(?:\.\d+)?)\b", lowered
    ):
        return float(m.group(1))
    return None
