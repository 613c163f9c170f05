"""Settings: file, environment precedence, and broken input reported as ConfigError."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.errors import ConfigError
from wass_chat.config import load_settings


def test_file_values_are_read_and_paths_derive_from_home(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'home = "{tmp_path / "data"}"\nollama_model = "llama3.2:3b"\n')
    s = load_settings(cfg)
    assert s.ollama_model == "llama3.2:3b"
    assert s.kb_dir == tmp_path / "data" / "kb"
    assert s.runs_dir == tmp_path / "data" / "runs"


def test_environment_wins_over_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('ollama_model = "from-file"\n')
    monkeypatch.setenv("WASS_OLLAMA_MODEL", "from-env")
    assert load_settings(cfg).ollama_model == "from-env"


def test_ollama_host_variable_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    assert load_settings(tmp_path / "absent.toml").ollama_host == "http://127.0.0.1:9"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("home = [1, 2", "config.toml"),  # not TOML
        ('chroma_mode = "cloud"\n', "chroma_mode"),  # not an allowed value
        ('no_such_key = 1\n', "no_such_key"),  # unknown key
    ],
)
def test_broken_config_names_the_problem(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(cfg)
    assert needle in str(info.value)
    assert "\n" not in info.value.one_line()
