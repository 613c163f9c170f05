"""Core and memory availability of one node over time, for list schedulers.

A node with ``cores`` cores holds reservations ``[start, end)`` of some cores and memory. List
schedulers ask for the earliest start at or after a data-ready time where a task's cores and
memory stay free for its whole duration: *insertion* may use any idle gap (HEFT, CPOP, PEFT),
*append* never starts before the latest start already planned (Min-Min, Max-Min, SJF, LJF),
which keeps the node's start order equal to the planning order.

Other jobs' cores (a busy cluster) are reservations from 0 like any other (:meth:`hold`).

With one core per node insertion reduces to the textbook gap search of Topcuoglu et al. (2002):
the earliest idle interval long enough for the task.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Reservation:
    """``cores`` cores and ``memory`` bytes held during ``[start, end)`` by ``task``."""

    start: float
    end: float
    cores: int
    memory: int
    task: str


def _overlaps(r: Reservation, start: float, end: float) -> bool:
    """Whether ``r`` shares an instant with a task planned over ``[start, end)``.

    Zero-length intervals count as one instant, so a zero-duration task strictly inside a busy
    interval conflicts with it, as on a one-core machine where it would have to wait.
    """
    return r.start < end and start < r.end if end > start else r.start < start < r.end


@dataclass
class NodeTimeline:
    """Reservations of one node, kept sorted by start time."""

    cores: int
    memory: int
    reservations: list[Reservation] = field(default_factory=list)

    @property
    def last_start(self) -> float:
        return self.reservations[-1].start if self.reservations else 0.0

    @property
    def available_time(self) -> float:
        """When every reservation has ended."""
        return max((r.end for r in self.reservations), default=0.0)

    def fits_at(self, start: float, duration: float, cores: int, memory: int) -> bool:
        """Whether ``cores`` and ``memory`` are free during ``[start, start + duration)``."""
        end = start + duration
        active = [r for r in self.reservations if _overlaps(r, start, end)]
        if not active:
            return True
        if (
            cores + sum(r.cores for r in active) <= self.cores
            and memory + sum(r.memory for r in active) <= self.memory
        ):
            return True  # even all of them at once leave room
        # Usage only rises at a reservation's start: check the window's first instant and
        # every start inside it.
        instants = [start, *(r.start for r in active if r.start > start)]
        for instant in instants:
            used_cores = used_memory = 0
            for r in active:
                if r.start <= instant < r.end or r.start == r.end == instant:
                    used_cores += r.cores
                    used_memory += r.memory
            if used_cores + cores > self.cores or used_memory + memory > self.memory:
                return False
        return True

    def earliest_start(
        self, ready: float, duration: float, cores: int, memory: int, insertion: bool
    ) -> float:
        """Earliest ``t >= ready`` where the task fits (append mode: also ``t >= last start``)."""
        floor = ready if insertion else max(ready, self.last_start)
        if self.cores == 1 and cores == 1 and memory == 0:
            return self._earliest_gap(floor, duration)
        candidates = sorted({floor, *(r.end for r in self.reservations if r.end > floor)})
        for t in candidates:
            if self.fits_at(t, duration, cores, memory):
                return t
        raise AssertionError("a task that fits the node always fits after every reservation")

    def _earliest_gap(self, floor: float, duration: float) -> float:
        """One-core fast path: the first idle gap of length ``duration`` at or after ``floor``."""
        t = floor
        for r in self.reservations:
            if _overlaps(r, t, t + duration):
                t = max(t, r.end)
        return t

    def hold(self, until: float, cores: int, holder: str) -> None:
        """Reserve ``cores`` over ``[0, until)`` for another job (no memory: holds take cores)."""
        self.reserve(Reservation(0.0, until, cores, 0, holder))

    def reserve(self, reservation: Reservation) -> None:
        keys = [(r.start, r.end) for r in self.reservations]
        index = bisect.bisect_right(keys, (reservation.start, reservation.end))
        self.reservations.insert(index, reservation)
