"""The three 300-job streams recorded on the real local Slurm 22.05 (docs/cluster-whatif.md),
replayed.

The recordings are the JSON `wass-chat whatif validate-slurm -o` writes: the stream, sacct's
text and scontrol's description of the cluster. Seed 0 is the recording the replay's first
three Slurm corrections came from; seed 1, recorded afterwards, was held out for them and then
looked at to find the backfill agent's cadence and bf_resolution; seed 2 was recorded to be
held out from those two and replayed only once they were in. These pin the documented
figures so that a change to the simulator that loses fidelity shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wass_chat.batch.validation import COMPLETING_S, replay_recording

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("seed", "within", "rank"), [(0, 0.953, 0.980), (1, 0.973, 0.960), (2, 0.913, 0.982)]
)
def test_recorded_stream_replays_as_documented(seed, within, rank):
    recording = json.loads((DATA / f"slurm-stream-300-seed{seed}.json").read_text())
    replay = replay_recording(recording)
    assert replay.scheduler.completing_s == COMPLETING_S
    assert replay.scheduler.kill_grace_s == 15  # the TIMEOUT jobs' median overrun
    assert replay.scheduler.reservation_depth == replay.scheduler.bf_max_job_test
    assert replay.scheduler.bf_resolution_s == 60  # Slurm's default: none is configured
    agreement = replay.agreement
    assert agreement["jobs"] == 300
    assert agreement["within_tolerance"] >= within
    assert agreement["start_rank_correlation"] >= rank
