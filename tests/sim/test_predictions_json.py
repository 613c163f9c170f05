"""Runtime predictions survive the trip through JSON text exactly, every field of them: the
round trip is built over ``fields(RuntimePredictions)``, so a field added later with a default
fails here until it travels too."""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from dataclasses import MISSING, Field, fields
from typing import Any

import pytest

from sim.errors import InputError
from sim.predictions_json import CATEGORIES, predictions_from_json, predictions_to_json
from sim.uncertainty import CategoryPrediction, RuntimePredictions


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    assert f.default_factory is not MISSING, f"{f.name} has no default"
    return f.default_factory()


def _other_value(f: Field[Any], hint: Any, k: int) -> Any:
    """A value of the field's type unlike its default, with floats that need all 17 digits."""
    if f.name == CATEGORIES:
        return {
            "mProject": CategoryPrediction(12.345678901234567 + k, 0.1 + 0.2, 5),
            "mAdd": CategoryPrediction(1e-7 / 3, 0.0, 2),
        }
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Mapping, dict) and args[0] is str and args[1] in (float, int):
        return {"cpu-4c": args[1](1.1 + 0.2 + k), "gpu-32c": args[1](7.0 / 3.0)}
    if origin in (Mapping, dict) and typing.get_origin(args[1]) in (Mapping, dict):
        return {"cpu01": {"cpu01": 0.01 + k, "gpu02": 1.0 / 3.0}, "gpu02": {"cpu01": 0.1 + 0.2}}
    if origin is tuple and args == (str, ...):
        return ("slurm:run-7", f"sim:{k}")
    if hint is bool:
        return not _default(f)
    if hint is int:
        return _default(f) + 7 + k
    if hint is float:
        return _default(f) + 0.1 + 0.2 + k
    raise AssertionError(f"field {f.name}: no test value for {hint!r}; add one here")


def _every_field_set() -> RuntimePredictions:
    hints = typing.get_type_hints(RuntimePredictions)
    values = {
        f.name: _other_value(f, hints[f.name], k) for k, f in enumerate(fields(RuntimePredictions))
    }
    return RuntimePredictions(**values)


def test_every_field_round_trips_through_json_text() -> None:
    predictions = _every_field_set()
    for f in fields(RuntimePredictions):
        assert getattr(predictions, f.name) != _default(f), f.name  # each field is really set
    text = json.dumps(predictions_to_json(predictions))
    back = predictions_from_json(json.loads(text))
    for f in fields(RuntimePredictions):
        assert getattr(back, f.name) == getattr(predictions, f.name), f.name
    assert back == predictions
    assert isinstance(back.categories["mAdd"], CategoryPrediction)
    assert isinstance(back.sources, tuple)  # a JSON list read back as the field's tuple
    assert json.loads(text)[CATEGORIES]["mAdd"] == {
        "runtime": 1e-7 / 3,
        "log_spread": 0.0,
        "samples": 2,
    }


def test_the_defaults_round_trip() -> None:
    empty = RuntimePredictions()
    assert predictions_from_json(json.loads(json.dumps(predictions_to_json(empty)))) == empty


def test_a_missing_or_unknown_field_is_one_error_naming_each() -> None:
    doc = predictions_to_json(_every_field_set())
    del doc["cases"]
    doc["confidence"] = 0.5
    with pytest.raises(InputError) as caught:
        predictions_from_json(doc)
    assert caught.value.problems == ("missing field 'cases'", "unknown field 'confidence'")
