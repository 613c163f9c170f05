"""The replay window of a chat or report what-if: the last days, capped at the latest jobs."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from wass_chat.batch.scenario import replay_window

T0 = datetime(2026, 11, 1)


def _jobs(offsets_s: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "submit": [T0 + timedelta(seconds=s) for s in offsets_s],
            "is_step": [False] * len(offsets_s),
        }
    )


def test_the_cap_never_splits_jobs_submitted_in_the_same_second() -> None:
    # 2 early jobs, then 4 array tasks in one second, then 3 later jobs: a cap of 5 falls
    # inside the array, which is then left out whole.
    window = replay_window(_jobs([0, 1, 10, 10, 10, 10, 20, 21, 22]), max_jobs=5)
    assert window is not None and window.capped
    assert window.jobs == 3
    assert window.start == T0 + timedelta(seconds=20)


def test_a_cap_on_a_tie_free_tail_keeps_exactly_the_latest_jobs() -> None:
    window = replay_window(_jobs([0, 1, 2, 3, 4, 5]), max_jobs=4)
    assert window is not None and window.capped
    assert (window.jobs, window.start) == (4, T0 + timedelta(seconds=2))


def test_a_tail_all_in_one_second_is_kept_whole_rather_than_emptied() -> None:
    window = replay_window(_jobs([0, 5, 5, 5]), max_jobs=2)
    assert window is not None
    assert (window.jobs, window.start) == (3, T0 + timedelta(seconds=5))


def test_no_cap_below_it() -> None:
    window = replay_window(_jobs([0, 1, 2]), max_jobs=5)
    assert window is not None and not window.capped and window.jobs == 3
