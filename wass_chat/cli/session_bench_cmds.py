"""`wass-chat agent bench-session`: memory and latency of one long offline session."""

from __future__ import annotations

from pathlib import Path

import typer

from wass_chat.cli.nlu_cmds import agent_app
from wass_chat.cli.output import console, emit, progress_done, progress_line


def register(app: typer.Typer) -> None:
    """Add ``agent bench-session`` to the ``agent`` group (which nlu_cmds adds to ``app``)."""
    agent_app.command("bench-session")(bench_session_cmd)


def bench_session_cmd(
    questions: int = typer.Option(200, "--questions", min=1, help="How many questions to ask."),
    at: str = typer.Option(
        "1,100,200", "--at", help="Question numbers to sample, comma-separated."
    ),
    home: Path = typer.Option(
        None, "--home", help="Data home to open (default: the configured one, WASS_HOME)."
    ),
    heap: bool = typer.Option(
        True, "--heap/--no-heap", help="Also trace Python's heap (tracemalloc; slower)."
    ),
    in_app: bool = typer.Option(
        False, "--app", help="Type the questions into the chat app, headless (Textual)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Ask one offline session N questions in turn (a comparison, simulations, a placement
    explained, cases, a what-if, statuses) and print its resident memory, Python heap and
    answer latency at the sampled question numbers: a long session should stay flat. With
    ``--app`` the same questions go through the chat app (headless), which also prints the
    chat log's live items."""
    from sim.errors import InputError
    from wass_chat.agent.session import open_session
    from wass_chat.agent.session_bench import bench_report, bench_session
    from wass_chat.config import settings

    try:
        sampled = sorted({int(n) for n in at.split(",") if n.strip()})
    except ValueError:
        raise InputError(at, ["--at takes question numbers, e.g. 1,100,200"]) from None
    if not sampled or sampled[0] < 1 or sampled[-1] > questions:
        raise InputError(at, [f"--at takes question numbers between 1 and {questions}"])
    config = settings() if home is None else settings().model_copy(update={"home": home})
    session = open_session(config, offline=True)

    def progress(number: int, latency: float) -> None:
        progress_line(f"question {number}/{questions}: {latency:.2f} s")

    live: list[int] | None = None
    try:
        if in_app:
            import tempfile

            from tui.app_bench import bench_app

            with tempfile.TemporaryDirectory(prefix="wass-bench-history-") as history:
                samples, live = bench_app(
                    session, Path(history), questions, sampled, heap, progress=progress
                )
        else:
            samples = bench_session(session, questions, sampled, trace_heap=heap, progress=progress)
    finally:
        progress_done()

    def show(_: object) -> None:
        where = "through the chat app" if in_app else "offline session"
        console.print(f"one {where} on {config.home}, {questions} questions")
        log_head = "   log items" if live is not None else ""
        console.print(
            f"question   RSS MB   heap MB   answer s   round mean s{log_head}", highlight=False
        )
        for i, s in enumerate(samples):
            heap_mb = f"{s.python_heap_mb:9.1f}" if s.python_heap_mb is not None else "        -"
            items = f" {live[i]:11d}" if live is not None else ""
            console.print(
                f"{s.question:8d} {s.rss_mb:8.1f} {heap_mb} {s.latency_s:10.2f}"
                f" {s.round_latency_s:14.2f}{items}",
                highlight=False,
            )

    report = bench_report(samples, config)
    if live is not None:
        report["log_items"] = live
    emit(report, as_json, show)
