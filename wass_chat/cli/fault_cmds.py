"""`wass-chat fault-run`: the fault run of issue #45 (:mod:`wass_chat.fault_run`)."""

from __future__ import annotations

from pathlib import Path

import typer

from sim.errors import InputError
from wass_chat.cli.output import console, emit


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("fault-run")(fault_run_command)


def fault_run_command(
    faults: int = typer.Option(60, "--faults", min=1, max=10_000, help="Faults to inject."),
    kinds: str = typer.Option(
        "", "--kinds", help="Comma-separated fault kinds to cycle through (default: all)."
    ),
    seed: int = typer.Option(0, "--seed", help="Chooses the sbatch or instant each fault hits."),
    scratch: Path | None = typer.Option(
        None, "--scratch", help="Folder for the run's data homes (default: the system's temp)."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Inject the faults of issue #45 FAULTS times, cycling through the kinds (kill -9 and a
    full disk mid-submit, a frozen slurmctld, a submit limit, 8 concurrent imports, a far-future
    row, a truncated partition, kill -9 mid-import), each into real processes on the live cluster
    SLURM_CONF names and a real sacct cache; print one line per fault and "F faults, S
    survived" with what each check held (docs/slurm.md, Submission faults). Needs root (tmpfs,
    SIGSTOP of slurmctld, sacctmgr). A benchmark: it submits and cancels jobs."""
    from wass_chat.fault_run import KINDS, fault_run, summary

    chosen = tuple(k.strip() for k in kinds.split(",") if k.strip()) or KINDS
    unknown = [k for k in chosen if k not in KINDS]
    if unknown:
        raise InputError(
            "--kinds", [f"no fault kind {', '.join(unknown)} (kinds: {', '.join(KINDS)})"]
        )
    shown = None if as_json else (lambda r: console.print(r.line(), markup=False))
    results = fault_run(faults, chosen, seed, scratch, shown)
    data = summary(results)

    def render(d: dict[str, object]) -> None:
        console.print(str(d["line"]), markup=False)
        for name, held in d["checks"].items():  # type: ignore[attr-defined]
            console.print(f"  {name}: held after {held['held']} of {held['of']}", markup=False)
        for kind, counts in d["kinds"].items():  # type: ignore[attr-defined]
            console.print(
                f"  {kind}: {counts['survived']} of {counts['of']} survived", markup=False
            )

    emit(data, as_json, render)
