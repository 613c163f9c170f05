"""The cases a store already holds that the write-time checks would refuse (``kb verify``):
what a store filled before the checks, or written around them straight to a server, holds."""

from __future__ import annotations

from kb.codec import case_from_bytes
from kb.provenance import ImplausibleCase, check_plausible
from kb.store import KnowledgeBase


def implausible_cases(kb: KnowledgeBase, chunk: int = 1000) -> list[dict[str, str]]:
    """Every stored case :func:`check_plausible` refuses, with who wrote it and why: what a
    store filled before the check (or written around it, straight to a server) still holds."""
    found = []
    ids = sorted(kb.sidecar.ids("cases"))
    for start in range(0, len(ids), chunk):
        for case_id, body in kb.sidecar.bodies(ids[start : start + chunk]).items():
            case = case_from_bytes(body)
            try:
                check_plausible(case)
            except ImplausibleCase as exc:
                found.append(
                    {
                        "case_id": case_id,
                        "source": case.source,
                        "written_by": case.written_by,
                        "problem": exc.problems[0],
                    }
                )
    return found
