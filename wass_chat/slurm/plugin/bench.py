"""``wass-chat plugin bench``: the plugin's inference mode timed per job in plain Lua 5.1.

Speed is a figure a command prints, not a test's assertion (a loaded machine would fail it).
The bench runs ``job_submit.lua`` in the same interpreter Debian's slurmctld embeds: its
``job_submit_lua.so`` links PUC Lua 5.1 (``liblua5.1.so.0``), not LuaJIT, so ``lua5.1`` here
measures what the controller runs. Each job carries an inference token for a random head of the
learned policy's shape (139 inputs, 64 hidden units) and one feature vector per candidate node;
the harness (``harness.lua``, shared with the plugin's tests) times each ``slurm_job_submit``
call in CPU time, parsing and validation included. The bench also counts the jobs whose node
equals numpy's choice for the same head and features, so a fast but wrong plugin shows.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from sim.errors import InputError, ServiceUnavailable
from sim.model import Node, Platform
from wass_chat.slurm.plugin.head import head_from_arrays, inference_token

LUA = "lua5.1"


def harness_path() -> Path:
    """``harness.lua``: runs the plugin outside slurmctld under a stub ``slurm`` table."""
    return Path(str(files("wass_chat.slurm.plugin").joinpath("harness.lua")))


@dataclass(frozen=True)
class HarnessOutcome:
    """What the plugin did to one job, as the harness reports it."""

    rc: str
    req_nodes: str | None
    changed: tuple[str, ...]
    errors: int
    micros: float
    """CPU time of the ``slurm_job_submit`` call, microseconds."""


def run_harness(plugin: Path, cases: Path) -> list[HarnessOutcome]:
    """Run every job of the ``cases`` chunk through ``plugin`` in one ``lua5.1`` process."""
    if shutil.which(LUA) is None:
        raise ServiceUnavailable(f"{LUA} is not installed (Debian: apt-get install {LUA})")
    done = subprocess.run(
        [LUA, str(harness_path()), str(plugin), str(cases)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]  # one line, not Lua's stack
        raise InputError("plugin", [f"{LUA} could not run it: {first[:300]}"])
    outcomes = []
    for line in done.stdout.splitlines():
        _, rc, req, changed, errors, micros = line.split("\t")
        changes = () if changed == "-" else tuple(changed.split(","))
        node = None if req == "-" else req
        outcomes.append(HarnessOutcome(rc, node, changes, int(errors), float(micros)))
    return outcomes


@dataclass(frozen=True)
class PluginBench:
    """Inference-mode cost per job (CPU microseconds) and agreement with numpy."""

    jobs: int
    candidates: int
    dim: int
    hidden: int
    mean_us: float
    p50_us: float
    p95_us: float
    max_us: float
    agree: int
    """Jobs the plugin pinned to the node numpy's scores choose (should equal ``jobs``)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bench_platform(candidates: int) -> Platform:
    """``candidates`` identical 8-core nodes, so every candidate is eligible for every job."""
    return Platform("plugin-bench", tuple(Node(f"n{i + 1}", 8) for i in range(candidates)))


def bench_inference(
    jobs: int = 300,
    candidates: int = 4,
    dim: int = 139,
    hidden: int = 64,
    seed: int = 3,
    template: str | None = None,
) -> PluginBench:
    """Time ``jobs`` inference-mode submissions through the rendered plugin.

    ``template`` replaces the shipped plugin source (to measure another version of it).
    """
    from wass_chat.slurm.plugin import render_plugin

    problems = [
        f"{name} must be at least 1, got {value}"
        for name, value in (
            ("jobs", jobs),
            ("candidates", candidates),
            ("dim", dim),
            ("hidden", hidden),
        )
        if value < 1
    ]
    if problems:
        raise InputError("plugin bench", problems)
    rng = np.random.default_rng(seed)
    head = head_from_arrays(
        rng.normal(size=(hidden, dim)),
        rng.normal(size=hidden),
        rng.normal(size=hidden),
        rng.normal(),
    )
    platform = bench_platform(candidates)
    names = platform.node_names
    tokens, expected = [], []
    for k in range(jobs):
        x = rng.normal(size=(candidates, dim))
        tokens.append(inference_token("bench", f"t{k}", head, names, x))
        expected.append(names[int(np.argmax(head.scores(x)))])
    job_rows = ",\n".join(
        f'{{min_nodes = 1, num_tasks = 1, cpus_per_task = 1, comment = "{t}"}}' for t in tokens
    )
    parts = f'{{ bench = {{name = "bench", nodes = "{",".join(names)}", flag_default = 1}} }}'
    with tempfile.TemporaryDirectory(prefix="wass-plugin-bench-") as tmp:
        plugin, cases = Path(tmp) / "job_submit.lua", Path(tmp) / "cases.lua"
        text = render_plugin(head, platform, template)
        plugin.write_text(text)
        cases.write_text(f"return {{ parts = {parts}, jobs = {{\n{job_rows}\n}} }}\n")
        outcomes = run_harness(plugin, cases)
    micros = np.array([o.micros for o in outcomes])
    return PluginBench(
        jobs=jobs,
        candidates=candidates,
        dim=dim,
        hidden=hidden,
        mean_us=float(micros.mean()),
        p50_us=float(np.percentile(micros, 50)),
        p95_us=float(np.percentile(micros, 95)),
        max_us=float(micros.max()),
        agree=sum(o.req_nodes == e for o, e in zip(outcomes, expected, strict=True)),
    )
