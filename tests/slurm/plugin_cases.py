"""Jobs and comments for testing job_submit.lua: deterministic fuzz, a reference, a Lua runner.

The cases mirror the local test cluster (scripts/slurm-cluster): partitions ``debug`` (n1-n4,
default) and ``small`` (n1-n2); nodes n1, n2 (2 cores), n3 (4), n4 (8 cores, 2 GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim.model import Node, Platform
from wass_chat.slurm.plugin.bench import HarnessOutcome, run_harness
from wass_chat.slurm.plugin.head import PolicyHead, head_from_arrays, inference_token
from wass_chat.slurm.submission import decision_token

NO_VAL = 4294967294
NO_VAL16 = 65534
NO_VAL64 = 18446744073709551614

CLUSTER = Platform(
    "wass-test",
    (
        Node("n1", 2, memory=2000 * 2**20, features=("small",)),
        Node("n2", 2, memory=2000 * 2**20, features=("small",)),
        Node("n3", 4, memory=4000 * 2**20, features=("medium",)),
        Node("n4", 8, memory=8000 * 2**20, gpus=2, features=("large",)),
    ),
)
PARTITIONS = {"debug": ("n1", "n2", "n3", "n4"), "small": ("n1", "n2")}
PART_LIST_LUA = (
    '{ debug = {name = "debug", nodes = "n[1-4]", flag_default = 1},'
    ' small = {name = "small", nodes = "n[1-2]", flag_default = 0} }'
)


@dataclass
class Job:
    """A job descriptor as the plugin sees it (unset fields carry Slurm's NO_VAL values)."""

    comment: str | None
    partition: str | None = None
    cores: int = 1
    memory_mb: int | None = 64
    gpus: int = 0
    min_nodes: int = 1
    expect_node: str | None = None
    """The node the plugin must choose (None: the job must stay unchanged)."""
    extra: dict[str, object] = field(default_factory=dict)

    def fits(self, node: str) -> bool:
        n = CLUSTER.node_by_name[node]
        in_partitions = node in PARTITIONS[self.partition or "debug"]
        memory_ok = self.memory_mb is None or self.memory_mb <= n.memory // 2**20
        return in_partitions and self.cores <= n.cores and memory_ok and self.gpus <= n.gpus

    def sbatch_argv(self) -> list[str]:
        """The same request as sbatch arguments (for the real-cluster sample)."""
        argv = ["-N1", "--ntasks=1", f"--cpus-per-task={self.cores}", "--wrap=true"]
        if self.comment is not None:
            argv.append(f"--comment={self.comment}")
        if self.partition:
            argv.append(f"--partition={self.partition}")
        if self.memory_mb is not None:
            argv.append(f"--mem={self.memory_mb}M")
        if self.gpus:
            argv.append(f"--gres=gpu:{self.gpus}")
        return argv


def lua_string(text: str) -> str:
    """A Lua string literal for any text (bytes outside printable ASCII as decimal escapes)."""
    out = []
    for byte in text.encode("utf-8", "surrogateescape"):
        ch = chr(byte)
        if 32 <= byte < 127 and ch not in '"\\':
            out.append(ch)
        else:
            out.append(f"\\{byte:03d}")
    return '"' + "".join(out) + '"'


def job_to_lua(job: Job) -> str:
    fields = {
        "min_nodes": job.min_nodes,
        "cpus_per_task": job.cores,
        "num_tasks": 1,
        "pn_min_cpus": job.cores,
        "min_cpus": job.cores,
        "pn_min_memory": job.memory_mb if job.memory_mb is not None else NO_VAL64,
    }
    parts = [f"{k} = {v}" for k, v in fields.items()]
    if job.comment is not None:
        parts.append(f"comment = {lua_string(job.comment)}")
    if job.partition:
        parts.append(f"partition = {lua_string(job.partition)}")
    if job.gpus:
        parts.append(f'tres_per_node = "gres:gpu:{job.gpus}"')
    return "{" + ", ".join(parts) + "}"


Outcome = HarnessOutcome


def run_plugin(plugin: Path, jobs: list[Job], workdir: Path) -> list[Outcome]:
    """Run every job through the plugin in one lua5.1 process."""
    cases = workdir / "cases.lua"
    body = ",\n".join(job_to_lua(j) for j in jobs)
    cases.write_text(f"return {{ parts = {PART_LIST_LUA}, jobs = {{\n{body}\n}} }}\n")
    outcomes = run_harness(plugin, cases)
    assert len(outcomes) == len(jobs)
    return outcomes


def random_head(rng: np.random.Generator, dim: int = 7, hidden: int = 16) -> PolicyHead:
    return head_from_arrays(
        rng.normal(size=(hidden, dim)),
        rng.normal(size=hidden),
        rng.normal(size=hidden),
        rng.normal(),
    )


def _random_text(rng: np.random.Generator) -> str:
    alphabet = "wass:v1;=,node=n1n2n3n4modeinferxcanddim0123456789.-eE+ \t\n%[]{}\"\\'\x00\xff"
    length = int(rng.integers(0, 120))
    return "".join(alphabet[i] for i in rng.integers(0, len(alphabet), length))


def _mutate(token: str, rng: np.random.Generator) -> str:
    """A damaged token: truncated, a character replaced/inserted/dropped, a field doubled."""
    kind = int(rng.integers(0, 6))
    i = int(rng.integers(0, len(token)))
    junk = "=;,:[]%x\x00é9-"
    c = junk[int(rng.integers(0, len(junk)))]
    if kind == 0:
        return token[:i]
    if kind == 1:
        return token[:i] + c + token[i + 1 :]
    if kind == 2:
        return token[:i] + c + token[i:]
    if kind == 3:
        return token[:i] + token[i + 1 :]
    if kind == 4:
        return token + ";node=n4"
    return "prefix text " + token + " trailing;node=n9"


def fuzz_jobs(count: int, head: PolicyHead, seed: int = 7) -> list[Job]:
    """``count`` jobs: random text, damaged tokens, and valid tokens with known answers."""
    rng = np.random.default_rng(seed)
    names = [*CLUSTER.node_names, "n5", "nX", "n1,n2", "", "n[1-2]", "../etc"]
    jobs: list[Job] = []
    for k in range(count):
        job = Job(
            comment=None,
            partition=[None, None, "small", "debug"][int(rng.integers(0, 4))],
            cores=[1, 1, 2, 4, 8, 16][int(rng.integers(0, 6))],
            memory_mb=[64, 64, 3000, None][int(rng.integers(0, 4))],
            gpus=[0, 0, 0, 1][int(rng.integers(0, 4))],
        )
        if not any(job.fits(n) for n in PARTITIONS[job.partition or "debug"]):
            job.cores = 1  # keep every job acceptable to plain Slurm
            job.gpus = 0
        node = names[int(rng.integers(0, len(names)))]
        kind = k % 5
        if kind == 0:
            job.comment = _random_text(rng)
        elif kind == 1:
            token = decision_token(f"r{k}", f"t{k}", node)
            job.comment = token
            if node in CLUSTER.node_by_name and job.fits(node):
                job.expect_node = node
        elif kind == 2:
            job.comment = _mutate(decision_token(f"r{k}", f"t{k}", node), rng)
        else:
            cand = list(rng.permutation(CLUSTER.node_names)[: int(rng.integers(1, 5))])
            x = rng.normal(size=(len(cand), head.dim))
            token = inference_token(f"r{k}", f"t{k}", head, cand, x)
            if kind == 3:
                job.comment = token
                eligible = [i for i, n in enumerate(cand) if job.fits(n)]
                if eligible:
                    scores = head.scores(x[eligible])
                    job.expect_node = cand[eligible[int(np.argmax(scores))]]
            else:
                job.comment = _mutate(token, rng)
        jobs.append(job)
    return jobs
