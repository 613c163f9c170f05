"""The CLI contract: user-facing errors become one line on stderr and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wass_chat.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_help_lists_the_command_tree() -> None:
    out = run_cli("--help")
    assert out.returncode == 0
    for command in ("simulate", "bench", "workflow", "platform", "kb", "submit", "report", "ask"):
        assert command in out.stdout, command


def test_broken_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('chroma_mode = "cloud"\n')
    import os

    env = {**os.environ, "WASS_CONFIG": str(cfg)}
    out = run_cli("kb", "stats", env=env)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: invalid config"), out.stderr
    assert "Traceback" not in out.stderr


def test_unknown_command_is_a_usage_error() -> None:
    out = run_cli("no-such-command")
    assert out.returncode == 2


def test_a_file_that_is_not_a_checkpoint_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "policy.pt"
    bad.write_bytes(b"\x80\x02not a torch file at all")
    out_dir = tmp_path / "run"
    for args in (
        ("train", "evaluate", str(bad), "--instances", "1"),
        ("train", "policy", "--no-rag", "--init", str(bad), "--out", str(out_dir)),
    ):
        out = run_cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "not a policy checkpoint" in lines[0], out.stderr
    assert not out_dir.exists()  # nothing half-written


def test_train_with_fewer_instances_than_an_update_draws_is_one_line(tmp_path: Path) -> None:
    """Each PPO update draws ``instances_per_update`` (4) distinct training instances: fewer is
    refused before anything is built, not a numpy traceback mid-run."""
    out_dir = tmp_path / "run"
    out = run_cli("train", "policy", "--no-rag", "--instances", "2", "--out", str(out_dir))
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--instances 4 or more" in lines[0], out.stderr
    assert not out_dir.exists()


def test_a_checkpoint_that_cannot_be_written_is_refused_before_training(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "x.pt"
    for args in (
        ("train", "decima", "--steps", "1", "--out", str(missing)),
        ("whatif", "learn", "--policy", "gat", "--train", "--save", str(missing)),
    ):
        out = run_cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert lines == [
            f"error: cannot write {missing}: the folder {missing.parent} does not exist"
        ]
        assert "step" not in out.stdout  # refused before the first training step


def test_a_checkpoint_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    from policy.learned.decima_model import initial_net, load_decima, save_decima
    from policy.torch_checkpoint import CheckpointWriteError

    net = initial_net(0)
    path = tmp_path / "decima.pt"
    path.write_bytes(b"the previous checkpoint")
    save_decima(net, str(path), {})
    assert load_decima(str(path))[0].state_dict().keys() == net.state_dict().keys()
    in_the_way = tmp_path / "a-folder.pt"
    in_the_way.mkdir()
    with pytest.raises(CheckpointWriteError, match="cannot write"):
        save_decima(net, str(in_the_way), {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder.pt", "decima.pt"]  # no temp
