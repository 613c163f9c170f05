"""The cluster's reservations, from ``scontrol --oneliner show reservations``.

One reader for every answer that needs them: the queue model holds an active reservation's
nodes until it ends (:func:`wass_chat.slurm.queue_model.parse_reservations`), and the node
answer says which nodes are reserved, when and for whom ("is there a reservation?", "why does
n3 take no jobs at 16:00?"). A reservation already over is left out: Slurm keeps none, but a
clock a second ahead of the controller's would show one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from wass_chat.slurm.commands import scontrol_records
from wass_chat.slurm.formats import is_set, slurm_time
from wass_chat.slurm.hostlist import expand

RESERVATIONS_ARGV = ["scontrol", "--oneliner", "show", "reservations"]


@dataclass(frozen=True)
class Reservation:
    name: str
    nodes: tuple[str, ...]
    start: datetime | None
    end: datetime | None
    users: str
    """``Users=`` as Slurm prints it (``root,alice``; ``-bob`` excludes), '' when unset."""
    accounts: str

    def active(self, now: datetime) -> bool:
        return self.start is None or self.start <= now


def parse_reservations(text: str, now: datetime) -> list[Reservation]:
    """The reservations not yet over, in Slurm's order (pure)."""
    out = []
    for record in scontrol_records(text):
        name = record.get("ReservationName", "")
        end = slurm_time(record.get("EndTime"))
        if not name or (end is not None and end <= now):
            continue
        out.append(
            Reservation(
                name=name,
                nodes=tuple(expand(record.get("Nodes", ""))),
                start=slurm_time(record.get("StartTime")),
                end=end,
                users=_set(record.get("Users", "")),
                accounts=_set(record.get("Accounts", "")),
            )
        )
    return out


def _set(value: str) -> str:
    return value if is_set(value) else ""
