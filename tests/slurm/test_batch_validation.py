"""The batch simulator against the real local Slurm: a short recorded stream, replayed.

A smaller stream than `wass-chat whatif validate-slurm` runs (30 jobs of a few seconds, no
job run past its limit), so it fits in CI; the figures of the full stream are in
docs/cluster-whatif.md.
"""

from __future__ import annotations

import json
import time

import pytest

from wass_chat.batch.validation import make_stream, record_stream, replay_recording
from wass_chat.cli import main
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]


def wait_until_idle(timeout_s: float = 300.0) -> None:
    """The replay knows only the stream's jobs: other tests' jobs must be gone first."""
    commands = SlurmCommands()
    deadline = time.monotonic() + timeout_s
    while commands.run(["squeue", "-h", "-o", "%i"]).strip():
        assert time.monotonic() < deadline, "the cluster still runs other jobs"
        time.sleep(2)


def test_a_recorded_stream_replays_close_to_the_real_starts(cluster, tmp_path, capsys):
    wait_until_idle()
    stream = make_stream(30, seed=7, mean_gap_s=0.6, max_sleep_s=8, killed_share=0.0)
    recording = record_stream(stream, timeout_s=600)
    assert len(recording["job_ids"]) == 30
    replay = replay_recording(recording)
    assert [n.name for n in replay.cluster.nodes] == ["n1", "n2", "n3", "n4"]
    assert replay.scheduler.weights.fairshare == 10000  # read from scontrol show config
    agreement = replay.agreement
    assert agreement["jobs"] == 30
    # Behaviour, not speed: most simulated starts fall within the tolerance of the real ones
    # and the order of starts is kept (the full 300-job stream's figures are in the docs).
    # The rank bound is looser than the starts': 26.05 orders this stream's near-simultaneous
    # starts (median error 2.5-4 s) less like the model, 0.73-0.76 in two runs at load 7, where
    # a replay that lost the order scores near 0 (docs/cluster-whatif.md, "Limits").
    assert agreement["within_tolerance"] >= 0.8, agreement
    assert agreement["start_rank_correlation"] >= 0.65, agreement
    path = tmp_path / "recording.json"
    path.write_text(json.dumps(recording))
    assert main(["whatif", "validate-slurm", "--replay", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agreement"] == json.loads(json.dumps(agreement))
