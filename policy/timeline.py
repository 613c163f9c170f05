"""Core, memory and GPU availability of one node over time, for list schedulers.

A node with ``cores`` cores holds reservations ``[start, end)`` of some cores, memory and GPUs.
List schedulers ask for the earliest start at or after a data-ready time where a task's cores,
memory and GPUs stay free for its whole duration: *insertion* may use any idle gap (HEFT, CPOP,
PEFT), *append* never starts before the latest start already planned (Min-Min, Max-Min, SJF, LJF),
which keeps the node's start order equal to the planning order.

Other jobs' cores and memory (a busy cluster) are reservations like any other (:meth:`hold`).

With one core per node insertion reduces to the textbook gap search of Topcuoglu et al. (2002):
the earliest idle interval long enough for the task.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Reservation:
    """``cores`` cores, ``memory`` bytes and ``gpus`` GPUs held during ``[start, end)`` by
    ``task``."""

    start: float
    end: float
    cores: int
    memory: int
    task: str
    gpus: int = 0


def _overlaps(r: Reservation, start: float, end: float) -> bool:
    """Whether ``r`` shares an instant with a task planned over ``[start, end)``.

    Zero-length intervals count as one instant, so a zero-duration task strictly inside a busy
    interval conflicts with it, as on a one-core machine where it would have to wait.
    """
    return r.start < end and start < r.end if end > start else r.start < start < r.end


@dataclass
class NodeTimeline:
    """Reservations of one node, kept sorted by start time.

    Queries look only at the reservations that can overlap the window asked about: those
    starting before its end and after its start minus the longest reservation (a reservation
    starting earlier has ended). The answers are those of a scan over all of them, at a cost
    that no longer grows with the whole timeline when many workflows share the node.
    """

    cores: int
    memory: int
    reservations: list[Reservation] = field(default_factory=list)
    gpus: int = 0
    _keys: list[tuple[float, float]] = field(init=False, repr=False)
    _longest: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._keys = [(r.start, r.end) for r in self.reservations]
        self._longest = max((r.end - r.start for r in self.reservations), default=0.0)

    def _near(self, start: float, end: float) -> list[Reservation]:
        """The reservations that may overlap ``[start, end)``: a superset, in start order."""
        reach = start - self._longest * (1 + 1e-9) - 1e-9
        lo = bisect.bisect_left(self._keys, (reach, -math.inf))
        hi = bisect.bisect_left(self._keys, (end, math.inf), lo)
        return self.reservations[lo:hi]

    @property
    def last_start(self) -> float:
        return self.reservations[-1].start if self.reservations else 0.0

    @property
    def available_time(self) -> float:
        """When every reservation has ended."""
        return max((r.end for r in self.reservations), default=0.0)

    def fits_at(
        self, start: float, duration: float, cores: int, memory: int, gpus: int = 0
    ) -> bool:
        """Whether ``cores``, ``memory`` and ``gpus`` are free over ``[start, start+duration)``."""
        end = start + duration
        near = self._near(start, end)
        if end > start:  # _overlaps, inlined: this is the planners' innermost loop
            active = [r for r in near if r.start < end and start < r.end]
        else:
            active = [r for r in near if r.start < start < r.end]
        if not active:
            return True
        all_cores = all_memory = all_gpus = 0
        for r in active:
            all_cores += r.cores
            all_memory += r.memory
            all_gpus += r.gpus
        if (
            cores + all_cores <= self.cores
            and memory + all_memory <= self.memory
            and gpus + all_gpus <= self.gpus
        ):
            return True  # even all of them at once leave room
        # Usage only rises at a reservation's start: check the window's first instant and
        # every start inside it.
        instants = [start, *(r.start for r in active if r.start > start)]
        for instant in instants:
            used_cores = used_memory = used_gpus = 0
            for r in active:
                if r.start <= instant < r.end or r.start == r.end == instant:
                    used_cores += r.cores
                    used_memory += r.memory
                    used_gpus += r.gpus
            if used_cores + cores > self.cores or used_memory + memory > self.memory:
                return False
            if used_gpus + gpus > self.gpus:
                return False
        return True

    def earliest_start(
        self,
        ready: float,
        duration: float,
        cores: int,
        memory: int,
        insertion: bool,
        gpus: int = 0,
    ) -> float:
        """Earliest ``t >= ready`` where the task fits (append mode: also ``t >= last start``)."""
        floor = ready if insertion else max(ready, self.last_start)
        if self.cores == 1 and cores == 1 and memory == 0:
            return self._earliest_gap(floor, duration)  # one task at a time: GPUs never contend
        later = self._near(floor, math.inf)
        candidates = sorted({floor, *(r.end for r in later if r.end > floor)})
        for t in candidates:
            if self.fits_at(t, duration, cores, memory, gpus):
                return t
        raise AssertionError("a task that fits the node always fits after every reservation")

    def _earliest_gap(self, floor: float, duration: float) -> float:
        """One-core fast path: the first idle gap of length ``duration`` at or after ``floor``."""
        t = floor
        for r in self._near(floor, math.inf):
            if _overlaps(r, t, t + duration):
                t = max(t, r.end)
        return t

    def hold(
        self, until: float, cores: int, holder: str, memory: int = 0, start: float = 0.0
    ) -> None:
        """Reserve ``cores`` and ``memory`` over ``[start, until)`` for another job (a running
        one from 0, a queued one from where the queue starts it)."""
        self.reserve(Reservation(start, until, cores, memory, holder))

    def unreserve(self, reservation: Reservation) -> None:
        """Drop ``reservation`` (a tentative one: duplication tries a copy, then undoes it)."""
        key = (reservation.start, reservation.end)
        index = bisect.bisect_left(self._keys, key)
        while self.reservations[index] != reservation:
            index += 1  # equal keys: find the very one (IndexError if it is absent)
        del self.reservations[index]
        del self._keys[index]

    def reserve(self, reservation: Reservation) -> None:
        key = (reservation.start, reservation.end)
        index = bisect.bisect_right(self._keys, key)
        self.reservations.insert(index, reservation)
        self._keys.insert(index, key)
        self._longest = max(self._longest, reservation.end - reservation.start)
