"""A real MCP client for the tests: the SDK's ``ClientSession`` over stdio or Streamable HTTP.

:class:`LiveClient` keeps one connection (one server process, over stdio) open for a whole test
module: its event loop runs in a thread of its own, and each call is sent to it, so tests stay
plain functions and share one server. :func:`server_command` is how a client starts
``wass-chat mcp`` (this interpreter's module, with this tree on ``PYTHONPATH``), optionally as
another Unix user (``runuser``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
Elicit = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


def server_env(home: Path, config: str) -> dict[str, str]:
    """What the server process needs: the data home, no settings file, this tree, Slurm."""
    env = {
        "WASS_HOME": str(home),
        "WASS_CONFIG": config,
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ["PATH"],
        "WASS_OLLAMA_HOST": "http://127.0.0.1:9",
    }
    if "SLURM_CONF" in os.environ:
        env["SLURM_CONF"] = os.environ["SLURM_CONF"]
    return env


def server_command(
    env: dict[str, str], *flags: str, user: str | None = None
) -> StdioServerParameters:
    argv = [sys.executable, "-m", "wass_chat.cli", "mcp", *flags]
    if user is None:
        return StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(ROOT))
    pairs = [f"{k}={v}" for k, v in env.items()]
    return StdioServerParameters(
        command="runuser", args=["-u", user, "--", "env", *pairs, *argv], env=env, cwd="/tmp"
    )


class LiveClient:
    """One ``ClientSession`` on a stdio server, driven from synchronous tests."""

    def __init__(
        self,
        params: StdioServerParameters,
        elicit: Elicit | None = None,
        errlog: Path | None = None,
        name: str = "wass-tests",
    ) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        """Every tool call made through :meth:`call`, in order."""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._errlog = open(errlog or os.devnull, "a")  # noqa: SIM115 (closed in close())
        self._info = types.Implementation(name=name, version="0")
        self._thread = threading.Thread(target=self._run, args=(params, elicit), daemon=True)
        self._thread.start()
        if not self._ready.wait(120):
            raise AssertionError("the MCP server did not initialise within 120 s")
        if self._failed is not None:
            said = errlog.read_text()[-2000:] if errlog is not None and errlog.is_file() else ""
            raise AssertionError(f"the MCP server failed to start: {said}") from self._failed

    def _run(self, params: StdioServerParameters, elicit: Elicit | None) -> None:
        asyncio.set_event_loop(self._loop)
        self._stop = asyncio.Event()
        self._loop.run_until_complete(self._serve(params, elicit))

    async def _serve(self, params: StdioServerParameters, elicit: Elicit | None) -> None:
        try:
            async with (
                stdio_client(params, errlog=self._errlog) as (read, write),
                ClientSession(
                    read, write, elicitation_callback=elicit, client_info=self._info
                ) as session,
            ):
                self.initialize = await session.initialize()
                self.session = session
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # reported to the test that started it
            self._failed = exc
            self._ready.set()

    def run(self, work: Callable[[ClientSession], Awaitable[Any]], timeout: float = 300) -> Any:
        future = asyncio.run_coroutine_threadsafe(work(self.session), self._loop)
        return future.result(timeout)

    def call(self, name: str, **arguments: Any) -> types.CallToolResult:
        self.calls.append((name, arguments))
        return self.run(lambda s: s.call_tool(name, arguments))

    def close(self) -> None:
        if hasattr(self, "_stop"):
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        self._errlog.close()


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def all_text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
