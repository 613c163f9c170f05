"""Requests printed as Slurm takes them: what ``request_size`` writes, sacct's ReqMem reader
reads back to the same bytes, in the largest whole unit (64T, not 65536G)."""

from __future__ import annotations

import pytest

from wass_chat.analytics.job_efficiency import request_size
from wass_chat.sacct.parse import parse_sacct_text


@pytest.mark.parametrize(
    ("num_bytes", "printed"),
    [
        (768 * 2**20, "768M"),
        (5 * 2**30, "5G"),
        (1536 * 2**30, "1536G"),
        (64 * 2**40, "64T"),
        (1.5 * 2**20, "2M"),
    ],
)
def test_request_sizes_read_back_through_sacct(num_bytes: float, printed: str) -> None:
    assert request_size(num_bytes) == printed
    rows = parse_sacct_text(f"JobID|ReqMem|NNodes|NCPUS\n1|{printed}|1|2\n").jobs
    assert rows["req_mem_bytes"].item() == pytest.approx(num_bytes, abs=2**20)
