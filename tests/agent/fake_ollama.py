"""A loopback HTTP server that speaks enough of Ollama's protocol to drive the real ChatOllama.

No Ollama server can be installed here, so the agent's tests talk to this instead: a threaded
server on 127.0.0.1 answering ``/api/chat`` (one JSON document, or NDJSON when the request asks
for streaming), ``/api/tags``, ``/api/show`` and ``/api/version``. Each test scripts the model's
replies (plain text, native tool calls, tool calls written as JSON text, invented tool names,
chunked streaming) and afterwards asserts on the requests the model was actually sent.

A ``responder`` callable can replace the script: the end-to-end test puts a real llama.cpp model
behind the same protocol.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake-model:1b"


@dataclass(frozen=True)
class Reply:
    """One scripted assistant turn.

    ``tool_calls`` are native Ollama tool calls as ``(name, arguments)`` pairs. ``chunks`` splits
    ``content`` for streaming (default: word by word). ``delay`` seconds pass before answering
    (a slow or silent model).
    """

    content: str = ""
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()
    chunks: Sequence[str] | None = None
    delay: float = 0.0


Responder = Callable[[dict[str, Any]], Reply]


@dataclass
class FakeOllama:
    """A scripted Ollama server; use as a context manager, read ``url`` and ``chat_requests``."""

    script: list[Reply] = field(default_factory=list)
    responder: Responder | None = None
    models: tuple[str, ...] = (MODEL,)
    exhausted_reply: Reply = field(default_factory=lambda: Reply("(script exhausted)"))
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeOllama:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def next_reply(self, request: dict[str, Any]) -> Reply:
        """Record ``request`` and return the scripted (or computed) reply for it."""
        with self._lock:
            self.chat_requests.append(request)
            if self.responder is not None:
                return self.responder(request)
            return self.script.pop(0) if self.script else self.exhausted_reply

    def sent_texts(self) -> list[str]:
        """Every message content the client sent, over all chat requests (for assertions)."""
        return [
            str(message.get("content") or "")
            for request in self.chat_requests
            for message in request.get("messages", [])
        ]


def _timestamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"function": {"name": name, "arguments": args}} for name, args in reply.tool_calls]


def _final_fields(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "created_at": _timestamp(),
        "done": True,
        "done_reason": "stop",
        "total_duration": 1_000_000,
        "load_duration": 1000,
        "prompt_eval_count": 10,
        "prompt_eval_duration": 1000,
        "eval_count": 5,
        "eval_duration": 1000,
    }


def _make_handler(server: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """Ollama's endpoints as the Python client uses them."""

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

        def _json(self, payload: dict[str, Any], status: int = 200) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            parsed: dict[str, Any] = json.loads(raw or b"{}")
            return parsed

        def do_GET(self) -> None:
            server.paths.append(self.path)
            if self.path == "/api/version":
                self._json({"version": "0.9.0-fake"})
            elif self.path == "/api/tags":
                self._json({"models": [_tag(name) for name in server.models]})
            else:
                self._json({"error": f"unknown path {self.path}"}, status=404)

        def do_POST(self) -> None:
            server.paths.append(self.path)
            body = self._body()
            if self.path == "/api/show":
                self._json(_show(str(body.get("model", MODEL))))
            elif self.path == "/api/chat":
                self._chat(body)
            else:
                self._json({"error": f"unknown path {self.path}"}, status=404)

        def _chat(self, request: dict[str, Any]) -> None:
            model = str(request.get("model", MODEL))
            if model not in server.models:
                self._json({"error": f"model '{model}' not found"}, status=404)
                return
            reply = server.next_reply(request)
            if reply.delay:
                time.sleep(reply.delay)
            if not request.get("stream", True):
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.tool_calls:
                    message["tool_calls"] = _tool_calls(reply)
                self._json({**_final_fields(model), "message": message})
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.end_headers()
            chunks = list(reply.chunks) if reply.chunks is not None else _words(reply.content)
            for piece in chunks:
                self._line(
                    {
                        "model": model,
                        "created_at": _timestamp(),
                        "message": {"role": "assistant", "content": piece},
                        "done": False,
                    }
                )
            if reply.tool_calls:
                self._line(
                    {
                        "model": model,
                        "created_at": _timestamp(),
                        "message": {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": _tool_calls(reply),
                        },
                        "done": False,
                    }
                )
            self._line({**_final_fields(model), "message": {"role": "assistant", "content": ""}})

        def _line(self, payload: dict[str, Any]) -> None:
            self.wfile.write(json.dumps(payload).encode() + b"\n")
            self.wfile.flush()

    return Handler


def _words(text: str) -> list[str]:
    """Split text into stream chunks that concatenate back to it exactly."""
    pieces: list[str] = []
    for i, word in enumerate(text.split(" ")):
        pieces.append(word if i == 0 else " " + word)
    return [p for p in pieces if p]


def _tag(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": _timestamp(),
        "size": 1,
        "digest": "0" * 64,
        "details": {"format": "gguf", "family": "fake", "parameter_size": "1B"},
    }


def _show(name: str) -> dict[str, Any]:
    return {
        "modelfile": f"FROM {name}",
        "parameters": "",
        "template": "{{ .Prompt }}",
        "details": {"format": "gguf", "family": "fake", "parameter_size": "1B"},
        "model_info": {},
        "capabilities": ["completion", "tools"],
    }


class SilentServer:
    """Accepts TCP connections and never answers: an Ollama that hangs."""

    def __init__(self) -> None:
        import socket

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._socket.close()
