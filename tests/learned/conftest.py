"""Fixtures of the learned policy's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """One torch thread, as the planners run (``train bench``, the bench's workers): the head's
    tiny matrix products crawl when their threads contend with other processes for the cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
