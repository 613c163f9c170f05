"""The job_submit.lua plugin: its source, the policy head it runs, and the tokens it reads.

``job_submit.lua`` (next to this file) is a template with two markers: the exported policy
head (:mod:`wass_chat.slurm.plugin.head`) and the node table that guards capacity. Rendering
fills both; installing writes the result next to ``$SLURM_CONF``, where slurmctld re-reads it on
the next submission.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path

from sim.atomic_files import write_atomic
from sim.errors import InputError
from sim.model import Platform
from wass_chat.slurm.plugin.head import PolicyHead, head_to_lua

HEAD_MARKER = "local POLICY_HEAD = nil -- @WASS_POLICY_HEAD@"
NODES_MARKER = "local NODE_TABLE = nil -- @WASS_NODE_TABLE@"


def plugin_template() -> str:
    """The plugin source as shipped (no head, no node table)."""
    return files("wass_chat.slurm.plugin").joinpath("job_submit.lua").read_text()


def template_path() -> Path:
    return Path(str(files("wass_chat.slurm.plugin").joinpath("job_submit.lua")))


def node_table_to_lua(platform: Platform) -> str:
    """``{ ["n1"] = {cores=2, memory_mb=2000, gpus=0}, ... }`` for the capacity guard."""
    rows = [
        f'    ["{n.name}"] = {{cores = {n.cores}, memory_mb = {n.memory // 2**20}, '
        f"gpus = {n.gpus}}},"
        for n in platform.nodes
    ]
    return "{\n" + "\n".join(rows) + "\n}"


def render_plugin(
    head: PolicyHead | None = None, nodes: Platform | None = None, template: str | None = None
) -> str:
    """The plugin source with the head and node table filled in (each optional).

    ``template`` replaces the shipped source (``wass-chat plugin bench --template`` uses it to
    measure another version of the plugin).
    """
    text = plugin_template() if template is None else template
    if head is not None:
        text = text.replace(HEAD_MARKER, "local POLICY_HEAD = " + head_to_lua(head))
    if nodes is not None:
        text = text.replace(NODES_MARKER, "local NODE_TABLE = " + node_table_to_lua(nodes))
    return text


def slurm_conf_dir() -> Path:
    """The directory of ``$SLURM_CONF`` (default ``/etc/slurm``), where the plugin must live."""
    conf = os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")
    return Path(conf).parent


OUR_SIGNATURE = "wass-chat job_submit plugin"
"""A phrase of the shipped plugin's header comment: a script holding it is ours to replace."""


class PluginConflict(InputError):
    """A ``job_submit.lua`` that is not ours is already installed: the site's own rules would be
    lost, so it is left alone unless the person asks (``--force``, which keeps a backup)."""

    kind = "plugin target"


def is_our_plugin(path: Path) -> bool:
    """Whether ``path`` holds a plugin written by wass-chat (any version)."""
    try:
        return OUR_SIGNATURE in path.read_text(errors="replace")
    except OSError:
        return False


def refuse_site_plugin(path: Path) -> None:
    """Raise :class:`PluginConflict` if ``path`` holds a script that is not ours."""
    if path.exists() and not is_our_plugin(path):
        raise PluginConflict(
            str(path),
            [
                "it holds a site's own job_submit.lua, not wass-chat's; merge our plugin into "
                "it by hand (wass-chat plugin export -o FILE), or pass --force to replace it "
                "(a copy is kept as job_submit.lua.bak-<time>)"
            ],
        )


def install_plugin(text: str, directory: Path | None = None, force: bool = False) -> Path:
    """Write ``job_submit.lua`` atomically into ``directory`` (default: next to SLURM_CONF).

    An earlier wass-chat plugin there is replaced. A site's own script is refused
    (:class:`PluginConflict`) unless ``force``; then it is first copied to
    ``job_submit.lua.bak-<UTC time>`` (never over an earlier backup), so nothing is lost.
    The two scripts are not merged: Slurm runs one ``job_submit.lua``, and joining a site's
    Lua with ours automatically could change what its rules do.
    """
    target_dir = directory or slurm_conf_dir()
    if not target_dir.is_dir():
        raise InputError(str(target_dir), ["Slurm configuration directory does not exist"])
    path = target_dir / "job_submit.lua"
    if path.exists() and not is_our_plugin(path):
        if not force:
            refuse_site_plugin(path)
        backup_plugin(path)
    write_atomic(path, text)
    path.chmod(0o644)
    return path


def backup_plugin(path: Path) -> Path:
    """Copy ``path`` to ``<name>.bak-<UTC time>`` next to it, durably, before it is replaced."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while backup.exists():  # two installs in one second: never overwrite a backup
        backup = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    write_atomic(backup, path.read_bytes())  # fsync'd, its folder too
    shutil.copymode(path, backup)
    return backup
