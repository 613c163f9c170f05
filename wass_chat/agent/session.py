"""Opening a chat session: the model server when it answers with the model, else offline.

:func:`open_session` probes the configured server (:func:`~wass_chat.agent.model_server.probe`:
Ollama or an OpenAI-compatible endpoint, within its timeout, 2 s) and returns an
:class:`~wass_chat.agent.online.OnlineSession` when it answers and has the model, otherwise an
:class:`~wass_chat.agent.offline.OfflineSession`; the first event of the first answer says
which (:class:`~wass_chat.agent.events.ModeChanged`). The sessions themselves live in
:mod:`wass_chat.agent.offline` and :mod:`wass_chat.agent.online`, over
:mod:`wass_chat.agent.session_base`.
"""

from __future__ import annotations

from sim.errors import ServiceUnavailable
from wass_chat.agent.events import ChatSession
from wass_chat.agent.facts.workflow_tools import WorkflowTools
from wass_chat.agent.model_server import probe
from wass_chat.agent.offline import OfflineSession
from wass_chat.agent.session_base import SessionBase
from wass_chat.config import Settings

__all__ = ["OfflineSession", "SessionBase", "open_session"]


def open_session(settings: Settings | None = None, offline: bool | None = None) -> ChatSession:
    """A chat session: online when the model server answers (``offline=None``), or as forced.

    ``offline=True`` never contacts the server; ``offline=False`` raises
    :class:`~sim.errors.ServiceUnavailable` when it does not answer. A key setting that cannot
    be read raises :class:`~sim.errors.ConfigError`.
    """
    if settings is None:
        from wass_chat.config import settings as process_settings

        settings = process_settings()
    from wass_chat.agent.facts.demo_runs import ensure_demo_runs

    # Probed first: a key setting that cannot be read is refused before anything is written.
    checked = None if offline else probe(settings)
    if checked is not None and not checked.ok and offline is False:
        raise ServiceUnavailable(checked.detail)
    ensure_demo_runs(settings)
    facts = WorkflowTools(settings)
    if checked is None:
        return OfflineSession(facts, "offline mode requested")
    if not checked.ok:
        return OfflineSession(facts, checked.detail)
    from wass_chat.agent.online import OnlineSession

    return OnlineSession(facts, checked.detail)
