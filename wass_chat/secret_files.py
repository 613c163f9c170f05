"""Secrets a client sends (the Chroma proxy's token, a model server's API key): read from a file
only its owner may read, or from a named environment variable; never a setting's value itself.

Errors name the setting, the file or the variable, never the secret.
"""

from __future__ import annotations

import os
from pathlib import Path

from sim.errors import ConfigError


def read_secret(secret_file: Path | None, secret_env: str | None, setting: str) -> str | None:
    """The secret from ``secret_file`` (refused if group or others may read it) or from the
    environment variable named ``secret_env``; None when neither is set.

    ``setting`` is the settings' prefix (``chroma_token``: ``chroma_token_file`` and
    ``chroma_token_env``), named in the errors."""
    if secret_file is not None:
        try:
            mode = secret_file.stat().st_mode
            text = secret_file.read_text().strip()
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise ConfigError(str(secret_file), [f"{setting}_file: {why}"]) from None
        if mode & 0o077:
            raise ConfigError(
                str(secret_file),
                [f"{setting}_file is readable by others (mode {mode & 0o777:o}): chmod 600 it"],
            )
        if not text:
            raise ConfigError(str(secret_file), [f"{setting}_file is empty"])
        return text
    if secret_env:
        text = os.environ.get(secret_env, "").strip()
        if not text:
            raise ConfigError(secret_env, [f"{setting}_env names an unset or empty variable"])
        return text
    return None
