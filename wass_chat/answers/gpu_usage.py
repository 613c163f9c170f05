"""How jobs used their GPUs (kind ``gpu_usage``): written as the efficiency answers are."""

from __future__ import annotations

from wass_chat.analytics.gpu_questions import GpuUsageFacts
from wass_chat.answers.efficiency import render_efficiency
from wass_chat.answers.kind import Facts, Kind


def render_gpu_usage(f: Facts) -> str:
    """The verdict, then the figures line by line, as :func:`render_efficiency` writes them."""
    return render_efficiency(f)


KIND = Kind(
    "gpu_usage",
    "GPU utilisation and memory of the jobs that held GPUs, by user or job",
    render_gpu_usage,
    facts=GpuUsageFacts,
)
