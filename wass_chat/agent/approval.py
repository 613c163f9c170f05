"""The approval gate: the only way from a chat to an action on the cluster.

A tool that would act (``submit_workflow``) never acts: it asks the gate to :meth:`propose` a
plan, which stores it under a fresh, unguessable request id and returns an
:class:`~wass_chat.agent.events.ApprovalRequest` for the front end. Nothing the model writes can
resolve it: the model has no tool that approves, and :meth:`resolve` is called only by a session's
``resolve_approval``, which only front ends call (the TUI's approval dialog, ``wass-chat ask``
after an explicit ``--yes`` or a confirmation typed on a terminal).

Approval is bound to the exact plan: every proposed plan carries its digest
(``plan_digest``, :mod:`wass_chat.slurm.plan_digest`: workflow content, every job's command and
sbatch options), the request shows it, and ``approve`` must name that digest, which is how a
front end says "this plan, the one I showed" (the app's button, ``ask --yes`` and the coming MCP
server's approval all pass ``request.digest``). Any other digest, or none, is refused and
nothing runs; the executor is given the approved digest and checks the plan it is about to
submit against it once more.

Each request is single-use, a refused one included. ``edit`` runs the edited plan after the
action's own validator accepted it: the person wrote the edit, so what they approve is the plan
the validator derived from it, whose own digest the executor checks. ``reject`` discards the
plan. Executions are recorded in :attr:`executed`, which the tests read to prove that nothing
ran without a human's answer.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sim.errors import InputError
from wass_chat.agent.events import ApprovalDecision, ApprovalRequest

Executor = Callable[[dict[str, Any], str], dict[str, Any]]
"""Carries out an approved plan, given the digest approved, and returns JSON-able facts about
what it did; it refuses a plan whose digest is not that one."""
Validator = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
"""Checks an edited plan against the original; returns the plan to execute or raises InputError."""


class ApprovalError(InputError):
    """An approval that cannot be applied: unknown or already used request, invalid edit."""

    kind = "approval"


@dataclass(frozen=True)
class GatedAction:
    """An action kind that needs approval: how to run it, and how to check an edited plan."""

    execute: Executor
    validate_edit: Validator


@dataclass
class ApprovalGate:
    """Pending plans by request id, and the actions that may execute them."""

    actions: dict[str, GatedAction]
    pending: dict[str, ApprovalRequest] = field(default_factory=dict)
    executed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(request id, plan) of every execution, in order."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def propose(self, action: str, plan: dict[str, Any]) -> ApprovalRequest:
        """Store ``plan`` for a human's decision; nothing runs."""
        if action not in self.actions:
            raise ApprovalError(action, [f"no gated action named {action!r}"])
        digest = str(plan.get("plan_digest") or "")
        if not digest:
            raise ApprovalError(action, ["a plan to approve must carry its digest"])
        request = ApprovalRequest(f"apr-{uuid.uuid4().hex}", action, plan, digest)
        with self._lock:
            self.pending[request.request_id] = request
        return request

    def resolve(
        self,
        request_id: str,
        decision: ApprovalDecision,
        edited_plan: dict[str, Any] | None = None,
        digest: str | None = None,
    ) -> dict[str, Any]:
        """Apply a human's decision; returns facts about the outcome (executed or not).

        ``approve`` needs ``digest``, the digest of the plan the person was shown
        (``request.digest``); any other value approves nothing.
        """
        with self._lock:
            request = self.pending.pop(request_id, None)
        if request is None:
            raise ApprovalError(request_id, ["no pending approval request with this id"])
        action = self.actions[request.action]
        if decision == "reject":
            return {
                "request_id": request_id,
                "action": request.action,
                "executed": False,
                "decision": "reject",
            }
        if decision == "edit":
            if edited_plan is None:
                raise ApprovalError(request_id, ["decision 'edit' needs an edited plan"])
            plan = action.validate_edit(request.plan, edited_plan)
            approved = str(plan.get("plan_digest") or "")
        elif decision == "approve":
            plan, approved = request.plan, request.digest
            if digest != request.digest:
                shown = (digest or "none")[:12]
                raise ApprovalError(
                    request_id,
                    [
                        f"the approval names plan digest {shown}, not the plan shown "
                        f"({request.digest[:12]}): nothing was sent to Slurm"
                    ],
                )
        else:
            raise ApprovalError(request_id, [f"unknown decision {decision!r}"])
        self.executed.append((request_id, plan))
        outcome = action.execute(plan, approved)
        return {
            "request_id": request_id,
            "action": request.action,
            "executed": True,
            "decision": decision,
            **outcome,
        }
