"""`wass-chat mcp`: the assistant as an MCP server for the site's LLM clients (docs/mcp.md)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import typer

from sim.errors import InputError

DEFAULT_PORT = 8765


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("mcp")(mcp)


def mcp(
    transport: str = typer.Option(
        "stdio",
        "--transport",
        help="stdio (one person's client starts it) or http (Streamable HTTP at /mcp, a service).",
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="HTTP: address to bind; not loopback needs a token."
    ),
    port: int = typer.Option(DEFAULT_PORT, "--port", help="HTTP: port to listen on."),
    read_only: bool | None = typer.Option(
        None,
        "--read-only/--actions",
        help="Read-only: no plan_submit, plan_cancel or complete_plan tools. Default: actions "
        "over stdio, read-only over HTTP.",
    ),
    approval: str = typer.Option(
        "auto",
        "--approval",
        help="auto: the client asks the person (elicitation) when it "
        "can, else a one-time code; code: always the code.",
    ),
    token_file: Path | None = typer.Option(
        None,
        "--token-file",
        help="HTTP: file holding the bearer token (default: "
        "$WASS_MCP_TOKEN); every request must send it.",
    ),
    audit_log: Path | None = typer.Option(
        None,
        "--audit-log",
        help="JSONL log of every tool call (default: <data home>/mcp/audit.jsonl).",
    ),
) -> None:
    """Serve the assistant's tools, resources and prompts over MCP (Model Context Protocol).

    Every read-only question (why a job waits or failed, nodes, the queue, efficiency,
    accounting, what-ifs, energy, simulations, past cases, the report) is a tool whose result
    holds the checked answer and its facts. Submitting a workflow or cancelling a run is a
    plan first (plan_submit, plan_cancel); complete_plan carries it out only with your approval:
    your client asks you, or you give the one-time code the server prints on its stderr (and
    writes to <data home>/mcp/approval-codes.txt). Slurm is asked as the user running the
    server: run one server per user.
    """
    import anyio

    from wass_chat.config import settings
    from wass_chat.mcp_server.server import ServeOptions, WassMCP
    from wass_chat.mcp_server.transports import check_bind, read_token, serve_http, serve_stdio

    if transport not in ("stdio", "http"):
        raise InputError("--transport", [f"{transport!r} is not stdio or http"])
    if approval not in ("auto", "code"):
        raise InputError("--approval", [f"{approval!r} is not auto or code"])
    if not 0 < port < 65536:
        raise InputError("--port", [f"{port} is not a port (1-65535)"])
    token = read_token(token_file) if transport == "http" else None
    if transport == "http":
        check_bind(host, token)
    options = ServeOptions(
        transport="http" if transport == "http" else "stdio",
        read_only=read_only if read_only is not None else transport == "http",
        approval="code" if approval == "code" else "auto",
        audit_log=audit_log,
    )
    with contextlib.redirect_stdout(sys.stderr):  # over stdio, stdout is the protocol's
        server = WassMCP(settings(), options).build()
    if transport == "http":
        anyio.run(serve_http, server, host, port, token)
    else:
        anyio.run(serve_stdio, server)
