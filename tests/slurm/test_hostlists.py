"""Hostlists expanded as Slurm expands them (issue #35, item 1).

Real hostlist forms (zero padding, several bracket groups in one name, comma lists inside and
outside brackets, names that are only a prefix) are expanded by :func:`wass_chat.slurm.hostlist.
expand` and compared with what Slurm's own ``scontrol show hostnames`` prints for them; the views
that read node lists (occupancy, why, queue) go through that one function.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.slurm.test_slurm_away import minimal_conf
from tests.support import require
from wass_chat.slurm.hostlist import HostlistError, collect, expand
from wass_chat.slurm.occupancy import detailed_jobs

FORMS = (
    "n[01-03,07],gpu1",
    "c[1-2]n[01-02]",
    "gpu-a[1-2]-b[3-4]",
    "node[098-101]",
    "node[9-11]",
    "rack[1-2]-node[001-002],login1",
    "n[1,3-4],m[10-11]",
    "cn001",
    "a-b-c[7]",
)


def test_the_cases_the_hand_parser_got_wrong() -> None:
    assert expand("c[1-2]n[01-02]") == ["c1n01", "c1n02", "c2n01", "c2n02"]
    assert expand("gpu-a[1-2]-b[3-4]") == ["gpu-a1-b3", "gpu-a1-b4", "gpu-a2-b3", "gpu-a2-b4"]
    assert expand("node[098-101]") == ["node098", "node099", "node100", "node101"]
    assert expand("(null)") == [] and expand("") == [] and expand("None") == []


def test_every_form_expands_as_scontrol_show_hostnames_does(tmp_path: Path) -> None:
    require(shutil.which("scontrol") is not None, "Slurm's commands are not installed")
    # scontrol only parses it: no controller is contacted
    conf = minimal_conf(tmp_path / "slurm.conf", "ClusterName=forms\nSlurmctldHost=localhost")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    for form in FORMS:
        done = subprocess.run(
            ["scontrol", "show", "hostnames", form],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
            check=True,
        )
        assert expand(form) == done.stdout.split(), form
        assert sorted(expand(collect(expand(form)))) == sorted(expand(form))  # round trip


def test_a_list_that_is_not_a_hostlist_is_one_clear_error() -> None:
    with pytest.raises(HostlistError) as caught:
        expand("n[1-")
    line = caught.value.one_line()
    assert "n[1-" in line and "not a Slurm hostlist: unbalanced brackets" in line


def test_the_occupancy_view_reads_multi_bracket_node_names() -> None:
    """A job on rack[1-2]-node[01-02] (four nodes of two bracket groups), as ``scontrol -d``
    prints its detail lines: every node gets its CPUs, none is lost or invented."""
    line = (
        "JobId=3 JobName=w UserId=u(1) JobState=RUNNING TimeLimit=00:10:00 EndTime=Unknown "
        "Partition=p NodeList=rack[1-2]-node[01-02] NumNodes=4 NumCPUs=6 JOB_GRES=(null)   "
        "Nodes=rack1-node[01-02] CPU_IDs=0 Mem=0 GRES=   "
        "Nodes=rack2-node[01-02] CPU_IDs=0-1 Mem=0 GRES= MinMemoryNode=1G"
    )
    (job,) = detailed_jobs(line)
    assert job.cpus_by_node == (
        ("rack1-node01", 1),
        ("rack1-node02", 1),
        ("rack2-node01", 2),
        ("rack2-node02", 2),
    )
