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
    split: str = typer.Option(
        "dev", "--split", help="dev, heldout, scope-tuning, scope-heldout or all."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    errors: bool = typer.Option(False, "--errors", help="List the questions answered wrongly."),
    model: str = typer.Option(
        None, "--model", help="Score a GGUF model's tool calls instead: a .gguf path or smollm2."
    ),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    threads: int = typer.Option(1, "--threads", min=1, help="llama.cpp threads (--model)."),
    no_prefix_reuse: bool = typer.Option(
        False, "--no-prefix-reuse", help="Re-evaluate the tools prompt for every question."
    ),
    full_replies: bool = typer.Option(
        False, "--full-replies", help="Generate whole replies, even once they are prose."
    ),
) -> None:
    """Intent accuracy, intent + all-slots accuracy and side-effecting misroutes of the router
    (or, with ``--model``, of a local model's tool calls on the same questions)."""
    from sim.errors import InputError
    from wass_chat.agent.understanding.nlu_eval import SPLITS, evaluate, format_report

    if split not in (*SPLITS, "all"):
        raise InputError(split, [f"unknown split {split!r}; use {', '.join(SPLITS)} or all"])
    if model is not None:
        from pathlib import Path

        from wass_chat.agent.model_eval import (
            ModelRunConfig,
            evaluate_model,
            format_model_report,
            smollm2_gguf,
        )

        gguf = smollm2_gguf() if model == "smollm2" else Path(model)
        if gguf is None or not gguf.is_file():
            raise InputError(model, ["no such GGUF file (smollm2 needs: pip install -e '.[llm]')"])
        config = ModelRunConfig(
            threads=threads, reuse_prefix=not no_prefix_reuse, stop_at_prose=not full_replies
        )
        model_report = evaluate_model(gguf, split, limit, config)
        report, text = model_report, format_model_report(model_report)
    else:
        report = evaluate(split, limit)
        text = format_report(report)

    def show(data: object) -> None:
        console.print(text, markup=False, highlight=False)
        for error in report.errors if errors else []:
            console.print(f"- {error}", markup=False, highlight=False)

    emit(report.as_dict(with_errors=errors), as_json, show)
