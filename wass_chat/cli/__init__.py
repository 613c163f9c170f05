"""The ``wass-chat`` command tree, the top floor of the house (docs/architecture.md).

Each area owns one module here with a ``register(app)`` function that adds its commands; this
file only assembles them, opens the terminal app (``tui``) when no command is given, and turns
user-facing errors into one line and exit code 2. Nothing outside this package imports it.
Command modules import heavy libraries (torch, chromadb, textual) inside the commands, so
``wass-chat --help`` stays fast.
"""

from __future__ import annotations

import inspect
import re
import sys
import traceback
from pathlib import Path

import typer

from sim.errors import UserFacingError
from wass_chat.cli import (
    agent_cmds,
    bench_cmds,
    fault_cmds,
    gpu_cmds,
    kb_cmds,
    kb_seed_cmds,
    learn_cmds,
    mcp_cmds,
    model_options,
    nlu_cmds,
    plugin_cmds,
    report_cmds,
    sacct_cmds,
    session_bench_cmds,
    sim_cmds,
    slurm_cmds,
    train_cmds,
    whatif_cmds,
    workflow_cmds,
)

app = typer.Typer(
    name="wass-chat",
    help="Workflow-aware scheduling assistant for Slurm clusters.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors."),
    resume: bool = typer.Option(False, "--resume", help="Reopen the last conversation (TUI)."),
    model_backend: str | None = model_options.BACKEND,
    model_url: str | None = model_options.URL,
    model: str | None = model_options.MODEL,
    api_key_env: str | None = model_options.KEY_ENV,
    api_key_file: Path | None = model_options.KEY_FILE,
) -> None:
    """With no command: open the terminal app on the embedded demo."""
    _state["debug"] = debug
    from wass_chat.config import settings

    settings()  # a broken config file fails every command up front, in one line
    model_options.apply_model_options(model_backend, model_url, model, api_key_env, api_key_file)
    if ctx.invoked_subcommand is None:
        from tui.app import run_app  # the CLI is the top floor: the one place that opens the app

        run_app(resume=resume)


# slurm_cmds creates the ``platform`` group (from-slurm); workflow_cmds joins it afterwards.
for _module in (
    slurm_cmds,
    workflow_cmds,
    sim_cmds,
    bench_cmds,
    kb_cmds,
    kb_seed_cmds,
    learn_cmds,
    train_cmds,
    sacct_cmds,
    report_cmds,
    gpu_cmds,
    agent_cmds,
    mcp_cmds,
    nlu_cmds,
    session_bench_cmds,
    whatif_cmds,
    plugin_cmds,
    fault_cmds,
):
    _module.register(app)


_LIST_ITEM = re.compile(r"\s|[-*] |\d+[.)] ")


def reflow(text: str) -> str:
    """A docstring as ``--help`` should print it: each paragraph's lines joined, so the
    terminal wraps it (typer keeps a docstring's line breaks, which print ragged at 80
    columns); a line starting a list item or indented stays on its own line; reST's double
    backquotes go (a terminal shows them as they are)."""
    paragraphs = []
    for paragraph in inspect.cleandoc(text).replace("``", "").split("\n\n"):
        lines = paragraph.split("\n")
        joined = [lines[0]]
        for line in lines[1:]:
            if _LIST_ITEM.match(line):
                joined.append(line)
            else:
                joined[-1] = f"{joined[-1]} {line.strip()}"
        paragraphs.append("\n".join(joined))
    return "\n\n".join(paragraphs)


def _reflow_help(group: typer.Typer) -> None:
    """Reflow the help of every command and group under ``group`` (see :func:`reflow`)."""
    for command in group.registered_commands:
        text = command.help or inspect.getdoc(command.callback)
        if text:
            command.help = reflow(text)
    for sub in group.registered_groups:
        instance = sub.typer_instance
        if sub.help:
            sub.help = reflow(sub.help)
        if instance is not None:
            if isinstance(instance.info.help, str):
                instance.info.help = reflow(instance.info.help)
            _reflow_help(instance)


_reflow_help(app)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the exit code (2 for bad input or services)."""
    _state["debug"] = "--debug" in (argv if argv is not None else sys.argv[1:])
    from wass_chat.config import forget_command_line

    forget_command_line()  # options of an earlier call in this process (tests) do not carry over
    try:
        code = app(args=argv, standalone_mode=False)
    except UserFacingError as exc:
        if _state["debug"]:
            traceback.print_exc()
        typer.echo(f"error: {exc.one_line()}", err=True)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        typer.echo("aborted", err=True)
        return 1
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except typer.TyperException as exc:  # usage errors: unknown command, bad option
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        return int(getattr(exc, "exit_code", 2))
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
