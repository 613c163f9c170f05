"""Questions about things the assistant has no data on, near enough to its own to be misread.

"What's the temperature of gpu02?", "how much did the cluster cost us?", "install pytorch on
the nodes", "how much disk quota do I have?" share words with questions it answers (a node, a
period, "how much"), so the classifier alone would send them to the node list or the
accounting summary: a confident wrong answer. The assistant reads Slurm's queue, nodes and
accounting and simulates workflows; it has no sensors, prices, accounts, storage or software
installs. Such a question gets said so, with the closest things it can do as choices.
Energy over a period is in scope (modelled from the recorded schedule, `energy_usage`); a
live power reading or a carbon figure is not.

A message that names a job, run or task, or speaks of efficiency, is never caught here: the
topic words then qualify a question the assistant does answer.
"""

from __future__ import annotations

import re

TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "temperatures, fans, live power readings or carbon",
        re.compile(
            r"\b(temperatures?|thermal|overheat\w*|fans?|fan\s+speed|power\s+draw|watts?|"
            r"carbon|co2)\b",
            re.I,
        ),
    ),
    (
        "prices, costs or billing",
        re.compile(
            r"\b(price|pricing|billing|bill|invoice|budget|money|dollars?|euros?|cost\s+(?:us|per)|"
            r"how\s+much\s+(?:does|did|do|would|will)\b.{0,40}\bcost)\b",
            re.I,
        ),
    ),
    (
        "accounts, passwords or logins",
        re.compile(r"\b(passwords?|passwd|ssh|log\s*in|login|sudo|vpn|api\s+key)\b", re.I),
    ),
    (
        "disk quotas or storage",
        re.compile(
            r"\b(quotas?|disk\s+space|storage|file\s*systems?|scratch\s+space|inodes?)\b", re.I
        ),
    ),
    (
        "installing or upgrading software",
        re.compile(
            r"^\s*(?:please\s+|pls\s+|can you\s+|could you\s+)?(install|upgrade|update|compile|"
            r"uninstall|module\s+load)\b",
            re.I,
        ),
    ),
)
"""What the assistant has no data on, and the words that ask about it."""


def outside_topic(text: str) -> str | None:
    """The topic ``text`` asks about that the assistant has no data on, if any."""
    return next((topic for topic, words in TOPICS if words.search(text)), None)
