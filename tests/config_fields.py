"""Checks shared by the typed configs' tests: every field documented, defaults = the CLI's."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any


def documented_attributes(config: type) -> set[str]:
    """The annotated class attributes of ``config`` followed by a docstring in its source."""
    body = ast.parse(inspect.getsource(config)).body[0]
    assert isinstance(body, ast.ClassDef)
    return {
        statement.target.id
        for statement, following in zip(body.body, body.body[1:], strict=False)
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and isinstance(following, ast.Expr)
        and isinstance(following.value, ast.Constant)
        and isinstance(following.value.value, str)
    }


def undocumented_fields(config: type) -> set[str]:
    """The dataclass fields of ``config`` not followed by a docstring in its source."""
    return {f.name for f in fields(config)} - documented_attributes(config)


def cli_defaults(command: Callable[..., Any], names: Mapping[str, str]) -> dict[str, Any]:
    """The defaults of the typer ``command``'s options in ``names``, keyed by the config field
    each maps onto (``names``: option parameter -> field)."""
    parameters = inspect.signature(command).parameters
    return {field: parameters[option].default.default for option, field in names.items()}
