"""One client of a served knowledge base, run as its own process by ``test_served.py``: adds
cases one at a time and queries a case it added between the adds (one add and one query per
seed), then writes what it did as JSON.

``python -m tests.kb.served_worker FIRST LAST OUT.json`` adds the cases of seeds FIRST..LAST
(inclusive, in that order, so LAST < FIRST walks down) through the settings' knowledge base
(``WASS_HOME``, ``WASS_CHROMA_MODE=http``, ``WASS_CHROMA_HOST``, ``WASS_CHROMA_PORT``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from kb.store import KnowledgeBase
from tests.kb.conftest import make_case
from wass_chat.config import settings


def main(first: int, last: int, out: Path) -> None:
    kb = KnowledgeBase(settings().kb_target())
    step = 1 if last >= first else -1
    rng = np.random.default_rng(first)
    added, cases, found = [], [], 0
    for seed in range(first, last + step, step):
        case = make_case(seed)
        kb.add_cases([case])
        added.append(case.case_id)
        cases.append(case)
        probe = cases[int(rng.integers(len(cases)))]
        hits = kb.query(probe.workflow, probe.platform, k=3)
        found += any(h.case_id == probe.case_id for h in hits)
    kb.close()
    doc = {
        "added": added,
        "adds": len(added),
        "queries": len(added),
        "found": found,
        "home": str(settings().home),
    }
    out.write_text(json.dumps(doc))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
