"""Settings: one typed object, read from a TOML file and ``WASS_*`` environment variables.

Precedence (highest first): environment variables, the TOML file, defaults. The TOML file is
``$WASS_CONFIG`` if set, else ``$XDG_CONFIG_HOME/wass-chat/config.toml`` (if it exists).
``OLLAMA_HOST`` is honoured too, as the Ollama client itself does. Options given on the command
line (``--model-backend``, ``--model-url``...) win over all three (:func:`use_command_line`).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sim.errors import ConfigError

if TYPE_CHECKING:
    from kb.chroma_client import ChromaTarget


def _xdg(var: str, fallback: str) -> Path:
    return Path(os.environ.get(var) or Path.home() / fallback)


def default_home() -> Path:
    """``$XDG_DATA_HOME/wass-chat`` (``~/.local/share/wass-chat``)."""
    return _xdg("XDG_DATA_HOME", ".local/share") / "wass-chat"


def config_path() -> Path:
    explicit = os.environ.get("WASS_CONFIG")
    if explicit:
        return Path(explicit)
    return _xdg("XDG_CONFIG_HOME", ".config") / "wass-chat" / "config.toml"


class Settings(BaseSettings):
    """Everything a site can configure. Each field maps to ``WASS_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="WASS_", extra="forbid")

    home: Path = Field(default_factory=default_home)
    """Data home: knowledge base, models, decision log, sacct cache, conversations."""

    ollama_host: str = Field(
        default_factory=lambda: os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
    )
    """Base URL of the user's Ollama server."""
    ollama_model: str = "qwen2.5:3b"
    """A small local model that does tool calling."""
    ollama_timeout: float = 2.0
    """Seconds to wait for Ollama before falling back to offline mode."""
    model_backend: Literal["ollama", "openai"] = "ollama"
    """Which model server the online mode asks: ``ollama`` (its own API, ``ollama_*``) or
    ``openai``: any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp's server, a
    site gateway), ``openai_*``."""
    openai_base_url: str | None = None
    """Base URL of the OpenAI-compatible API, with its ``/v1`` (``http://127.0.0.1:8080/v1``);
    needed when ``model_backend`` is ``openai``."""
    openai_model: str | None = None
    """The model's name as that server lists it (``GET /models``); needed with ``openai``."""
    openai_api_key_env: str | None = None
    """Name of an environment variable holding the server's API key (the key is never a
    setting's value); None and no ``openai_api_key_file``: no key (a local server)."""
    openai_api_key_file: Path | None = None
    """File holding that key, refused unless only its owner may read it (chmod 600)."""
    openai_timeout: float = 2.0
    """Seconds to wait for the OpenAI-compatible server to answer before offline mode."""
    model_answer_timeout: float = 300.0
    """Seconds to wait for one model response, either backend (a small model on CPU is slow,
    not hung; past it the session answers offline)."""
    chroma_mode: Literal["embedded", "http"] = "embedded"
    """``embedded``: Chroma on disk under ``home``; ``http``: a Chroma server (multi-user)."""
    chroma_host: str = "127.0.0.1"
    """Host of the Chroma server when ``chroma_mode`` is ``http``."""
    chroma_port: int = 8000
    """Port of the Chroma server when ``chroma_mode`` is ``http``."""
    chroma_tls: bool = False
    """Reach the Chroma server over HTTPS (``scripts/kb-server``'s proxy); implied by
    ``chroma_ca_file``."""
    chroma_ca_file: Path | None = None
    """Certificate the Chroma server's TLS is checked against (the proxy's self-signed
    ``tls/cert.pem``); None: the system's certificate authorities."""
    chroma_token_file: Path | None = None
    """File (mode 0600) holding the bearer token sent to the Chroma server's proxy."""
    chroma_token_env: str | None = None
    """Name of an environment variable holding that token (when no ``chroma_token_file``)."""
    kb_sources: list[str] | None = None
    """Sources retrieval may return and explanations cite: any of ``simulated``, ``slurm``
    (real runs), ``simulated-realised`` (``estimates seed`` histories); None: every source.
    A site sharing a store limits it to the ones it trusts."""
    network_model: Literal["fair", "ideal"] = "fair"
    """Default network model of the simulator."""
    slurm_partition: str | None = None
    """Partition used by ``submit`` and ``platform from-slurm``; None: Slurm's default."""
    gpu_idle_cancel_after_min: float = 60.0
    """Minutes a running job must have held GPUs at 0% before cancelling it may be proposed
    (``wass-chat gpu idle --propose-cancel``, MCP ``plan_cancel_idle_gpu``); a person approves."""

    @field_validator("home", mode="before")
    @classmethod
    def _home_is_named(cls, value: object) -> object:
        # An empty WASS_HOME would be Path(""), the current folder: data written wherever
        # the command happens to run.
        if isinstance(value, str | Path) and str(value).strip() in ("", "."):
            raise ValueError("is empty: name a folder, or unset it for the default")
        return value

    @field_validator("ollama_timeout", "openai_timeout", "model_answer_timeout")
    @classmethod
    def _timeout_is_positive(cls, value: float) -> float:
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"must be a number of seconds > 0, got {value}")
        return value

    @field_validator("gpu_idle_cancel_after_min")
    @classmethod
    def _idle_minutes(cls, value: float) -> float:
        if not (math.isfinite(value) and 0 < value <= 10080):
            raise ValueError(f"must be minutes > 0 and at most 10080 (a week), got {value}")
        return value

    @field_validator("chroma_port")
    @classmethod
    def _port_is_a_port(cls, value: int) -> int:
        if not 1 <= value <= 65535:
            raise ValueError(f"must be a TCP port, 1 to 65535, got {value}")
        return value

    @field_validator("ollama_host")
    @classmethod
    def _host_is_a_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if "://" in value:
            usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        else:  # Ollama's own HOST[:PORT] form
            usable = re.fullmatch(r"(?:[\w.-]+|\[[0-9A-Fa-f:]+\])(?::\d+)?", value) is not None
        if not usable:
            raise ValueError(f"must be an http(s)://HOST[:PORT] URL, got {value!r}")
        return value

    @field_validator("openai_base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"must be an http(s)://HOST[:PORT]/PATH URL, got {value!r}")
        if parts.username is not None or parts.password is not None or parts.query:
            # the value may hold a secret: never echo it
            raise ValueError(
                "must hold no user, password or query: put the key in openai_api_key_file"
            )
        return value

    @field_validator("openai_api_key_env")
    @classmethod
    def _names_a_variable(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            # most likely the key itself was written here: never echo it
            raise ValueError("must be the name of an environment variable, not the key itself")
        return value

    @model_validator(mode="after")
    def _backend_is_complete(self) -> Settings:
        if self.model_backend == "openai":
            missing = [k for k in ("openai_base_url", "openai_model") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"model_backend 'openai' needs {' and '.join(missing)}")
        if self.openai_api_key_env is not None and self.openai_api_key_file is not None:
            raise ValueError("set one of openai_api_key_env and openai_api_key_file, not both")
        return self

    @field_validator("chroma_host", "ollama_model", "openai_model", "slurm_partition")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():  # an empty variable is a mistake, not "unset"
            raise ValueError("is empty: give a value, or unset it for the default")
        return value

    @field_validator("home")
    @classmethod
    def _home_is_a_folder(cls, value: Path) -> Path:
        if value.exists() and not value.is_dir():
            raise ValueError(f"{value} is a file, not a folder")
        return value

    # --- derived paths ------------------------------------------------------------------
    @property
    def kb_dir(self) -> Path:
        return self.home / "kb"

    def kb_target(self) -> ChromaTarget:
        """Where the knowledge base lives: embedded under ``kb_dir`` or on a Chroma server."""
        from kb.chroma_client import ChromaTarget
        from wass_chat.secret_files import read_secret

        if self.chroma_mode == "embedded":
            return ChromaTarget(self.kb_dir)
        return ChromaTarget(
            self.kb_dir,
            self.chroma_mode,
            self.chroma_host,
            self.chroma_port,
            tls=self.chroma_tls or self.chroma_ca_file is not None,
            ca_file=self.chroma_ca_file,
            token=read_secret(self.chroma_token_file, self.chroma_token_env, "chroma_token"),
        )

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    @property
    def runs_dir(self) -> Path:
        """Decision log of submitted runs."""
        return self.home / "runs"

    @property
    def demo_home(self) -> Path:
        """The demo's own data (its runs), apart from the site's: only the demo reads it, so a
        site's ``runs``, ``status``, reports and explanations never see a demo run."""
        return self.home / "demo"

    @property
    def demo_runs_dir(self) -> Path:
        """Decision log of the demo runs (``demo-<workflow>-<scheduler>``), under the demo home."""
        return self.demo_home / "runs"

    @property
    def sacct_dir(self) -> Path:
        return self.home / "sacct"

    @property
    def history_dir(self) -> Path:
        return self.home / "history"


def load_settings(
    path: Path | None = None, command_line: dict[str, object] | None = None
) -> Settings:
    """Read settings; a broken file or variable raises :class:`ConfigError` naming it.

    A file named by ``$WASS_CONFIG`` must exist: a site that points at a settings file and
    gets the defaults instead (a typo in the path) would run against the wrong data home. The
    default location is optional. ``command_line`` values win over the environment and the
    file; a problem with one of them is said to come from the command line."""
    explicit = path is None and bool(os.environ.get("WASS_CONFIG"))
    path = path or config_path()
    values: dict[str, object] = {}
    if explicit and not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise ConfigError(str(path), [f"WASS_CONFIG names a settings file that {what}"])
    if path.exists():
        try:
            values = tomllib.loads(path.read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(str(path), [str(exc)]) from exc
    # Environment variables win over the file: drop file keys that the environment sets.
    for key in list(values):
        if f"WASS_{key.upper()}" in os.environ:
            del values[key]
    given = command_line or {}
    try:
        return Settings(**{**values, **given})  # type: ignore[arg-type]
    except ValidationError as exc:
        errors = exc.errors()
        problems = [
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" if e["loc"] else e["msg"]
            for e in errors
        ]
        if any(e["loc"] and e["loc"][0] in given for e in errors):
            subject = "command line"
        elif given and any(not e["loc"] for e in errors):  # settings that do not go together
            subject = f"{path} with the command line"
        else:
            subject = str(path)
        raise ConfigError(subject, problems) from exc


_COMMAND_LINE: dict[str, object] = {}
"""Settings given as command-line options, for this process (:func:`use_command_line`)."""


def use_command_line(values: dict[str, object]) -> Settings:
    """Make ``values`` (settings given as options) win for the rest of this process; the
    process-wide settings are read again with them, a bad one refused (:class:`ConfigError`)."""
    load_settings(command_line={**_COMMAND_LINE, **values})  # refused before anything changes
    _COMMAND_LINE.update(values)
    settings.cache_clear()
    return settings()


def forget_command_line() -> None:
    """Back to the file's and the environment's settings (a new command in this process)."""
    if _COMMAND_LINE:
        _COMMAND_LINE.clear()
        settings.cache_clear()


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process-wide settings (read once), with the command line's (:func:`use_command_line`)."""
    return load_settings(command_line=_COMMAND_LINE)
