"""The model server's command-line options, shared by ``wass-chat`` (the app) and ``ask``.

Each maps onto a setting (docs/config.md) and wins over the settings file and the environment
for the process (:func:`wass_chat.config.use_command_line`). ``--model-url`` and ``--model``
set the backend in use's own keys (``ollama_host``/``ollama_model`` or
``openai_base_url``/``openai_model``). There is deliberately no option taking the key itself:
a command line is seen by every user of the machine (``ps``) and kept in shell histories.
"""

from __future__ import annotations

from pathlib import Path

import typer

BACKEND = typer.Option(
    None,
    "--model-backend",
    help="Which model server answers: ollama, or openai (any OpenAI-compatible endpoint).",
)
URL = typer.Option(
    None,
    "--model-url",
    help="That server's URL: Ollama's host, or the OpenAI-compatible API's base (.../v1).",
)
MODEL = typer.Option(None, "--model", help="The model's name on that server.")
KEY_ENV = typer.Option(
    None,
    "--api-key-env",
    help="Name of the environment variable holding the OpenAI-compatible server's API key.",
)
KEY_FILE = typer.Option(
    None, "--api-key-file", help="File holding that key (only its owner may read it: chmod 600)."
)


def apply_model_options(
    backend: str | None,
    url: str | None,
    model: str | None,
    key_env: str | None,
    key_file: Path | None,
) -> None:
    """Make the options given win for this process; a bad value is refused in one line."""
    from wass_chat.config import settings, use_command_line

    if backend is None and url is None and model is None and key_env is None and key_file is None:
        return
    openai = (backend or settings().model_backend) == "openai"
    given: dict[str, object | None] = {
        "model_backend": backend,
        "openai_base_url" if openai else "ollama_host": url,
        "openai_model" if openai else "ollama_model": model,
    }
    values = {key: value for key, value in given.items() if value is not None}
    if key_env is not None or key_file is not None:  # the key named here replaces the file's
        values |= {"openai_api_key_env": key_env, "openai_api_key_file": key_file}
    use_command_line(values)
