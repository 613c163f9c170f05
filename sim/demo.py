"""The embedded demo: a heterogeneous 8-node platform and a few workflows, shipped in the
package (``sim/data``) so ``make run``, the TUI and the tests work offline with no set-up.

The workflow files are generated once by ``scripts/make-demo-assets`` and committed; loading
them is a parse, not a generation, so they are identical on every machine.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from sim.errors import InputError
from sim.model import Platform, Workflow
from sim.platforms import loads_platform
from sim.wfformat import loads_workflow

DEMO_PLATFORM_FILE = "demo-platform.yaml"
DEMO_WORKFLOWS: dict[str, str] = {
    "genomics-49": "The WASS-RAG 49-task genomics pipeline (CCR 1 on the reference platform).",
    "montage-60": "WfCommons Montage (astronomy mosaic), ~60 tasks, WfCommons' own file sizes.",
    "epigenomics-50": "WfCommons Epigenomics, ~50 tasks, WfCommons' own file sizes.",
    "fork-join-20": "A 20-task fork-join with heavy data (CCR 2).",
}
"""Demo workflow name -> one-line description; the first is the default."""


def _asset(name: str) -> str:
    return resources.files("sim.data").joinpath(name).read_text(encoding="utf-8")


def workflow_asset_file(name: str) -> str:
    """File name (inside ``sim/data``) of demo workflow ``name``."""
    return f"workflow-{name}.json"


@cache
def demo_platform() -> Platform:
    """The demo cluster: 8 heterogeneous nodes (4-32 cores), two with GPUs."""
    return loads_platform(_asset(DEMO_PLATFORM_FILE), subject=f"sim/data/{DEMO_PLATFORM_FILE}")


def demo_workflow_names() -> tuple[str, ...]:
    """Names of the shipped demo workflows, default first."""
    return tuple(DEMO_WORKFLOWS)


@cache
def demo_workflow(name: str = "genomics-49") -> Workflow:
    """A shipped demo workflow by name (see :func:`demo_workflow_names`)."""
    if name not in DEMO_WORKFLOWS:
        raise InputError(name, [f"no demo workflow {name!r} (demos: {', '.join(DEMO_WORKFLOWS)})"])
    file_name = workflow_asset_file(name)
    return loads_workflow(_asset(file_name), subject=f"sim/data/{file_name}")


DEMO_PREFIX = "demo:"
"""``demo:<name>`` names a shipped demo workflow wherever a workflow file is expected."""


def resolve_workflow(spec: str) -> Workflow:
    """A workflow from a WfFormat file path or ``demo:<name>``."""
    from sim.wfformat import read_workflow

    if spec.startswith(DEMO_PREFIX):
        return demo_workflow(spec[len(DEMO_PREFIX) :])
    return read_workflow(spec)


def resolve_platform(spec: str | None) -> Platform:
    """A platform from a YAML/JSON file path; None or ``demo`` means the demo platform."""
    from sim.platforms import load_platform

    if spec is None or spec == "demo":
        return demo_platform()
    return load_platform(spec)
