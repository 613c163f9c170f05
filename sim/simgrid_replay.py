"""The SimGrid side of the cross-check: replay one static schedule inside a SimGrid engine.

Runs in its own process (SimGrid allows one engine per process; a second aborts it), driven by
:mod:`sim.simgrid_backend`, which sends a job as JSON and reads the records back. Nothing here
imports the rest of ``sim``: the job is plain data.

How our model maps onto SimGrid 3.32 (actor/mailbox API):

* Network model ``CM02`` with every correction off: latency and bandwidth factors 1, ``weight-S``
  0, ``TCP-gamma`` 0 (no window bound), no cross-traffic. Flows then share links max-min fairly
  with equal weights, after paying their route latency, which is our ``fair`` model.
* A star zone: each node is a host (``cores`` cores at ``speed``) with a split-duplex NIC link
  (up and down each at ``bandwidth``, latency/2 each so every route has latency ``latency``); the
  shared filesystem is one more host whose link has the filesystem's bandwidth.
* ``ideal``: each transfer gets a private pair of proxy hosts whose links have the source's and
  the destination's bandwidth, so nothing is shared.
* Core, memory and GPU reservation and the per-node start order are enforced by a controller
  actor applying the same rules as :mod:`sim.engine`; a task is an actor executing
  ``work / cores`` flop on its host (each exec uses one core at ``speed``, so ``cores`` cores'
  worth of work takes ``work / (speed * cores)``); a transfer is an actor running
  ``Comm.sendto``.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

_TASK_DONE = 0
_TRANSFER_DONE = 1
_FS = -1


def replay(job: dict[str, Any]) -> dict[str, Any]:
    """Run ``job`` (see :func:`sim.simgrid_backend.encode_job`) and return its records."""
    import simgrid as sg

    wall_start = time.perf_counter()
    engine = sg.Engine(
        [
            "wass-chat-simgrid",
            "--cfg=network/model:CM02",
            "--cfg=network/latency-factor:1.0",
            "--cfg=network/bandwidth-factor:1.0",
            "--cfg=network/weight-S:0",
            "--cfg=network/TCP-gamma:0",
            "--cfg=network/crosstraffic:0",
            "--log=root.thresh:critical",
        ]
    )
    replayer = _Replayer(sg, job)
    sg.Actor.create("controller", replayer.fs_host, replayer.controller)
    engine.run()
    wall = time.perf_counter() - wall_start
    if replayer.finished != len(job["tasks"]):
        raise RuntimeError(f"SimGrid replay stalled after {replayer.finished} tasks")
    return {
        "tasks": replayer.task_records,
        "transfers": replayer.transfer_records,
        "wall_seconds": wall,
    }


class _Replayer:
    """Platform construction plus the controller and helper actors of one replay."""

    def __init__(self, sg: Any, job: dict[str, Any]) -> None:
        self.sg = sg
        self.tasks: list[dict[str, Any]] = job["tasks"]
        self.file_size: list[int] = job["file_size"]
        self.nodes: list[dict[str, Any]] = job["nodes"]
        self.ideal = job["network_model"] == "ideal"
        n_tasks, n_nodes = len(self.tasks), len(self.nodes)
        self.node_of = [t["node"] for t in self.tasks]
        self.queues: list[list[int]] = job["order"]
        self.heads = [0] * n_nodes
        self.free_cores = [n["cores"] for n in self.nodes]
        self.free_memory = [n["memory"] for n in self.nodes]
        self.free_gpus = [n["gpus"] for n in self.nodes]
        self.parents_left = [len(t["parents"]) for t in self.tasks]
        self.children: list[list[int]] = [[] for _ in range(n_tasks)]
        for i, t in enumerate(self.tasks):
            for p in t["parents"]:
                self.children[p].append(i)
        self.producer = [-1] * len(self.file_size)
        for i, t in enumerate(self.tasks):
            for f in t["outputs"]:
                self.producer[f] = i
        self.missing = [0] * n_tasks
        self.waiters: dict[tuple[int, int], list[int]] = {}
        self.destinations: list[list[int]] = [[] for _ in self.file_size]
        for i, t in enumerate(self.tasks):
            node = self.node_of[i]
            for f in t["inputs"]:
                p = self.producer[f]
                if p >= 0 and self.node_of[p] == node:
                    continue
                key = (f, node)
                if key not in self.waiters:
                    self.waiters[key] = []
                    self.destinations[f].append(node)
                self.waiters[key].append(i)
                self.missing[i] += 1
        self.events: deque[tuple[int, int]] = deque()
        self.wakeup = sg.Semaphore(0)
        self.finished = 0
        self.task_records: list[list[float]] = []
        self.transfer_records: list[list[float]] = []
        self._build_platform(job)

    # --- platform ----------------------------------------------------------------------------
    def _build_platform(self, job: dict[str, Any]) -> None:
        sg = self.sg
        zone = sg.NetZone.create_star_zone("cluster")
        half_latency = job["latency"] / 2
        self._zone, self._half_latency = zone, half_latency
        self.hosts = [
            self._host(zone, f"node-{i}", n["speed"], n["cores"], n["bandwidth"])
            for i, n in enumerate(self.nodes)
        ]
        self.fs_host = self._host(zone, "shared-fs", 1e9, 1, job["shared_fs_bandwidth"])
        self.proxies: dict[tuple[int, int], tuple[Any, Any]] = {}
        if self.ideal:
            for f, destinations in enumerate(self.destinations):
                p = self.producer[f]
                source = _FS if p < 0 else self.node_of[p]
                if source == _FS:
                    up = job["shared_fs_bandwidth"]
                else:
                    up = self.nodes[source]["bandwidth"]
                for d in destinations:
                    k = len(self.proxies)
                    self.proxies[(f, d)] = (
                        self._host(zone, f"x{k}-src", 1e9, 1, up),
                        self._host(zone, f"x{k}-dst", 1e9, 1, self.nodes[d]["bandwidth"]),
                    )
        zone.seal()

    def _host(self, zone: Any, name: str, speed: float, cores: int, bandwidth: float) -> Any:
        sg = self.sg
        host = zone.create_host(name, speed)
        host.core_count = cores
        host.seal()
        link = zone.create_split_duplex_link(f"{name}-nic", bandwidth)
        link.set_latency(self._half_latency)
        link.seal()
        route = [sg.LinkInRoute(link, sg.LinkInRoute.Direction.UP)]
        zone.add_route(host.netpoint, None, None, None, route, True)
        return host

    # --- actors ------------------------------------------------------------------------------
    def controller(self) -> None:
        for f, p in enumerate(self.producer):
            if p < 0:
                for d in self.destinations[f]:
                    self._start_transfer(f, _FS, d)
        for node in range(len(self.nodes)):
            self._dispatch(node)
        total = len(self.tasks)
        while self.finished < total:
            self.wakeup.acquire()
            kind, index = self.events.popleft()
            if kind == _TASK_DONE:
                self._task_done(index)
            else:
                self._transfer_done(index)

    def _task_done(self, task: int) -> None:
        self.finished += 1
        node = self.node_of[task]
        t = self.tasks[task]
        self.free_cores[node] += t["cores"]
        self.free_memory[node] += t["memory"]
        self.free_gpus[node] += t["gpus"]
        for f in t["outputs"]:
            for d in self.destinations[f]:
                self._start_transfer(f, node, d)
        dirty = {node}
        for c in self.children[task]:
            self.parents_left[c] -= 1
            if self.parents_left[c] == 0 and self.missing[c] == 0:
                dirty.add(self.node_of[c])
        for n in sorted(dirty):
            self._dispatch(n)

    def _transfer_done(self, transfer: int) -> None:
        f, _, d = (int(x) for x in self.transfer_records[transfer][:3])
        for task in self.waiters.pop((f, d)):
            self.missing[task] -= 1
        self._dispatch(d)

    def _dispatch(self, node: int) -> None:
        queue = self.queues[node]
        while self.heads[node] < len(queue):
            task = queue[self.heads[node]]
            t = self.tasks[task]
            if self.parents_left[task] or self.missing[task]:
                return
            if (
                t["cores"] > self.free_cores[node]
                or t["memory"] > self.free_memory[node]
                or t["gpus"] > self.free_gpus[node]
            ):
                return
            self.free_cores[node] -= t["cores"]
            self.free_memory[node] -= t["memory"]
            self.free_gpus[node] -= t["gpus"]
            self.heads[node] += 1
            record = [task, self.sg.Engine.clock, -1.0]
            self.task_records.append(record)
            flops = t["work"] / t["cores"]
            self.sg.Actor.create(f"t{task}", self.hosts[node], self._run_task, task, flops, record)

    def _run_task(self, task: int, flops: float, record: list[float]) -> None:
        self.sg.this_actor.execute(flops)
        record[2] = self.sg.Engine.clock
        self.events.append((_TASK_DONE, task))
        self.wakeup.release()

    def _start_transfer(self, file: int, source: int, destination: int) -> None:
        index = len(self.transfer_records)
        record = [file, source, destination, self.sg.Engine.clock, -1.0]
        self.transfer_records.append(record)
        if self.ideal:
            src_host, dst_host = self.proxies[(file, destination)]
        else:
            src_host = self.fs_host if source == _FS else self.hosts[source]
            dst_host = self.hosts[destination]
        size = self.file_size[file]
        self.sg.Actor.create(
            f"x{index}", src_host, self._run_transfer, index, src_host, dst_host, size, record
        )

    def _run_transfer(
        self, index: int, src_host: Any, dst_host: Any, size: int, record: list[float]
    ) -> None:
        self.sg.Comm.sendto(src_host, dst_host, size)
        record[4] = self.sg.Engine.clock
        self.events.append((_TRANSFER_DONE, index))
        self.wakeup.release()
