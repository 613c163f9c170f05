"""Bandwidth sharing for the simulator: file transfers as flows over full-duplex NICs.

Resources are indexed: node ``n``'s uplink is ``n``, its downlink ``N + n``, and the shared
filesystem's link is ``2N``. A transfer from node (or filesystem) ``s`` to node ``d`` is a flow
over ``s``'s uplink and ``d``'s downlink. Every transfer first waits ``latency`` without using
bandwidth, then moves its bytes.

* :class:`FairNetwork` shares each resource among its flows with max-min fairness (progressive
  filling), recomputed only over the connected component of flows touched at an instant. This is
  SimGrid's CM02 model with equal flow weights, which is what the cross-check relies on.
* :class:`IdealNetwork` gives every transfer its own path: ``latency + size / min(bandwidths)``.

Both expose the same four calls to the engine: :meth:`start`, :meth:`next_time`,
:meth:`pop_finished` (transfers that end at the current instant) and :meth:`settle` (recompute
rates once per instant, after all starts and ends at that instant are known).
"""

from __future__ import annotations

import heapq
import math
from typing import Protocol

from sim.compiled import CompiledPlatform

FROM_SHARED_FS = -1
"""Source index of a transfer that reads from the shared filesystem (row ``-1``, the last, of
:attr:`CompiledPlatform.link_bandwidth`)."""

_ACTIVATE = 0
_FINISH = 1


class Network(Protocol):
    """What the engine needs from a network model."""

    def start(self, transfer: int, size: int, source: int, destination: int, now: float) -> None:
        """Begin moving ``size`` bytes; ``transfer`` ids are dense, assigned by the caller."""
        ...

    def next_time(self) -> float:
        """Time of the next transfer event, ``inf`` when none is pending."""
        ...

    def pop_finished(self, now: float) -> list[int]:
        """Transfers that complete at ``now`` (also advances flows whose latency elapsed)."""
        ...

    def settle(self, now: float) -> None:
        """Recompute bandwidth shares after this instant's starts and ends."""
        ...

    def copy(self) -> Network:
        """An independent copy in the same state (a forked run continues on it)."""
        ...


def uncontended_duration(
    platform: CompiledPlatform, size: int, source: int, destination: int
) -> float:
    """``latency + size / bottleneck`` for a transfer alone on the network."""
    return platform.latency + size / platform.link_bandwidth[source][destination]


class IdealNetwork:
    """No contention: each transfer takes its uncontended duration."""

    def __init__(self, platform: CompiledPlatform) -> None:
        self._platform = platform
        self._heap: list[tuple[float, int]] = []

    def start(self, transfer: int, size: int, source: int, destination: int, now: float) -> None:
        end = now + uncontended_duration(self._platform, size, source, destination)
        heapq.heappush(self._heap, (end, transfer))

    def next_time(self) -> float:
        return self._heap[0][0] if self._heap else math.inf

    def pop_finished(self, now: float) -> list[int]:
        heap = self._heap
        done = []
        while heap and heap[0][0] <= now:
            done.append(heapq.heappop(heap)[1])
        return done

    def settle(self, now: float) -> None:
        """Nothing to share."""

    def copy(self) -> IdealNetwork:
        twin = IdealNetwork(self._platform)
        twin._heap = self._heap[:]
        return twin


class _FlowGroup:
    """Active flows sharing one (uplink, downlink) pair: max-min gives them one common rate.

    Instead of tracking each flow's remaining bytes, the group tracks ``served``: bytes delivered
    to each of its flows since the group was created. A flow joining with ``size`` bytes finishes
    when ``served`` reaches ``served_at_join + size``; a rate change then costs one update per
    group, not per flow (the processor-sharing "virtual time" trick).
    """

    __slots__ = ("count", "down", "last", "rate", "served", "targets", "up", "version")

    def __init__(self, up: int, down: int) -> None:
        self.up = up
        self.down = down
        self.count = 0
        self.rate = 0.0
        self.served = 0.0
        self.last = 0.0
        self.version = 0
        self.targets: list[tuple[float, int]] = []  # heap of (served target, transfer)

    def advance(self, now: float) -> None:
        self.served += self.rate * (now - self.last)
        self.last = now

    def copy(self) -> _FlowGroup:
        twin = _FlowGroup(self.up, self.down)
        twin.count, twin.rate, twin.served = self.count, self.rate, self.served
        twin.last, twin.version, twin.targets = self.last, self.version, self.targets[:]
        return twin


class FairNetwork:
    """Max-min fair sharing of NIC uplinks, downlinks and the shared-filesystem link."""

    def __init__(self, platform: CompiledPlatform) -> None:
        n = platform.n_nodes
        self._n_nodes = n
        self._fs = 2 * n
        self._latency = platform.latency
        self._capacity = [*platform.bandwidth, *platform.bandwidth, platform.fs_bandwidth]
        self._groups_on: list[set[_FlowGroup]] = [set() for _ in self._capacity]
        self._groups: dict[int, _FlowGroup] = {}
        self._active_groups: set[_FlowGroup] = set()
        self._dirty: set[int] = set()
        self._pending: dict[int, tuple[int, int, int]] = {}  # transfer -> (up, down, size)
        # (time, sequence, kind, transfer or group key, version); sequence orders equal times.
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._seq = 0
        self._active = [0] * len(self._capacity)  # flows in bandwidth phase, per resource
        self._cap_left = [0.0] * len(self._capacity)
        self._unfrozen = [0] * len(self._capacity)

    def copy(self) -> FairNetwork:
        """Same flows, groups, rates and pending events, sharing nothing mutable.

        Iteration order over the copied group sets may differ from the original's; it never
        changes a result: each group on a resource has its own other end, and events at one
        instant are order-independent (docs/simulator.md, determinism).
        """
        twin = FairNetwork.__new__(FairNetwork)
        twin._n_nodes, twin._fs, twin._latency = self._n_nodes, self._fs, self._latency
        twin._capacity = self._capacity
        twin._groups = {key: group.copy() for key, group in self._groups.items()}
        width = len(self._capacity)
        same = {
            group: twin._groups[group.up * width + group.down] for group in self._groups.values()
        }
        twin._groups_on = [{same[g] for g in on} for on in self._groups_on]
        twin._active_groups = {same[g] for g in self._active_groups}
        twin._dirty = self._dirty.copy()
        twin._pending = self._pending.copy()
        twin._heap = self._heap[:]
        twin._seq = self._seq
        twin._active = self._active[:]
        twin._cap_left = self._cap_left[:]
        twin._unfrozen = self._unfrozen[:]
        return twin

    def start(self, transfer: int, size: int, source: int, destination: int, now: float) -> None:
        up = self._fs if source == FROM_SHARED_FS else source
        self._pending[transfer] = (up, self._n_nodes + destination, size)
        self._seq += 1
        heapq.heappush(self._heap, (now + self._latency, self._seq, _ACTIVATE, transfer, 0))

    def next_time(self) -> float:
        heap, groups = self._heap, self._groups
        while heap:
            _, _, kind, key, version = heap[0]
            if kind == _FINISH and groups[key].version != version:
                heapq.heappop(heap)  # superseded by a later rate change
                continue
            return heap[0][0]
        return math.inf

    def pop_finished(self, now: float) -> list[int]:
        heap, dirty = self._heap, self._dirty
        done: list[int] = []
        while self.next_time() <= now:
            _, _, kind, key, _ = heapq.heappop(heap)
            if kind == _ACTIVATE:
                up, down, size = self._pending.pop(key)
                if size <= 0:
                    done.append(key)
                    continue
                group = self._join(key, up, down, size, now)
            else:
                group = self._groups[key]
                group.advance(now)
                targets = group.targets
                reached = targets[0][0]
                while targets and targets[0][0] <= reached:
                    done.append(heapq.heappop(targets)[1])
                    group.count -= 1
                    self._active[group.up] -= 1
                    self._active[group.down] -= 1
                group.served = reached  # snap: no drift from repeated rate updates
                if group.count == 0:
                    self._groups_on[group.up].discard(group)
                    self._groups_on[group.down].discard(group)
                    self._active_groups.discard(group)
                    group.rate = 0.0
                    group.version += 1
            dirty.add(group.up)
            dirty.add(group.down)
        return done

    def _join(self, transfer: int, up: int, down: int, size: int, now: float) -> _FlowGroup:
        key = up * len(self._capacity) + down
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _FlowGroup(up, down)
        group.advance(now)
        heapq.heappush(group.targets, (group.served + size, transfer))
        if group.count == 0:
            self._groups_on[up].add(group)
            self._groups_on[down].add(group)
            self._active_groups.add(group)
        group.count += 1
        self._active[up] += 1
        self._active[down] += 1
        return group

    def settle(self, now: float) -> None:
        """Recompute every active flow group's max-min rate; reschedule those that changed.

        Filling runs over all active resources rather than just the component touched at this
        instant: components are independent and filling treats each one with the same
        arithmetic in the same order, so untouched groups get bit-identical rates (and no new
        event), and the breadth-first search for the component is saved.
        """
        if not self._dirty:
            return
        self._dirty.clear()
        new_rate = self._progressive_filling()
        width = len(self._capacity)
        for group in self._active_groups:
            r = new_rate[group]
            if r == group.rate:
                continue
            group.advance(now)
            group.rate = r
            group.version += 1
            self._seq += 1
            end = now + (group.targets[0][0] - group.served) / r
            key = group.up * width + group.down
            heapq.heappush(self._heap, (end, self._seq, _FINISH, key, group.version))

    def _progressive_filling(self) -> dict[_FlowGroup, float]:
        """Max-min fair rate of every active flow group (progressive filling).

        Repeatedly take the resource offering the smallest fair share, give that share to its
        unfrozen groups' flows, and charge it to the other end of each.
        """
        cap_left, unfrozen, groups_on = self._cap_left, self._unfrozen, self._groups_on
        capacity, active = self._capacity, self._active
        heap: list[tuple[float, int]] = []
        for r, count in enumerate(active):
            if count:
                cap_left[r] = capacity[r]
                unfrozen[r] = count
                heap.append((capacity[r] / count, r))
        heapq.heapify(heap)
        push, pop = heapq.heappush, heapq.heappop
        rates: dict[_FlowGroup, float] = {}
        touched: set[int] = set()
        while heap:
            share, r = pop(heap)
            count = unfrozen[r]
            if count == 0 or share != cap_left[r] / count:
                continue  # stale entry: this resource's share changed since it was pushed
            unfrozen[r] = 0
            for group in groups_on[r]:
                if group in rates:
                    continue
                rates[group] = share
                other = group.down if group.up == r else group.up
                n = group.count
                left = cap_left[other] - share * n
                cap_left[other] = left if left > 0.0 else 0.0
                unfrozen[other] -= n
                touched.add(other)
            for other in touched:
                if unfrozen[other]:
                    push(heap, (cap_left[other] / unfrozen[other], other))
            touched.clear()
        return rates
