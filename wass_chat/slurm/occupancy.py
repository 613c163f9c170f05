"""What the live cluster's running jobs hold: the occupancy ``submit`` plans from.

A plan made for an empty machine is wrong on a shared one: the workflow's jobs would queue
behind the running ones on the nodes it picked. :func:`cluster_occupancy` asks
``squeue -t R`` for every running job's nodes, CPUs and expected end (Slurm's end time is the
start plus the time limit, so it is an upper bound: jobs usually end earlier) and turns them
into :class:`~sim.occupancy.Hold` s from now, for the nodes of the platform being planned on.

A job spread over several nodes is counted as holding an equal share of its CPUs on each (what
squeue reports); the holds on one node are capped at its cores. A job with no end (no time
limit) is taken to hold its cores for :data:`NO_END_HOLD_S`.
"""

from __future__ import annotations

import math
from datetime import datetime

from sim.model import Platform
from sim.occupancy import Hold, Occupancy
from wass_chat.slurm.commands import SlurmCommands
from wass_chat.slurm.formats import slurm_time
from wass_chat.slurm.hostlist import expand

RUNNING_FORMAT = "%i|%N|%C|%D|%e"
"""squeue fields: job id, node list, CPUs, node count, expected end."""
NO_END_HOLD_S = 7 * 24 * 3600.0
"""How long a running job without an end time (no time limit) is assumed to keep its cores."""


def running_holds(text: str, platform: Platform, now: datetime) -> Occupancy:
    """The holds ``squeue -h -t R -o RUNNING_FORMAT`` printed (pure: no Slurm call).

    Lines that do not parse are skipped; nodes outside ``platform`` are left out.
    """
    cores_of = {n.name: n.cores for n in platform.nodes}
    left = dict(cores_of)
    holds: list[Hold] = []
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 5 or not parts[2].isdigit():
            continue
        job, nodelist, cpus, count, end = parts
        names = [n for n in expand(nodelist) if n in cores_of]
        total_nodes = int(count) if count.isdigit() and int(count) > 0 else len(names) or 1
        per_node = math.ceil(int(cpus) / total_nodes)
        ends = slurm_time(end)
        until = NO_END_HOLD_S if ends is None else max(0.0, (ends - now).total_seconds())
        for name in names:
            cores = min(per_node, left[name])
            if cores > 0 and until > 0:
                left[name] -= cores
                holds.append(Hold(name, cores, until, job))
    return Occupancy(tuple(holds))


def cluster_occupancy(
    commands: SlurmCommands, platform: Platform, now: datetime | None = None
) -> Occupancy:
    """Every running job's cores on ``platform``'s nodes, held until its expected end."""
    text = commands.run(["squeue", "-h", "-t", "R", "-o", RUNNING_FORMAT])
    return running_holds(text, platform, now or datetime.now())
