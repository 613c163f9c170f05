"""Opening a chat session: Ollama when it answers with the model, else the offline mode.

:func:`open_session` probes the configured Ollama server within ``Settings.ollama_timeout``
(2 s) and returns an :class:`~wass_chat.agent.online.OllamaSession` when it answers and has the
model, otherwise an :class:`~wass_chat.agent.session_base.OfflineSession`; the first event of the
first answer says which (:class:`~wass_chat.agent.events.ModeChanged`). The sessions themselves
live in :mod:`wass_chat.agent.session_base` and :mod:`wass_chat.agent.online`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.errors import ServiceUnavailable
from wass_chat.agent.events import ChatSession
from wass_chat.agent.facts.facts import Facts
from wass_chat.agent.session_base import OfflineSession, SessionBase
from wass_chat.config import Settings

__all__ = ["OfflineSession", "ProbeResult", "SessionBase", "ollama_models", "open_session",
           "probe_ollama"]  # fmt: skip


@dataclass(frozen=True)
class ProbeResult:
    """Whether Ollama answered with the configured model, and in words why not."""

    ok: bool
    detail: str


def _ollama_url(settings: Settings) -> str:
    url = settings.ollama_host.rstrip("/")
    return url if "://" in url else "http://" + url


def _ollama_tags(settings: Settings) -> list[str]:
    """The names of the models Ollama has (raises what httpx raises when it does not answer)."""
    import httpx

    response = httpx.get(f"{_ollama_url(settings)}/api/tags", timeout=settings.ollama_timeout)
    response.raise_for_status()
    return sorted({m.get("name", "") for m in response.json().get("models", [])} - {""})


def ollama_models(settings: Settings) -> list[str]:
    """The models the app can switch to: Ollama's, or none when it does not answer in time."""
    import httpx

    try:
        return _ollama_tags(settings)
    except (httpx.HTTPError, ConnectionError, OSError, ValueError):
        return []


def probe_ollama(settings: Settings) -> ProbeResult:
    """Ask Ollama for its models within ``settings.ollama_timeout`` seconds."""
    import httpx

    url = _ollama_url(settings)
    try:
        models = set(_ollama_tags(settings))
    except (httpx.HTTPError, ConnectionError, OSError, ValueError) as exc:
        return ProbeResult(False, f"no Ollama server at {url} ({type(exc).__name__}); offline mode")
    wanted = settings.ollama_model
    if wanted not in models and f"{wanted}:latest" not in models:
        return ProbeResult(
            False,
            f"Ollama at {url} has no model {wanted!r} (run: ollama pull {wanted}); offline mode",
        )
    return ProbeResult(True, f"{wanted} on {url}")


def open_session(settings: Settings | None = None, offline: bool | None = None) -> ChatSession:
    """A chat session: online when Ollama answers (``offline=None``), or as forced.

    ``offline=True`` never contacts Ollama; ``offline=False`` raises
    :class:`~sim.errors.ServiceUnavailable` when it does not answer.
    """
    if settings is None:
        from wass_chat.config import settings as process_settings

        settings = process_settings()
    from wass_chat.agent.facts.demo_runs import ensure_demo_runs

    ensure_demo_runs(settings)
    facts = Facts(settings)
    if offline:
        return OfflineSession(facts, "offline mode requested")
    probe = probe_ollama(settings)
    if not probe.ok:
        if offline is False:
            raise ServiceUnavailable(probe.detail)
        return OfflineSession(facts, probe.detail)
    from wass_chat.agent.online import OllamaSession

    return OllamaSession(facts, probe.detail)
