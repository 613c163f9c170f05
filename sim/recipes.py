"""Realistic workflows from WfCommons' recipes (WfChef/WfGen), converted through our reader.

WfCommons draws from Python's global ``random`` and NumPy's global state (through
``scipy.stats``); we seed both with ``seed`` for the call and restore them afterwards, so a
seed always yields the same workflow and callers' random streams are left untouched. File ids
are ``uuid4`` strings (not seedable), so they are renamed after their producer (or first
reader) to keep the output deterministic. Nothing is downloaded: recipes ship their data in
the package. wfcommons (pandas, scipy) is imported on first use, which takes 2-4 s.

``num_tasks`` is an *upper bound*: WfCommons grows a real base graph by duplicating
microstructures and may stop a few tasks short. Below a recipe's smallest base graph it cannot
generate at all; we then raise :class:`InputError` naming the minimum rather than silently
generating something bigger than asked.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from importlib import resources
from typing import Any

from sim.errors import InputError
from sim.model import Workflow
from sim.wfformat import workflow_from_dict
from sim.workflow_stats import scale_to_ccr

RECIPES: dict[str, str] = {
    "montage": "MontageRecipe",
    "epigenomics": "EpigenomicsRecipe",
    "genome": "GenomeRecipe",
    "seismology": "SeismologyRecipe",
    "soykb": "SoykbRecipe",
    "srasearch": "SrasearchRecipe",
    "blast": "BlastRecipe",
    "bwa": "BwaRecipe",
    "cycles": "CyclesRecipe",
}
"""Our recipe names -> WfCommons recipe classes. Rnaseq is left out: its graphs have no edges."""

_MAX_SEED = 2**32 - 1  # NumPy's legacy global seeding accepts 32-bit seeds only
_UUID_PREFIX = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@cache
def recipe_minimum_tasks(recipe: str) -> int:
    """Smallest ``num_tasks`` WfCommons accepts for ``recipe``: its smallest base graph.

    Read from the recipe's shipped ``microstructures/summary.json`` (a pure function of the
    installed package, so caching it does not affect determinism).
    """
    _check_recipe(recipe)
    package = f"wfcommons.wfchef.recipes.{recipe}"
    summary_file = resources.files(package) / "microstructures" / "summary.json"
    summary = json.loads(summary_file.read_text())
    return min(int(graph["order"]) for graph in summary["base_graphs"].values())


def generate_recipe(
    recipe: str, num_tasks: int, seed: int, *, ccr: float | None = None
) -> Workflow:
    """A synthetic ``recipe`` workflow of at most ``num_tasks`` tasks, deterministic in ``seed``.

    With ``ccr`` the file sizes are rescaled to that communication-to-computation ratio on the
    reference platform; otherwise WfCommons' own sizes are kept.
    """
    _check_recipe(recipe)
    problems = []
    minimum = recipe_minimum_tasks(recipe)
    if num_tasks < minimum:
        problems.append(
            f"{recipe} needs at least {minimum} tasks (WfCommons' smallest "
            f"{recipe} base graph), got {num_tasks}"
        )
    if not 0 <= seed <= _MAX_SEED:
        problems.append(f"seed must be in 0..{_MAX_SEED}, got {seed}")
    if problems:
        raise InputError(recipe, problems)
    doc = _wfcommons_instance(recipe, num_tasks, seed)
    doc["name"] = f"{recipe}-{num_tasks}"
    doc["description"] = f"WfCommons {recipe} recipe, at most {num_tasks} tasks, seed {seed}"
    workflow = workflow_from_dict(_rename_files(doc), f"{recipe} (wfcommons)")
    return workflow if ccr is None else scale_to_ccr(workflow, ccr)


def _check_recipe(recipe: str) -> None:
    if recipe not in RECIPES:
        raise InputError(recipe, [f"unknown recipe {recipe!r} (recipes: {', '.join(RECIPES)})"])


def _wfcommons_instance(recipe: str, num_tasks: int, seed: int) -> dict[str, Any]:
    """WfCommons' WfFormat document, generated with both global generators seeded."""
    import numpy as np
    from wfcommons.wfchef import recipes as wfchef_recipes

    recipe_class = getattr(wfchef_recipes, RECIPES[recipe])
    python_state, numpy_state = random.getstate(), np.random.get_state()
    try:
        random.seed(seed)
        np.random.seed(seed)
        instance = recipe_class.from_num_tasks(num_tasks).build_workflow()
        instance.generate_json()
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
    document: dict[str, Any] = instance.workflow_json
    return document


def _rename_files(doc: dict[str, Any]) -> dict[str, Any]:
    """Replace uuid file ids by ``<task>.out<k><suffix>`` / ``<task>.in<k><suffix>``.

    Outputs are named after their producer, workflow inputs after their first reader; the
    suffix WfCommons appended to the uuid (an extension such as ``.fits``) is kept.
    """
    spec = doc["workflow"]["specification"]
    new_id: dict[str, str] = {}
    for task in spec["tasks"]:
        for k, file_id in enumerate(task.get("outputFiles", [])):
            new_id.setdefault(file_id, f"{task['id']}.out{k}{_suffix(file_id)}")
    for task in spec["tasks"]:
        for k, file_id in enumerate(task.get("inputFiles", [])):
            new_id.setdefault(file_id, f"{task['id']}.in{k}{_suffix(file_id)}")
    for task in spec["tasks"]:
        for key in ("inputFiles", "outputFiles"):
            task[key] = [new_id[f] for f in task.get(key, [])]
    spec["files"] = [{**f, "id": new_id.get(f["id"], f["id"])} for f in spec.get("files", [])]
    return doc


def _suffix(file_id: str) -> str:
    match = _UUID_PREFIX.match(file_id)
    suffix = file_id[match.end() :] if match else ""
    return suffix if not suffix or suffix.startswith(".") else "." + suffix
