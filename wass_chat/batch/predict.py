"""Walltime predictions from each user's own history, and how accurate they are.

The predictor of Tsafrir, Etsion and Feitelson ("Backfilling using system-generated
predictions rather than user runtime estimates", IEEE TPDS 2007): a job's run time is
predicted as the mean of the same user's last two jobs that had ended by its submission
(one if only one had), never above the job's own limit; with no history, the limit. In the
replay the scheduler plans with the prediction and the job is still killed at its limit; a
job that outlives its prediction is then expected until its limit (their correction).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.batch.model import Workload


def predicted_runtimes(w: Workload) -> np.ndarray:
    """Per job, the prediction (seconds, at least 1) or its limit when there is no history."""
    n = len(w)
    if n == 0:
        return np.zeros(0, np.int64)
    ended = w.recorded_start_s >= 0
    end = np.where(ended, w.recorded_start_s + w.runtime_s, np.iinfo(np.int64).max // 4)
    scale = np.int64(1) << np.int64(42)
    t0 = int(min(w.submit_s.min(), end[ended].min() if ended.any() else w.submit_s.min()))
    keys = w.user * scale + np.minimum(end - t0, scale - 1)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    runtime_sorted = w.runtime_s[order]
    user_sorted = w.user[order]
    query = w.user * scale + (w.submit_s - t0)
    pos = np.searchsorted(sorted_keys, query, side="right")
    last = pos - 1
    before = pos - 2
    has_last = (last >= 0) & (user_sorted[np.maximum(last, 0)] == w.user)
    has_before = has_last & (before >= 0) & (user_sorted[np.maximum(before, 0)] == w.user)
    rt_last = runtime_sorted[np.maximum(last, 0)].astype(np.float64)
    rt_before = runtime_sorted[np.maximum(before, 0)].astype(np.float64)
    mean = np.where(has_before, (rt_last + rt_before) / 2.0, rt_last)
    prediction = np.maximum(np.ceil(mean), 1).astype(np.int64)
    limited = w.limit_s > 0
    prediction = np.where(limited, np.minimum(prediction, w.limit_s), prediction)
    return np.where(has_last, prediction, w.limit_s)


def accuracy(w: Workload, prediction: np.ndarray) -> dict[str, Any]:
    """How close predictions and requested limits are to the real run times."""
    actual = np.maximum(w.runtime_s, 1).astype(np.float64)
    have_limit = w.limit_s > 0

    def describe(estimate: np.ndarray, mask: np.ndarray) -> dict[str, float]:
        est = estimate[mask].astype(np.float64)
        act = actual[mask]
        if not len(est):
            return {}
        return {
            "median_abs_error_pct": float(np.median(np.abs(est - act) / act) * 100),
            "median_over_actual": float(np.median(est / act)),
            "under_share": float(np.mean(est < act)),
        }

    with_history = prediction != w.limit_s
    return {
        "jobs": len(w),
        "predicted": int(with_history.sum()),
        "prediction": describe(prediction, have_limit & (prediction > 0)),
        "requested_limit": describe(w.limit_s, have_limit),
    }
