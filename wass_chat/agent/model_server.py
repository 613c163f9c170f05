"""The model server the online mode asks: Ollama, or any OpenAI-compatible endpoint.

``Settings.model_backend`` picks one. Each is probed the same way before a session goes online
(within its timeout: Ollama's ``/api/tags``, an OpenAI-compatible server's ``/models``, both
listing the models the server has), and gives the LangChain chat model the agent runs on
(``ChatOllama``, or ``ChatOpenAI(base_url=...)``). The OpenAI-compatible server's API key is
read only here, when connecting (:func:`api_key`): it is never a setting's value, and never in
a repr, a log line, an error or ``--json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from wass_chat.config import Settings
from wass_chat.secret_files import read_secret

Backend = Literal["ollama", "openai"]

NO_KEY = "none"
"""What the OpenAI client sends when no key is configured (local servers ask for none; the
client itself insists on one)."""


@dataclass(frozen=True)
class ModelServer:
    """Which server answers, with which model, where (never the key)."""

    backend: Backend
    model: str
    url: str

    @classmethod
    def of(cls, settings: Settings) -> ModelServer:
        if settings.model_backend == "openai":
            assert settings.openai_base_url and settings.openai_model  # the settings check it
            return cls("openai", settings.openai_model, settings.openai_base_url.rstrip("/"))
        url = settings.ollama_host.rstrip("/")
        return cls("ollama", settings.ollama_model, url if "://" in url else "http://" + url)

    @property
    def label(self) -> str:
        return "OpenAI-compatible server" if self.backend == "openai" else "Ollama server"

    def describe(self) -> str:
        """``qwen2.5:3b on Ollama server at http://...``: what the header and ``--json`` show."""
        parts = urlsplit(self.url)
        shown = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return f"{self.model} on {self.label} at {shown}"

    def as_json(self) -> dict[str, str]:
        return {"backend": self.backend, "name": self.model, "url": self.url}


def with_model(settings: Settings, model: str) -> Settings:
    """``settings`` with ``model`` as the model of the backend in use (the app's F4)."""
    field = "openai_model" if settings.model_backend == "openai" else "ollama_model"
    return settings.model_copy(update={field: model})


def api_key(settings: Settings) -> str | None:
    """The OpenAI-compatible server's key, from its file or variable (raises ``ConfigError``
    naming the setting, never the key); None when none is configured, or on Ollama."""
    if settings.model_backend != "openai":
        return None
    return read_secret(settings.openai_api_key_file, settings.openai_api_key_env, "openai_api_key")


def timeout(settings: Settings) -> float:
    """Seconds to wait for the server to connect or answer the probe."""
    openai = settings.model_backend == "openai"
    return settings.openai_timeout if openai else settings.ollama_timeout


@dataclass(frozen=True)
class ProbeResult:
    """Whether the server answered with the configured model, and in words why not."""

    ok: bool
    detail: str


def _listed_models(settings: Settings, key: str | None) -> list[str]:
    """The names of the models the server has (raises what httpx raises when it does not
    answer, or answers with an error status)."""
    import httpx

    server = ModelServer.of(settings)
    if server.backend == "openai":
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        response = httpx.get(f"{server.url}/models", headers=headers, timeout=timeout(settings))
        response.raise_for_status()
        return sorted({str(m.get("id", "")) for m in response.json().get("data", [])} - {""})
    response = httpx.get(f"{server.url}/api/tags", timeout=timeout(settings))
    response.raise_for_status()
    return sorted({m.get("name", "") for m in response.json().get("models", [])} - {""})


def served_models(settings: Settings) -> list[str]:
    """The models the app can switch to: the server's, or none when it does not answer in time."""
    import httpx

    key = api_key(settings)  # a broken key setting is an error, not "no models"
    try:
        return _listed_models(settings, key)
    except (httpx.HTTPError, ConnectionError, OSError, ValueError):
        return []


def probe(settings: Settings) -> ProbeResult:
    """Ask the server for its models within its timeout; say why when it will not do."""
    import httpx

    server = ModelServer.of(settings)
    where = f"{server.label} at {server.url}"
    key = api_key(settings)  # a broken key setting is an error (exit 2), not offline mode
    try:
        models = set(_listed_models(settings, key))
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        if status in (401, 403):
            why = f"{where} refused the API key (HTTP {status})"
        else:
            asked = "/models" if server.backend == "openai" else "/api/tags"
            why = f"{where} answered HTTP {status} to {asked} (is the base URL right?)"
        return ProbeResult(False, f"{why}; offline mode")
    except (httpx.HTTPError, ConnectionError, OSError, ValueError) as exc:
        return ProbeResult(False, f"no {where} ({type(exc).__name__}); offline mode")
    wanted = server.model
    if wanted in models or (server.backend == "ollama" and f"{wanted}:latest" in models):
        return ProbeResult(True, server.describe())
    if server.backend == "ollama":
        hint = f"run: ollama pull {wanted}"
    else:
        hint = "it serves: " + (", ".join(sorted(models)[:5]) or "none")
    return ProbeResult(False, f"{where} has no model {wanted!r} ({hint}); offline mode")


def chat_model(settings: Settings) -> Any:
    """The LangChain chat model on the configured server, with bounded timeouts and no
    retries (a server that stops answering sends the session offline at once)."""
    import httpx

    server = ModelServer.of(settings)
    limits = httpx.Timeout(settings.model_answer_timeout, connect=timeout(settings))
    if server.backend == "openai":
        from pydantic import SecretStr

        return _compatible_chat_openai()(
            model=server.model,
            base_url=server.url,
            api_key=SecretStr(api_key(settings) or NO_KEY),
            temperature=0.0,
            timeout=limits,
            max_retries=0,
            # No streaming on a turn that offers tools: llama-cpp-python's server refuses it
            # ("Automatic streaming tool choice is not supported"); the answer arrives whole.
            disable_streaming="tool_calling",
        )
    from langchain_ollama import ChatOllama

    return ChatOllama(
        model=server.model,
        base_url=settings.ollama_host,
        temperature=0.0,
        client_kwargs={"timeout": limits},
    )


@cache
def _compatible_chat_openai() -> Any:
    """``ChatOpenAI`` sending ``""``, not ``null``, as the content of an assistant message that
    only calls tools: OpenAI and vLLM take either, llama-cpp-python's server refuses ``null``
    (its request schema wants a string: HTTP 500 on the turn after every tool call)."""
    from langchain_openai import ChatOpenAI

    class CompatibleChatOpenAI(ChatOpenAI):  # type: ignore[misc]
        def _get_request_payload(
            self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
        ) -> dict[str, Any]:
            payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
            for message in payload.get("messages", []):
                if message.get("role") == "assistant" and message.get("content") is None:
                    message["content"] = ""
            return payload

    return CompatibleChatOpenAI


def connection_errors(settings: Settings) -> tuple[type[BaseException], ...]:
    """What the chat model raises when its server stops answering or fails (the session goes
    offline): connection errors and timeouts; on an OpenAI-compatible server also any error
    status (a server whose schema refuses a request answers 4xx/5xx mid-conversation)."""
    import httpx

    errors: tuple[type[BaseException], ...] = (
        httpx.ConnectError,
        httpx.TimeoutException,
        ConnectionError,
    )
    if settings.model_backend == "openai":
        import openai

        errors += (openai.APIError,)  # its connection errors, timeouts and error statuses
    return errors
