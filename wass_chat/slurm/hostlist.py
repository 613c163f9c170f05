"""Slurm's hostlist syntax (``c[1-2]n[01-02],gpu1``) <-> node names, through ClusterShell.

Every view that reads a node list Slurm printed (``squeue``'s ``%N``, ``sinfo``, ``scontrol show
job``'s ``NodeList`` and per-node ``Nodes=`` lines, a partition's ``Nodes=``) expands it here,
so zero padding, several bracket groups in one name and comma lists inside and outside brackets
all mean what Slurm means (``scontrol show hostnames`` prints the same names, in the same order;
tests/slurm compares the two). ClusterShell's ``NodeSet`` (CEA, LGPL-2.1-or-later, the field's
``nodeset`` tool) expands each top-level item; items keep the order Slurm printed them in, as
``scontrol`` keeps it (``NodeSet`` alone would sort ``n[1-3],gpu1`` as ``gpu1,n[1-3]``).
python-hostlist would do the same job but is GPL-2.0, which an Apache-2.0 project cannot import.
"""

from __future__ import annotations

from collections.abc import Iterable

from ClusterShell.NodeSet import NodeSet, NodeSetParseError
from ClusterShell.RangeSet import RangeSetParseError

from sim.errors import InputError

EMPTY = frozenset({"", "(null)", "None", "N/A", "n/a"})
"""What Slurm prints for "no nodes" (a pending job's NodeList, an empty partition)."""


class HostlistError(InputError):
    """A node list Slurm's own syntax does not allow (unbalanced brackets, a bad range)."""

    kind = "hostlist"


def expand(text: str) -> list[str]:
    """``c[1-2]n[01-02],gpu1`` -> ``[c1n01, c1n02, c2n01, c2n02, gpu1]``; ``(null)``/'' -> ``[]``.

    Raises :class:`HostlistError` (one line) for text that is not a hostlist.
    """
    text = text.strip()
    if text in EMPTY:
        return []
    names: list[str] = []
    try:
        for item in _top_level_items(text):
            names.extend(n for n in NodeSet(item) if n not in names)
    except (NodeSetParseError, RangeSetParseError) as exc:
        raise HostlistError(text, [f"not a Slurm hostlist: {exc}"]) from exc
    return names


def _top_level_items(text: str) -> list[str]:
    """Split at the commas outside brackets: ``n[1,3],gpu1`` -> ``[n[1,3], gpu1]``."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth < 0:
            raise HostlistError(text, ["not a Slurm hostlist: unbalanced brackets"])
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise HostlistError(text, ["not a Slurm hostlist: unbalanced brackets"])
    items.append(text[start:])
    return [item for item in items if item]


def collect(names: Iterable[str]) -> str:
    """``[n1, n2, n3, gpu01]`` -> ``gpu01,n[1-3]`` (Slurm's compact form, for people)."""
    return str(NodeSet.fromlist(list(names)))
