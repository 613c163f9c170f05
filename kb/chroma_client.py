"""Connecting to Chroma (embedded or server) and the HNSW settings of new collections."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sim.errors import ServiceUnavailable, UserFacingError


class AccessRefused(UserFacingError):
    """The Chroma server's proxy refused a request: no valid token (401) or a read-only token
    asked to write (403)."""


REFUSALS = {
    401: "no valid token (set chroma_token_file or chroma_token_env to the site's token)",
    403: "the token may only read, and this writes (it needs the site's write token)",
}


@dataclass(frozen=True, slots=True)
class ChromaTarget:
    """Where a knowledge base lives: an embedded store under ``directory``, or a Chroma
    server (``mode="http"``) with the sidecar still under ``directory``.

    A server behind ``scripts/kb-server``'s proxy is reached over TLS (``tls``; ``ca_file``
    names the certificate to trust, else the system's) with a bearer ``token``, which never
    appears in a repr, a log line or an error."""

    directory: Path
    mode: Literal["embedded", "http"] = "embedded"
    host: str = "localhost"
    port: int = 8000
    tls: bool = False
    ca_file: Path | None = None
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class HnswSettings:
    """HNSW index parameters of new collections (ef_search applies on reopen)."""

    space: str = "cosine"
    ef_construction: int = 200
    """Candidates kept while building: higher builds a better graph, more slowly."""
    ef_search: int = 200
    """Candidates kept while searching: the recall/latency knob."""
    max_neighbors: int = 16
    """M: links per vector. 16 kept recall@5 at 0.999 on 1M v0-distributed vectors (as 32 did)
    with a 25% smaller index, which loads faster on reopen and inserts ~20% faster."""
    batch_size: int = 1000
    sync_threshold: int = 5000

    def configuration(self) -> dict[str, Any]:
        return {
            "hnsw": {
                "space": self.space,
                "ef_construction": self.ef_construction,
                "ef_search": self.ef_search,
                "max_neighbors": self.max_neighbors,
                "batch_size": self.batch_size,
                "sync_threshold": self.sync_threshold,
            }
        }


def chroma_client(location: Path | ChromaTarget) -> tuple[Any, Path]:
    """A Chroma client for ``location`` and the directory holding the sidecar."""
    import chromadb
    import chromadb.errors
    from chromadb.config import Settings as ChromaSettings

    target = location if isinstance(location, ChromaTarget) else ChromaTarget(location)
    if target.mode == "http":
        tls = target.tls or target.ca_file is not None
        chroma_settings = ChromaSettings(
            anonymized_telemetry=False,
            chroma_server_ssl_verify=str(target.ca_file) if target.ca_file else None,
        )
        headers = {"Authorization": f"Bearer {target.token}"} if target.token else None
        where = f"{'https' if tls else 'http'}://{target.host}:{target.port}"
        try:
            client = chromadb.HttpClient(
                target.host, target.port, ssl=tls, headers=headers, settings=chroma_settings
            )
            client.heartbeat()
        except Exception as exc:  # chromadb raises several unrelated types for a dead server
            text = _without(exc, target.token)
            if "401" in text:
                refused = f"the Chroma server at {where} refused: {REFUSALS[401]}"
                raise AccessRefused(refused) from None
            raise ServiceUnavailable(f"Chroma server at {where} does not answer: {text}") from None
        _refuse_loudly(client, where)
        return client, target.directory
    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    path = target.directory / "chroma"
    try:
        return chromadb.PersistentClient(str(path), chroma_settings), target.directory
    except PermissionError as exc:  # the folder cannot be created
        raise KnowledgeBaseUnwritable(path, str(exc.strerror or exc)) from exc
    except chromadb.errors.InternalError as exc:  # the same, from Chroma's Rust core
        if "permission denied" not in str(exc).lower() and "readonly" not in str(exc).lower():
            raise
        raise KnowledgeBaseUnwritable(path, str(exc)) from exc


class KnowledgeBaseUnwritable(UserFacingError):
    """The embedded knowledge base cannot be opened for writing (a read-only data home):
    Chroma opens its database read-write even to read it."""

    def __init__(self, path: Path, cause: str) -> None:
        super().__init__(
            f"cannot open the knowledge base at {path}: {cause} "
            "(a read-only data home: set WASS_HOME to a folder you can write)"
        )


def _refuse_loudly(client: Any, where: str) -> None:
    """Make a 401/403 from the proxy an :class:`AccessRefused` with one clear line instead of
    chromadb's generic exception carrying nginx's HTML page."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if session is None:  # not the HTTP client chromadb 1.5 builds: leave its errors as they are
        return

    def check(response: Any) -> None:
        problem = REFUSALS.get(response.status_code)
        if problem is not None:
            raise AccessRefused(f"the Chroma server at {where} refused: {problem}")

    session.event_hooks["response"].append(check)


def _without(exc: Exception, token: str | None) -> str:
    """``exc``'s message with the token blanked (an HTTP error may echo request headers)."""
    text = str(exc) or type(exc).__name__
    return text.replace(token, "<token>") if token else text
