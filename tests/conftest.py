"""What every test shares: no Slurm cluster unless the test asks for one.

The local cluster's fixture (``tests/slurm/conftest.py``, session-scoped) exports ``SLURM_CONF``
for the rest of its xdist worker, and the product behaves differently where a controller
answers (an unqualified what-if is the cluster's; no demo run stands in for a site's run,
``wass_chat.agent.facts.sources.NoSiteRun``). So a test that does not use ``cluster`` sees no
cluster, whichever worker runs it and whatever ran there before.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_cluster_unless_asked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "cluster" in request.fixturenames:
        return
    monkeypatch.delenv("SLURM_CONF", raising=False)
