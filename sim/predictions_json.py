"""Retrieved runtime predictions as plain JSON and back, so they can travel in a file.

Why: ``bench --kb DIR --slurm-array N`` retrieves each instance's
:class:`~sim.uncertainty.RuntimePredictions` in the submitting process (the knowledge base is a
Chroma store on disk that array tasks must not open at once) and writes them into the array's
plan; each task reads back its own instances'. Both directions walk
``dataclasses.fields(RuntimePredictions)``, so a field added to the dataclass travels without a
change here: ``categories`` holds :class:`~sim.uncertainty.CategoryPrediction` objects, every
other field is plain JSON already (numbers, maps of names to numbers). JSON writes a float's
shortest repr, which reads back as the same float, so a task plans on exactly what the
submitter retrieved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any

from sim.errors import InputError
from sim.uncertainty import CategoryPrediction, RuntimePredictions

CATEGORIES = "categories"
"""The one field whose values are objects (:class:`CategoryPrediction`), not plain JSON."""


def predictions_to_json(predictions: RuntimePredictions) -> dict[str, Any]:
    """Every field of ``predictions`` as JSON-ready data (maps become dicts)."""
    doc: dict[str, Any] = {}
    for f in fields(RuntimePredictions):
        value = getattr(predictions, f.name)
        if f.name == CATEGORIES:
            value = {name: asdict(p) for name, p in value.items()}
        elif isinstance(value, Mapping):
            value = dict(value)
        doc[f.name] = value
    return doc


def predictions_from_json(doc: Mapping[str, Any]) -> RuntimePredictions:
    """The inverse of :func:`predictions_to_json`; a missing or unknown field is an InputError
    naming every one (a file written by another version of the dataclass)."""
    names = [f.name for f in fields(RuntimePredictions)]
    problems = [f"missing field {n!r}" for n in names if n not in doc]
    problems += [f"unknown field {k!r}" for k in doc if k not in names]
    if problems:
        raise InputError("runtime predictions", problems)
    # JSON has no tuples: a tuple field (``sources``) comes back as a list, made a tuple again.
    values: dict[str, Any] = {n: tuple(v) if isinstance(v := doc[n], list) else v for n in names}
    values[CATEGORIES] = {c: CategoryPrediction(**p) for c, p in doc[CATEGORIES].items()}
    return RuntimePredictions(**values)
