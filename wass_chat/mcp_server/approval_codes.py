"""One-time approval codes: what a person gives to complete a plan when the client cannot ask.

A plan proposed over MCP waits in the :class:`~wass_chat.agent.approval.ApprovalGate` under its
plan id. When the client cannot ask the person itself (no MCP elicitation), completing it needs a
code that only the person sees: :meth:`ApprovalCodes.issue` makes one per plan and hands it to
``show`` (the server's stderr, and a file only its owner can read), never to a tool result, so the
model, which sees only tool results, cannot produce it. :meth:`redeem` checks it on the server:

* bound to one plan and to that plan's digest: the code of plan A never completes plan B, and
  what is approved is the digest recorded when the code was issued, not one the caller names;
* single use: a redeemed code is gone, and the gate has already forgotten the plan it completed;
* a few attempts only: after :data:`MAX_ATTEMPTS` wrong codes the plan is dropped (ask again).

Codes are 8 characters from an alphabet without look-alikes (32**8 values), compared in
constant time.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sim.errors import InputError

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O, 1/I: a code read off a terminal is typed back right."""
MAX_ATTEMPTS = 3


class ApprovalRefused(InputError):
    """A completion that approves nothing: no code, a wrong one, or one already used."""

    kind = "approval"


@dataclass
class _Issued:
    code: str
    digest: str
    attempts: int = 0


def new_code() -> str:
    """``XXXX-XXXX`` from :data:`ALPHABET`, by the ``secrets`` generator."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(8))
    return f"{raw[:4]}-{raw[4:]}"


def normalised(code: str) -> str:
    return "".join(ch for ch in code.upper() if ch in ALPHABET)


class ApprovalCodes:
    """The codes of the plans waiting for a person, by plan id."""

    def __init__(self, show: Callable[[str, str, str], None]) -> None:
        self._show = show
        """Called with (plan id, digest, code): where the person, and only they, sees it."""
        self._issued: dict[str, _Issued] = {}
        self._lock = threading.Lock()

    def issue(self, plan_id: str, digest: str) -> None:
        code = new_code()
        with self._lock:
            self._issued[plan_id] = _Issued(code, digest)
        self._show(plan_id, digest, code)

    def redeem(self, plan_id: str, code: str) -> str:
        """The digest approved by ``code`` for ``plan_id``; raises :class:`ApprovalRefused`
        (and counts the attempt) unless it is that plan's own unused code."""
        with self._lock:
            issued = self._issued.get(plan_id)
            if issued is None:
                raise ApprovalRefused(
                    plan_id,
                    [
                        "no approval code is waiting for this plan "
                        "(used, expired or never issued): nothing was "
                        "submitted"
                    ],
                )
            if not hmac.compare_digest(normalised(code), normalised(issued.code)):
                issued.attempts += 1
                left = MAX_ATTEMPTS - issued.attempts
                if left <= 0:
                    del self._issued[plan_id]
                why = "this is not the code shown for this plan"
                tail = f"{left} attempts left" if left > 0 else "the plan is dropped: ask again"
                raise ApprovalRefused(plan_id, [f"{why} ({tail}); nothing was submitted"])
            del self._issued[plan_id]
            return issued.digest

    def dropped(self, plan_id: str) -> bool:
        """Whether ``plan_id`` has no code left (used, or too many wrong attempts)."""
        with self._lock:
            return plan_id not in self._issued

    def discard(self, plan_id: str) -> None:
        with self._lock:
            self._issued.pop(plan_id, None)
