"""Serving the MCP server over stdio (one person's client) or Streamable HTTP (a service).

HTTP binds to 127.0.0.1 unless told otherwise; any address that is not loopback needs a bearer
token (:func:`check_bind`), and when a token is set every request must carry it
(``Authorization: Bearer ...``) or get 401 (:class:`BearerToken`, compared in constant time).
The token is read from a file only its owner may read or the ``WASS_MCP_TOKEN`` variable
(:func:`wass_chat.secret_files.read_secret`, as every secret the tool reads) and never logged
or printed;
uvicorn's access log is off. On loopback the SDK's DNS-rebinding protection is on (Host and
Origin must be local).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from pathlib import Path
from typing import Any

from sim.errors import InputError
from wass_chat.secret_files import read_secret

TOKEN_VARIABLE = "WASS_MCP_TOKEN"
MCP_PATH = "/mcp"


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(token_file: Path | None) -> str | None:
    """The bearer token: from ``token_file`` (refused if group or others may read it) or
    ``$WASS_MCP_TOKEN``; None if neither is set. An empty or short one is refused (it would let
    anyone in, or be guessed)."""
    variable = TOKEN_VARIABLE if TOKEN_VARIABLE in os.environ else None
    token = read_secret(token_file, variable, "mcp_token")
    if token is not None and len(token) < 16:
        where = str(token_file) if token_file is not None else f"${TOKEN_VARIABLE}"
        raise InputError(where, ["the bearer token must be at least 16 characters"])
    return token


def check_bind(host: str, token: str | None) -> None:
    """Refuse a non-loopback address without a token."""
    if not is_loopback(host) and token is None:
        raise InputError(
            f"--host {host}",
            [
                f"binding to {host} (not loopback) needs a bearer token: --token-file FILE or "
                f"${TOKEN_VARIABLE} (or bind 127.0.0.1 behind the site's reverse proxy)"
            ],
        )


class BearerToken:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            body = json.dumps({"error": "unauthorized: a bearer token is required"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="wass-chat"'),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Any) -> bool:
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    given.strip(), self._token
                )
        return False


async def serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app(server: Any, host: str, token: str | None) -> Any:
    """The Starlette app serving ``server`` at :data:`MCP_PATH`, behind the token if any."""
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return BearerToken(app, token) if token is not None else app


async def serve_http(server: Any, host: str, port: int, token: str | None) -> None:
    import uvicorn

    check_bind(host, token)
    config = uvicorn.Config(
        http_app(server, host, token),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    await uvicorn.Server(config).serve()
