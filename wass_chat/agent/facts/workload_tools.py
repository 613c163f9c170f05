"""Facts from the cluster's own workload replayed, and from its recorded energy.

The assistant's layer over :mod:`wass_chat.batch`: the accounting cache is brought up to date
for the period first (when Slurm answers, as for the other accounting questions), then
:func:`~wass_chat.batch.whatif_answer.whatif_facts` replays it as ``wass-chat whatif cluster``
does (the live cluster when Slurm answers, else the nodes the jobs ran on), and
:func:`~wass_chat.batch.energy_answer.energy_facts` prices it as the audit report's energy view
does. Nothing here acts on the cluster.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from wass_chat.agent.facts.accounting_periods import parse_period, period_in_words, refresh_cache
from wass_chat.config import Settings


class WorkloadTools:
    """Whole-cluster what-ifs and energy, from the sacct cache under ``settings.home``."""

    cluster = "auto"
    """The replayed cluster: the live one when Slurm answers, else the jobs' nodes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _jobs(self, start: datetime | None, end: datetime | None) -> tuple[Any, str]:
        """The whole cache (the cluster is inferred from all of it, as the command does),
        after importing ``[start, end)`` from Slurm when it answers; and the import's note."""
        from wass_chat.sacct.cache import SacctCache

        cache = SacctCache(self.settings.sacct_dir)
        note = refresh_cache(cache, start, end)
        return cache.scan().collect(), note

    def cluster_whatif(self, period: str | None = None, **request: Any) -> dict[str, Any]:
        """The recent workload replayed before and after the change asked for, and the live
        queue drained from now before and after it (when Slurm answers)."""
        from wass_chat.batch.scenario import DEFAULT_DAYS
        from wass_chat.batch.whatif_answer import ChangeRequest, whatif_facts

        start, end = parse_period(period) if period else (None, None)
        jobs, note = self._jobs(start or datetime.now() - timedelta(days=DEFAULT_DAYS), end)
        queue = self._live_queue()
        return whatif_facts(jobs, ChangeRequest(**request), start, end, self.cluster, note, queue)

    def _live_queue(self) -> Any:
        """The jobs running and pending now, when Slurm answers (else None: the answer then
        covers the accounting's past only)."""
        from sim.errors import ServiceUnavailable
        from wass_chat.batch.live_queue import read_live_queue

        if self.cluster not in ("auto", "live"):
            return None
        try:
            return read_live_queue()
        except ServiceUnavailable:
            return None

    def energy_usage(
        self, period: str = "30d", partition: str | None = None, user: str | None = None
    ) -> dict[str, Any]:
        """The energy of a period, by partition and user, with the power model's assumptions."""
        from wass_chat.batch.energy_answer import energy_facts

        start, end = parse_period(period)
        jobs, note = self._jobs(start, end)
        return energy_facts(
            jobs, start, end, period_in_words(period), partition, user, self.cluster, note
        )
