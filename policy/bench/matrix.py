"""The benchmark matrix: which workflows, on which platforms, with which seeds.

Sources are small frozen descriptions (a recipe and size, a file, a platform spec), cheap to
send to worker processes, which build the actual objects. Everything derives from the seed, so a
matrix is reproducible: recipe workflows and generated platforms take the instance's seed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from sim.errors import InputError
from sim.model import Platform, Workflow

PLATFORM_KINDS = ("hetero", "homo", "gpu")
"""Generated platform kinds: heterogeneous or homogeneous clusters, or a heterogeneous GPU
cluster (``sim.platforms.gpu_cluster_spec``)."""


class BenchSpecError(InputError):
    """A benchmark matrix that cannot be built (unknown recipe, bad platform spec...)."""

    kind = "benchmark"


@dataclass(frozen=True, slots=True)
class WorkflowSource:
    """A recipe with a task budget (built per seed) or a WfFormat file (the same every seed)."""

    kind: Literal["recipe", "file"]
    name: str
    size: int = 0

    @property
    def family(self) -> str:
        return self.name if self.kind == "recipe" else Path(self.name).stem

    @property
    def label(self) -> str:
        return f"{self.name}:{self.size}" if self.kind == "recipe" else Path(self.name).name

    def build(self, seed: int) -> Workflow:
        if self.kind == "recipe":
            from sim.recipes import generate_recipe

            return generate_recipe(self.name, self.size, seed)
        from sim.wfformat import read_workflow

        return read_workflow(self.name)


@dataclass(frozen=True, slots=True)
class PlatformSource:
    """A generated platform ``kind:nodes`` (e.g. ``hetero:16``) or a platform file."""

    kind: Literal["spec", "file"]
    name: str

    @property
    def label(self) -> str:
        return self.name if self.kind == "spec" else Path(self.name).name

    def build(self, seed: int) -> Platform:
        from sim.platforms import ClusterSpec, generate_platform, gpu_cluster_spec, load_platform

        if self.kind == "file":
            return load_platform(self.name)
        kind, _, nodes = self.name.partition(":")
        if kind == "gpu":
            return generate_platform(gpu_cluster_spec(int(nodes)), seed=seed)
        spec = ClusterSpec(nodes=int(nodes), heterogeneous=kind == "hetero")
        return generate_platform(spec, seed=seed)


@dataclass(frozen=True, slots=True)
class Instance:
    """One cell of the matrix: a workflow on a platform under one seed."""

    workflow: WorkflowSource
    platform: PlatformSource
    seed: int

    @property
    def id(self) -> str:
        return f"{self.workflow.label}|{self.platform.label}|seed{self.seed}"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Instance:
        """The inverse of ``asdict(instance)``."""
        return cls(
            WorkflowSource(**data["workflow"]),
            PlatformSource(**data["platform"]),
            int(data["seed"]),
        )


def parse_recipes(text: str) -> list[WorkflowSource]:
    """``"montage:200,genome:100"`` -> recipe sources; every bad item is reported at once."""
    from sim.recipes import RECIPES

    sources, problems = [], []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, size = item.partition(":")
        if name not in RECIPES:
            problems.append(f"unknown recipe {name!r} (recipes: {', '.join(RECIPES)})")
        elif not size.isdigit() or int(size) < 1:
            problems.append(f"recipe {item!r} needs a task count, e.g. {name}:200")
        else:
            sources.append(WorkflowSource("recipe", name, int(size)))
    if problems:
        raise BenchSpecError("--recipes", problems)
    return sources


def parse_workflow_files(paths: list[str]) -> list[WorkflowSource]:
    """Files and directories (every ``*.json`` inside, sorted) -> file sources."""
    sources, problems = [], []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                problems.append(f"directory {raw!r} holds no .json workflow")
            sources += [WorkflowSource("file", str(p)) for p in found]
        elif path.is_file():
            sources.append(WorkflowSource("file", str(path)))
        else:
            problems.append(f"no such workflow file or directory {raw!r}")
    if problems:
        raise BenchSpecError("--workflows", problems)
    return sources


def parse_platforms(text: str) -> list[PlatformSource]:
    """``"hetero:8,hetero:16"`` (generated) or platform file paths, comma-separated."""
    sources, problems = [], []
    for item in filter(None, (part.strip() for part in text.split(","))):
        if Path(item).is_file():
            sources.append(PlatformSource("file", item))
            continue
        kind, sep, nodes = item.partition(":")
        if not sep or not nodes.isdigit() or kind not in PLATFORM_KINDS:
            problems.append(
                f"platform {item!r} is neither a file nor KIND:NODES with KIND in "
                f"{', '.join(PLATFORM_KINDS)} (e.g. hetero:16)"
            )
        else:
            sources.append(PlatformSource("spec", item))
    if problems:
        raise BenchSpecError("--platforms", problems)
    return sources


def build_matrix(
    workflows: list[WorkflowSource], platforms: list[PlatformSource], seeds: int
) -> list[Instance]:
    """Every workflow x platform x seed, in a fixed order."""
    if not workflows or not platforms or seeds < 1:
        raise BenchSpecError("matrix", ["need at least one workflow, one platform and one seed"])
    return [Instance(w, p, s) for w in workflows for p in platforms for s in range(seeds)]


def content_digest(obj: Workflow | Platform) -> str:
    """sha256 of the object's fields as canonical JSON: identical instances hash alike."""
    text = json.dumps(asdict(obj), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
