"""The answer checker applied to the report's summary paragraph: every figure it states equals
a value recomputed here from the analysis (unrounded), and every "most" names the right ones.

The summary (:func:`wass_chat.report.overview.deterministic_overview`, or a local model's text)
quotes the findings' sentences. :func:`~wass_chat.report.overview_figures.recomputed_figures`
derives what those sentences may say again, from the analysis's tables in plain Python and at
full precision. :func:`overview_problems` checks the paragraph against them as
:mod:`.answer_check` checks an answer, strictly (a "0" must be a zero
figure, not one rounded away), and adds what a number check cannot see:

* **the leader is the leader**: the user said to leave "the most core-hours idle" is the only
  one with the largest exact amount; "tied for the most" names every user on it and no other;
  an amount under :data:`~wass_chat.analytics.insights.NEGLIGIBLE_CORE_HOURS` crowns no one;
* **shares within their whole**: a share of the pending queue or of jobs never exceeds 100%.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wass_chat.answers.checks.answer_check import contradictions, ungrounded

_MARKER = re.compile(r"\((\d+)\) ")
"""The summary's numbered recommendations, ``(1) ...``: list markers, not figures."""
_MOST_IDLE = re.compile(r"(\S+) left the most core-hours idle")
_TIED_IDLE = re.compile(r"([^.;:]+?) tied for the most core-hours idle")
_NAME_SPLIT = re.compile(r",\s*|\s+and\s+")


def overview_problems(text: str, figures: Mapping[str, Any]) -> list[str]:
    """Everything wrong with a summary paragraph against
    :func:`~wass_chat.report.overview_figures.recomputed_figures`."""
    body = _MARKER.sub(" ", text)
    found = ungrounded(body, figures, strict=True) + contradictions(body)
    leaders = set(figures.get("most_idle_users", []))
    for name in _MOST_IDLE.findall(body):
        if leaders != {name}:
            found.append(
                f"{name} is said to leave the most core-hours idle; the exact leaders are "
                f"{sorted(leaders) or 'none (negligible amounts)'}"
            )
    for group in _TIED_IDLE.findall(body):
        named = {n.strip() for n in _NAME_SPLIT.split(group.split(". ")[-1]) if n.strip()}
        if named != leaders or len(leaders) < 2:
            found.append(
                f"tied for the most idle: {sorted(named)}, but the exact leaders are "
                f"{sorted(leaders)}"
            )
    for share in re.findall(r"(\d+(?:\.\d+)?)% of (?:the )?(?:\d[\d,]* )?(?:jobs|pending)", body):
        if float(share) > 100:
            found.append(f"a share of {share}% of the jobs")
    return found
