"""How well jobs used what they asked for (kind ``efficiency``): the Markdown."""

from __future__ import annotations

import re

from wass_chat.agent.safety import MAX_NOTE
from wass_chat.agent.safety import literal as lit
from wass_chat.analytics.efficiency_questions import EfficiencyFacts
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain


def render_efficiency(f: Facts) -> str:
    """Efficiency facts: the verdict, then the figures line by line (user names and job ids
    come from accounting: shown as literals)."""
    lines = [f"**{plain(f['verdict'])}**", ""]
    for line in f.get("lines", []):  # list items keep their marker; the rest are paragraphs
        item = re.match(r"^(- |\d+\. )(.*)$", line)
        lines += [item[1] + plain(item[2])] if item else ["", plain(line)] if line else []
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    return "\n".join(lines)


KIND = Kind(
    "efficiency",
    "CPU and memory efficiency by user, account or job",
    render_efficiency,
    facts=EfficiencyFacts,
)
