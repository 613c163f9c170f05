"""`wass-chat agent ...`: measure the offline router on its evaluation questions."""

from __future__ import annotations

import typer

from wass_chat.cli.output import console, emit

agent_app = typer.Typer(help="The assistant's offline understanding.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the ``agent`` group to ``app``."""
    app.add_typer(agent_app, name="agent")


@agent_app.command("eval")
def eval_router(
    split: str = typer.Option("dev", "--split", help="dev, heldout or all."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    errors: bool = typer.Option(False, "--errors", help="List the questions answered wrongly."),
) -> None:
    """Intent accuracy, intent + all-slots accuracy and side-effecting misroutes of the router."""
    from sim.errors import InputError
    from wass_chat.agent.nlu_eval import SPLITS, evaluate, format_report

    if split not in (*SPLITS, "all"):
        raise InputError(split, [f"unknown split {split!r}; use dev, heldout or all"])
    report = evaluate(split)

    def show(data: object) -> None:
        console.print(format_report(report), markup=False, highlight=False)
        for error in report.errors if errors else []:
            console.print(f"- {error}", markup=False, highlight=False)

    emit(report.as_dict(with_errors=errors), as_json, show)
