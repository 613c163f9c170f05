"""Whether the accounting cache holds jobs of a user, account or partition a person named.

``sacct summary --user alcie`` filtered to nothing would report a period without jobs: an
all-clear for a typo. A filter naming what the cache never saw is refused instead, with the
nearest names it holds (:class:`~sim.errors.NoSuchName`). The names are the whole cache's, not
one period's: a user whose jobs fall outside the period is real, and an empty period is then the
true answer. An empty cache checks nothing (the answer says it holds no jobs).
"""

from __future__ import annotations

import polars as pl

from sim.errors import NoSuchName

FILTER_COLUMNS = ("user", "account", "partition")
"""The cache's columns a person filters by, named as the refusal names them."""


def check_filter_names(jobs: pl.LazyFrame, **filters: str | None) -> None:
    """Raise :class:`~sim.errors.NoSuchName` for the first filter (``user=``, ``account=``,
    ``partition=``) whose value no allocation in ``jobs`` (the whole cache) has."""
    wanted = {column: value for column, value in filters.items() if value is not None}
    unknown = set(wanted) - set(FILTER_COLUMNS)
    if unknown:
        raise ValueError(f"no such filter column: {', '.join(sorted(unknown))}")
    if not wanted:
        return
    allocations = jobs.filter(~pl.col("is_step"))
    seen = allocations.select(
        [pl.col(column).drop_nulls().unique().implode() for column in wanted]
    ).collect()
    if not any(seen[column][0].len() for column in wanted):
        return  # an empty cache: nothing to compare with
    for column, value in wanted.items():
        # A pending job asking for several partitions is stored as "a,b": both are names.
        stored = {str(name) for name in seen[column][0]}
        known = {part for name in stored for part in name.split(",") if part}
        if value not in stored and value not in known:
            raise NoSuchName(column, value, known, "in the accounting cache")
