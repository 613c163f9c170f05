"""Running sacct: month windows, the argument list, and a clear error when Slurm is unreachable."""

from __future__ import annotations

import shutil
from datetime import datetime

import pytest

from sim.errors import ServiceUnavailable
from tests.support import require
from wass_chat.sacct.fetch import fetch_sacct, month_windows, sacct_argv, supported_fields
from wass_chat.sacct.fields import FIELD_NAMES


def test_month_windows_split_at_month_boundaries():
    windows = month_windows(datetime(2023, 12, 15), datetime(2024, 2, 10, 12))
    assert windows == [
        (datetime(2023, 12, 15), datetime(2024, 1, 1)),
        (datetime(2024, 1, 1), datetime(2024, 2, 1)),
        (datetime(2024, 2, 1), datetime(2024, 2, 10, 12)),
    ]


def test_argv_has_every_field_a_header_and_no_shell():
    argv = sacct_argv(datetime(2024, 1, 1), datetime(2024, 2, 1))
    assert argv[:3] == ["sacct", "-a", "-P"]  # no -n: the header names the columns
    assert argv[3] == "--format=" + ",".join(FIELD_NAMES)
    assert argv[4:] == ["-S", "2024-01-01T00:00:00", "-E", "2024-02-01T00:00:00"]


def test_only_fields_this_sacct_offers_are_requested():
    # Slurm 22.05's --helpformat has no Dependency field; asking for it makes sacct fail.
    helpformat = " ".join(n for n in FIELD_NAMES if n != "Dependency").upper()
    fields = supported_fields(helpformat)
    assert "Dependency" not in fields
    assert set(fields) == set(FIELD_NAMES) - {"Dependency"}


def test_missing_sacct_is_service_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ServiceUnavailable, match="not installed"):
        list(fetch_sacct(datetime(2024, 1, 1), datetime(2024, 1, 2)))


def test_unreachable_slurm_is_one_line_service_unavailable(monkeypatch, tmp_path):
    require(shutil.which("sacct") is not None, "sacct (Slurm client) not installed")
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "ClusterName=nowhere\nSlurmctldHost=localhost\nAccountingStorageType="
        "accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\n"
        "AccountingStoragePort=1\n"
    )
    monkeypatch.setenv("SLURM_CONF", str(conf))
    with pytest.raises(ServiceUnavailable) as caught:
        list(fetch_sacct(datetime(2024, 1, 1), datetime(2024, 1, 2)))
    assert "\n" not in caught.value.one_line() and "sacct" in caught.value.one_line()
