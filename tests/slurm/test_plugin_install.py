"""`plugin install` never replaces a site's own job_submit.lua silently: it refuses in one line
(exit 2) naming the file and ``--force``; with ``--force`` a backup is kept; an earlier
wass-chat plugin is replaced as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from wass_chat.cli import main
from wass_chat.slurm.plugin import PluginConflict, install_plugin, plugin_template, render_plugin

SITE_SCRIPT = (
    "-- site rules: route short jobs to the debug partition\n"
    "function slurm_job_submit(job_desc, part_list, submit_uid)\n"
    "    return slurm.SUCCESS\nend\n"
)


def test_the_cli_refuses_a_sites_script_in_one_line_before_asking_slurm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "slurm.conf"))
    monkeypatch.setenv("PATH", "/nonexistent")  # no scontrol: the refusal must come first
    script = tmp_path / "job_submit.lua"
    script.write_text(SITE_SCRIPT)
    assert main(["plugin", "install", "--yes"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(script) in err and "--force" in err, err
    assert script.read_text() == SITE_SCRIPT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job_submit.lua"]


def test_force_replaces_a_sites_script_and_keeps_it_as_a_backup(tmp_path: Path) -> None:
    script = tmp_path / "job_submit.lua"
    script.write_text(SITE_SCRIPT)
    with pytest.raises(PluginConflict):
        install_plugin(render_plugin(), tmp_path)
    assert script.read_text() == SITE_SCRIPT
    install_plugin(render_plugin(), tmp_path, force=True)
    assert script.read_text() == plugin_template()
    backups = sorted(tmp_path.glob("job_submit.lua.bak-*"))
    assert [b.read_text() for b in backups] == [SITE_SCRIPT]


def test_two_forced_installs_over_site_scripts_keep_both_backups(tmp_path: Path) -> None:
    script = tmp_path / "job_submit.lua"
    for version in ("one", "two"):
        script.write_text(SITE_SCRIPT + f"-- {version}\n")
        install_plugin(render_plugin(), tmp_path, force=True)
    kept = sorted(b.read_text() for b in tmp_path.glob("job_submit.lua.bak-*"))
    assert kept == [SITE_SCRIPT + "-- one\n", SITE_SCRIPT + "-- two\n"]


def test_an_earlier_wass_chat_plugin_is_replaced_without_force_or_backup(tmp_path: Path) -> None:
    script = tmp_path / "job_submit.lua"
    script.write_text(plugin_template().replace("MAX_COMMENT = 65536", "MAX_COMMENT = 100"))
    install_plugin(render_plugin(), tmp_path)
    assert script.read_text() == plugin_template()
    assert list(tmp_path.glob("*.bak-*")) == []
