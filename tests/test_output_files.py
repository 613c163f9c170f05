"""``-o`` writes only a regular file: a device, a FIFO, a socket, a symlink or a missing folder is
refused in one line with exit code 2 and left exactly as it was (#45 item 5).

The special files are real ones (``mknod`` needs root, which the test machine runs as; the test
is skipped otherwise), checked through every writer: :func:`write_output` (every ``-o`` of the
CLI), :func:`write_atomic` (our own files) and :func:`write_together` (a report and its tables).
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sim.atomic_files import (
    OutputError,
    write_atomic,
    write_output,
    write_output_by,
    write_together,
)
from wass_chat.cli import main

NULL_DEVICE = os.makedev(1, 3)
"""The major and minor numbers of ``/dev/null`` on Linux."""


def _char_device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    os.mknod(path, 0o666 | stat.S_IFCHR, NULL_DEVICE)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _symlink(path: Path) -> None:
    target = path.parent / "target.txt"
    target.write_text("the symlink's target\n")
    path.symlink_to(target)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


SPECIALS: dict[str, Callable[[Path], None]] = {
    "character device": _char_device,
    "FIFO": _fifo,
    "symlink": _symlink,
    "socket": _socket,
}


def _identity(path: Path) -> tuple[int, int, int, int]:
    info = os.lstat(path)
    return info.st_ino, info.st_mode, info.st_rdev, info.st_size


@pytest.mark.parametrize("kind", SPECIALS)
@pytest.mark.parametrize(
    "writer",
    [
        write_output,
        write_atomic,
        lambda p, c: write_together({p: c}),
        lambda p, c: write_output_by(p, lambda tmp: tmp.write_text(c)),
    ],
    ids=["write_output", "write_atomic", "write_together", "write_output_by"],
)
def test_a_special_file_is_refused_and_left_untouched(
    tmp_path: Path, kind: str, writer: Callable[[Path, str], None]
) -> None:
    path = tmp_path / "out.json"
    SPECIALS[kind](path)
    before = _identity(path)
    with pytest.raises(OutputError) as caught:
        writer(path, "{}\n")
    assert "only a regular file is replaced" in caught.value.one_line()
    assert _identity(path) == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temp left
    if kind == "symlink":
        assert (tmp_path / "target.txt").read_text() == "the symlink's target\n"


@pytest.mark.parametrize("kind", SPECIALS)
def test_the_cli_refuses_minus_o_onto_a_special_file_in_one_line_with_exit_2(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.json"
    SPECIALS[kind](path)
    before = _identity(path)
    assert main(["workflow", "generate", "chain", "--tasks", "3", "-o", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: cannot write {path}") and "\n" not in err, err
    assert _identity(path) == before


def test_minus_o_dev_null_leaves_the_system_device_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = _identity(Path("/dev/null"))
    assert main(["platform", "generate", "--nodes", "4", "-o", "/dev/null"]) == 2
    assert "/dev/null is a character device" in capsys.readouterr().err
    after = _identity(Path("/dev/null"))
    assert after == before and stat.S_ISCHR(after[1])


def test_a_missing_folder_is_refused_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "no-such-folder" / "wf.json"
    assert main(["workflow", "generate", "chain", "--tasks", "3", "-o", str(path)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_regular_file_is_replaced_whole_keeping_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_text("old\n")
    path.chmod(0o640)
    write_output(path, "new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o640


def test_a_new_file_gets_the_umask_s_permissions_not_mkstemp_s_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_output(tmp_path / "new.md", "text\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.lstat(tmp_path / "new.md").st_mode) == 0o644


KILLED_WRITER = """
import os, sys, time
from pathlib import Path
import sim.atomic_files as atomic_files

def stuck(fd):  # the content is in the temporary file; the writer is killed before the rename
    print("writing", flush=True)
    time.sleep(600)

atomic_files.os.fsync = stuck
atomic_files.write_atomic(Path(sys.argv[1]), "the new content\\n")
"""


def test_a_writer_killed_midway_leaves_the_old_file_and_the_next_write_cleans_up(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.json"
    path.write_text("the old content\n")
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
    writer.send_signal(signal.SIGKILL)
    assert writer.wait(timeout=60) == -signal.SIGKILL
    assert path.read_text() == "the old content\n"  # never a part of the new one
    (left,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert f".{writer.pid}." in left.name and left.read_text() == "the new content\n"
    host = socket.gethostname()
    live = tmp_path / f".run.json.{host}.{os.getpid()}.abcd.tmp"  # a writer still at work
    elsewhere = tmp_path / f".run.json.another-host.{writer.pid}.abcd.tmp"  # another node's
    for other in (live, elsewhere):
        other.write_text("not ours to remove")
    write_atomic(path, "the next content\n")
    assert path.read_text() == "the next content\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == sorted(
        [live.name, elsewhere.name]
    )


def test_sacct_synth_minus_o_onto_a_device_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "jobs.parquet"
    _fifo(path)
    before = _identity(path)
    assert main(["sacct", "synth", "--jobs", "10", "-o", str(path)]) == 2
    assert "is a FIFO; only a regular file is replaced" in capsys.readouterr().err
    assert _identity(path) == before
