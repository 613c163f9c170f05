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
        ("no_such_key = 1\n", "no_such_key"),  # unknown key
        ("gpu_idle_cancel_after_min = 0\n", "gpu_idle_cancel_after_min"),  # never "at once"
        ("gpu_idle_cancel_after_min = 20000\n", "gpu_idle_cancel_after_min"),  # over a week
    ],
)
def test_broken_config_names_the_problem(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(cfg)
    assert needle in str(info.value)
    assert "\n" not in info.value.one_line()


def test_a_missing_wass_config_is_an_error_not_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site that points WASS_CONFIG at a mistyped path must hear so, not run on defaults."""
    monkeypatch.setenv("WASS_CONFIG", str(tmp_path / "sttings.toml"))
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "sttings.toml" in info.value.one_line()
    assert "does not exist" in info.value.one_line()
    monkeypatch.setenv("WASS_CONFIG", str(tmp_path))  # a folder, not a file
    with pytest.raises(ConfigError, match="is not a file"):
        load_settings()


def test_the_default_settings_file_is_optional(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WASS_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing-here"))
    assert load_settings().ollama_model == "qwen2.5:3b"


@pytest.mark.parametrize("value", ["", "  ", "."])
def test_an_empty_home_is_refused(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WASS_HOME="" would be the current folder: data written wherever the command runs."""
    monkeypatch.setenv("WASS_HOME", value)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path / "absent.toml")
    assert "home" in info.value.one_line() and "empty" in info.value.one_line()


def test_every_setting_is_documented_in_its_docstring_and_on_the_config_page() -> None:
    """docs/config.md lists every key with its variable; each field has a docstring."""
    from tests.config_fields import documented_attributes
    from wass_chat.config import Settings

    documented = documented_attributes(Settings)
    keys = set(Settings.model_fields)
    assert keys - documented == set()
    page = (Path(__file__).parents[1] / "docs" / "config.md").read_text()
    missing = {k for k in keys if f"`{k}`" not in page or f"`WASS_{k.upper()}`" not in page}
    assert missing == set()


def _openai(tmp_path: Path, **extra: str) -> Path:
    cfg = tmp_path / "config.toml"
    lines = {
        "model_backend": "openai",
        "openai_base_url": "http://127.0.0.1:8080/v1",
        "openai_model": "qwen2.5-3b",
        **extra,
    }
    cfg.write_text("".join(f'{k} = "{v}"\n' for k, v in lines.items()))
    return cfg


def test_the_openai_backend_is_read_from_the_file_and_the_command_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WASS_OPENAI_MODEL", "from-env")
    cfg = _openai(tmp_path, openai_api_key_env="SITE_LLM_KEY")
    s = load_settings(cfg)
    assert (s.model_backend, s.openai_model, s.openai_api_key_env) == (
        "openai",
        "from-env",
        "SITE_LLM_KEY",
    )
    given = load_settings(cfg, {"openai_model": "from-options"})
    assert given.openai_model == "from-options"
    assert load_settings(tmp_path / "absent.toml").model_backend == "ollama"  # the default


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"model_backend": "openai"}, "needs openai_base_url and openai_model"),
        ({"model_backend": "openia"}, "model_backend"),
        ({"openai_base_url": "ftp://gateway/v1"}, "openai_base_url"),
        ({"openai_timeout": "0"}, "openai_timeout"),
        ({"openai_api_key_env": "A", "openai_api_key_file": "/k"}, "not both"),
    ],
)
def test_a_bad_model_backend_setting_is_refused(
    values: dict[str, str], expected: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(tmp_path / "absent.toml", dict(values))
    assert expected in refused.value.one_line()


@pytest.mark.parametrize(
    "values",
    [
        {"openai_api_key_env": "sk-live-0123456789abcdef"},  # the key, not its variable's name
        {"openai_base_url": "http://llm:sk-live-0123456789abcdef@gateway/v1"},
        {"openai_base_url": "http://gateway/v1?api_key=sk-live-0123456789abcdef"},
    ],
)
def test_a_key_written_into_a_setting_is_refused_without_being_echoed(
    values: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(_openai(tmp_path, **values))
    assert "0123456789abcdef" not in refused.value.one_line()
    assert "openai_" in refused.value.one_line()


def test_the_api_key_comes_from_its_file_or_variable_and_never_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wass_chat.agent.model_server import ModelServer, api_key

    key = "wass-test-key-5f0c2e9d41"
    monkeypatch.setenv("SITE_LLM_KEY", key)
    s = load_settings(_openai(tmp_path, openai_api_key_env="SITE_LLM_KEY"))
    assert api_key(s) == key
    server = ModelServer.of(s)
    assert key not in repr(s) + s.model_dump_json() + repr(server) + server.describe()
    key_file = tmp_path / "llm.key"
    key_file.write_text(key + "\n")
    key_file.chmod(0o640)  # the group may read it: refused, naming the setting, not the key
    s = load_settings(_openai(tmp_path, openai_api_key_file=str(key_file)))
    with pytest.raises(ConfigError, match="openai_api_key_file is readable by others") as refused:
        api_key(s)
    assert key not in refused.value.one_line()
    key_file.chmod(0o600)
    assert api_key(s) == key
