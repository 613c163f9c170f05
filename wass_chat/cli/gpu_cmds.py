"""`wass-chat gpu ...`: running jobs' GPU use now, and cancelling an idle one only as a
proposal a person approves (docs/analytics.md "Acting on idle GPUs")."""

from __future__ import annotations

import sys
from typing import Any

import typer

from sim.errors import InputError
from wass_chat.cli.output import console, emit
from wass_chat.cli.period_options import settings

gpu_app = typer.Typer(help="GPU use of running jobs; propose cancelling idle ones (approved).")


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.add_typer(gpu_app, name="gpu")


def _slurm() -> tuple[Any, tuple[int, int, int] | None]:
    from wass_chat.slurm.backend import installed_slurm_version
    from wass_chat.slurm.commands import SlurmCommands

    found = installed_slurm_version()
    return SlurmCommands(timeout=15), (found.major, found.minor, found.micro) if found else None


@gpu_app.command("idle")
def idle(
    propose_cancel: str | None = typer.Option(
        None, "--propose-cancel", metavar="JOB", help="Propose cancelling this idle GPU job."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Running jobs that hold GPUs and how they use them now (jobstats AdminComment, sstat
    gres/gpuutil, or "not recorded"); with --propose-cancel JOB, a plan to cancel that job if it
    has been at 0% longer than gpu_idle_cancel_after_min, which `gpu approve` carries out."""
    from wass_chat.analytics.gpu_idle_cancel import ProposalStore, find_running
    from wass_chat.analytics.gpu_idle_cancel import propose_cancel as propose
    from wass_chat.analytics.gpu_live import running_gpu_jobs
    from wass_chat.analytics.gpu_questions import live_facts

    current = settings()
    runner, version = _slurm()
    if propose_cancel is None:
        facts = live_facts(running_gpu_jobs(runner, version), current.gpu_idle_cancel_after_min)
        emit(dict(facts), as_json, _render_live)
        return
    store = ProposalStore(current.home)
    job = find_running(runner, propose_cancel.strip(), version)
    try:
        plan = propose(job, current.gpu_idle_cancel_after_min)
    except InputError as exc:
        store.record("refused to propose", {"job_id": job.job_id, "user": job.user}, exc.one_line())
        raise
    store.save(plan)
    emit(plan, as_json, _render_plan)


def _render_live(facts: dict[str, Any]) -> None:
    console.print(facts["verdict"], markup=False, highlight=False)
    for line in facts["lines"]:
        console.print(line, markup=False, highlight=False)


def _render_plan(plan: dict[str, Any]) -> None:
    say = lambda text: console.print(text, markup=False, highlight=False)  # noqa: E731
    say(
        f"Proposal {plan['proposal_id']}: cancel job {plan['job_id']} of {plan['user']} "
        f"({plan['gpus']} GPUs on {plan['nodes']}, at 0% for {plan['idle_for_min']} min, over the "
        f"{plan['idle_after_min']:g}-minute setting)."
    )
    for line in plan["evidence"]:
        say(f"  evidence: {line}")
    say(f"  will run: {' '.join(plan['argv'])}")
    say(f"  or tell the owner: {plan['message']}")
    say(f"  plan digest: {plan['plan_digest']}")
    say(
        "Nothing has been cancelled. To carry it out a person runs: wass-chat gpu approve "
        f"{plan['proposal_id']} --digest DIGEST (the full digest above)"
    )


@gpu_app.command("approve")
def approve(
    proposal: str = typer.Argument(..., help="The proposal id (gpu-...)."),
    digest: str = typer.Option(..., "--digest", help="The plan digest shown with the proposal."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask on the terminal."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Carry out one proposal: only with its own digest, once, and only if the job is still the
    one shown and still idle; the approval and its outcome are logged."""
    from sim.errors import UserFacingError
    from wass_chat.agent.approval import ApprovalGate, GatedAction
    from wass_chat.analytics.gpu_idle_cancel import ProposalStore, execute_cancel

    store = ProposalStore(settings().home)
    plan = store.load(proposal.strip())
    if not yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise InputError("gpu approve", ["no terminal to confirm on: pass --yes"])
        typer.confirm(f"Run {' '.join(plan['argv'])}?", abort=True)
    runner, version = _slurm()
    gate = ApprovalGate(
        {
            "cancel_idle_gpu": GatedAction(
                lambda p, d: execute_cancel(p, d, runner, version), _no_edits
            )
        }
    )
    request = gate.propose("cancel_idle_gpu", plan)
    try:
        outcome = gate.resolve(request.request_id, "approve", None, digest.strip())
    except UserFacingError as exc:
        store.record("approval refused", plan, exc.one_line())
        raise
    store.decide(plan, "approved", f"ran {' '.join(plan['argv'])}")
    emit(outcome, as_json, lambda o: console.print(f"cancelled job {plan['job_id']}"))


@gpu_app.command("reject")
def reject(proposal: str = typer.Argument(..., help="The proposal id (gpu-...).")) -> None:
    """Drop a proposal without acting; logged."""
    from wass_chat.analytics.gpu_idle_cancel import ProposalStore

    store = ProposalStore(settings().home)
    plan = store.load(proposal.strip())
    store.decide(plan, "rejected", "nothing was done")
    console.print(f"rejected {plan['proposal_id']}: nothing was done")


def _no_edits(original: dict[str, Any], edited: dict[str, Any]) -> dict[str, Any]:
    raise InputError("cancellation", ["a cancellation cannot be edited: reject it instead"])
