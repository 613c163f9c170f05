"""Connecting to Chroma (embedded or server) and the HNSW settings of new collections."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sim.errors import ServiceUnavailable, UserFacingError


@dataclass(frozen=True, slots=True)
class ChromaTarget:
    """Where a knowledge base lives: an embedded store under ``directory``, or a Chroma
    server (``mode="http"``) with the sidecar still under ``directory``."""

    directory: Path
    mode: Literal["embedded", "http"] = "embedded"
    host: str = "localhost"
    port: int = 8000


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

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    target = location if isinstance(location, ChromaTarget) else ChromaTarget(location)
    if target.mode == "http":
        try:
            client = chromadb.HttpClient(target.host, target.port, settings=chroma_settings)
            client.heartbeat()
        except Exception as exc:  # chromadb raises several unrelated types for a dead server
            where = f"{target.host}:{target.port}"
            raise ServiceUnavailable(f"Chroma server at {where} does not answer: {exc}") from exc
        return client, target.directory
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
        super().__init__(f"cannot open the knowledge base at {path}: {cause} "
                         "(a read-only data home: set WASS_HOME to a folder you can write)")
