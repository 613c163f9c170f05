"""The knowledge base as this site's settings name it: the one opener below the CLI.

``wass-chat kb ...``, the learner and the chat open the store through :func:`open_kb`, so each
reads the same cases: embedded under ``WASS_HOME/kb`` or on the site's Chroma server, the
answers citing only the sources the site trusts (``kb_sources``), and a real run's case
confirmed by sacct before it is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb.store import KnowledgeBase
    from wass_chat.config import Settings


def open_kb(
    location: Path | Settings | None, existing: bool = False, **kwargs: Any
) -> KnowledgeBase:
    """The knowledge base at ``location`` (a directory), or the given or process settings' one
    (embedded, or on the Chroma server the settings name).

    ``existing``: a directory that holds no knowledge base is an error (StoreMissing), not a
    new empty store made where a mistyped ``--kb`` points (commands that only read or rewrite
    a store pass it; seeding, merging, learning and restoring create one)."""
    from kb.store import SIDECAR_FILE, KnowledgeBase, StoreMissing
    from wass_chat.config import Settings as SettingsType
    from wass_chat.config import settings

    cfg = location if isinstance(location, SettingsType) else settings()
    kwargs.setdefault("sources", cfg.kb_sources)
    if "accounting" not in kwargs:  # real runs' cases are confirmed by sacct before a write
        from wass_chat.slurm.commands import SlurmCommands

        kwargs["accounting"] = SlurmCommands()
    directory = location if isinstance(location, Path) else None
    if directory is None and cfg.chroma_mode == "embedded":
        directory = cfg.kb_dir
    if existing and directory is not None and not (directory / SIDECAR_FILE).is_file():
        raise StoreMissing(
            str(directory),
            ["holds no knowledge base (no cases.sqlite): check --kb, or seed or restore one"],
        )
    if location is None or isinstance(location, SettingsType):
        return KnowledgeBase(cfg.kb_target(), **kwargs)
    return KnowledgeBase(location, **kwargs)
