"""Where a job's output and error went, and the last lines of its error output.

Slurm knows the files by four routes, tried in this order:

* ``scontrol show job`` (while the controller holds the job, ``MinJobAge`` after it ends):
  ``StdOut``/``StdErr`` with Slurm's patterns already expanded;
* ``sacct`` ``StdOut``/``StdErr`` (Slurm 23.02 and later; 22.05 has no such fields), whose
  patterns (``%j``, ``%x``, ``%u``, ``%A_%a``...) are expanded here as sbatch(1) defines them;
* the submit line's ``-o``/``--output`` and ``-e``/``--error`` (sacct ``SubmitLine``), in the
  job's ``WorkDir``; a ``#SBATCH`` line in the script may have said otherwise, so it is marked;
* Slurm's default, ``slurm-%j.out`` (``slurm-%A_%a.out`` for an array task) in ``WorkDir``,
  stdout and stderr together: marked as the default, which the script may have overridden.

The last lines are read only from a regular file this process may read, at most the last
:data:`TAIL_BYTES`; they are someone else's text, so answers show them as literals and the model
sees them fenced as data (:mod:`wass_chat.agent.safety`), never as instructions.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

TAIL_BYTES = 8192
"""How much of the end of an error file is read."""
TAIL_LINES = 5
"""How many of its last lines an answer quotes."""
LINE_CHARS = 200
"""Longest line quoted; longer ones are cut."""

_PATTERN = re.compile(r"%(\d*)([%AaJjNnstux])")


@dataclass(frozen=True)
class JobNames:
    """What sbatch's filename patterns are filled from."""

    job_id: str
    name: str = ""
    user: str = ""
    first_node: str = ""
    array_job_id: str = ""
    array_task_id: str = ""


def expand_pattern(pattern: str, names: JobNames) -> str:
    """A filename pattern as sbatch(1) expands it: ``%j`` job id, ``%x`` name, ``%u`` user,
    ``%A``/``%a`` array job and task, ``%N`` first node, ``%J`` ``%s`` ``%n`` ``%t`` the batch
    step (``batch``, node 0, task 0), ``%%`` a percent sign; a digit pads numbers with zeros
    (``%4j``). A pattern with a backslash is taken literally, as Slurm does."""
    if "\\" in pattern:
        return pattern.replace("\\", "")
    job = names.job_id.split("_")[0] if names.array_job_id else names.job_id
    values = {
        "%": "%",
        "A": names.array_job_id or job,
        "a": names.array_task_id or "4294967294",
        "J": f"{job}.batch",
        "j": job,
        "N": names.first_node,
        "n": "0",
        "s": "batch",
        "t": "0",
        "u": names.user,
        "x": names.name,
    }

    def fill(match: re.Match[str]) -> str:
        width, key = match.group(1), match.group(2)
        value = values[key]
        return value.zfill(int(width)) if width and value.isdigit() else value

    return _PATTERN.sub(fill, pattern)


@dataclass(frozen=True)
class JobFile:
    """One of a job's files: the path, where the path came from, and whether it is certain."""

    stream: str
    """``output`` or ``error``."""
    path: str
    source: str
    """``scontrol show job``, ``sacct``, ``the submit line`` or ``Slurm's default name``."""
    certain: bool
    """False when a ``#SBATCH`` line of the script may have named another file."""


def _absolute(path: str, workdir: str) -> str:
    if not path or path.startswith("/") or not workdir:
        return path
    return str(Path(workdir) / path)


def option(submit_line: str, short: str, long: str) -> str:
    """The value of ``-o x`` / ``-ox`` / ``--output=x`` / ``--output x`` in a submit line."""
    try:
        words = shlex.split(submit_line)
    except ValueError:
        words = submit_line.split()
    for i, word in enumerate(words):
        if word in (short, long) and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(long + "="):
            return word.split("=", 1)[1]
        if word.startswith(short) and len(word) > len(short) and not word.startswith("--"):
            return word[len(short) :]
    return ""


def job_files(
    names: JobNames,
    workdir: str = "",
    scontrol: dict[str, str] | None = None,
    sacct: dict[str, str] | None = None,
    submit_line: str = "",
) -> tuple[JobFile, JobFile] | None:
    """The job's output and error files by the first route that names them (see the module
    docstring), or None when nothing says where they are (no record and no working directory)."""
    for source, record in (("scontrol show job", scontrol), ("sacct", sacct)):
        out, err = (record or {}).get("StdOut", ""), (record or {}).get("StdErr", "")
        if out and out not in {"(null)", "None"}:
            out = _absolute(expand_pattern(out, names), workdir)
            err = _absolute(expand_pattern(err, names), workdir) if err else out
            return JobFile("output", out, source, True), JobFile("error", err, source, True)
    default = "slurm-%A_%a.out" if names.array_job_id else "slurm-%j.out"
    out_opt = option(submit_line, "-o", "--output")
    err_opt = option(submit_line, "-e", "--error")
    if out_opt or err_opt:
        out = _absolute(expand_pattern(out_opt or default, names), workdir)
        err = _absolute(expand_pattern(err_opt, names), workdir) if err_opt else out
        return (
            JobFile("output", out, "the submit line", False),
            JobFile("error", err, "the submit line", False),
        )
    if not workdir:
        return None
    path = _absolute(expand_pattern(default, names), workdir)
    return (
        JobFile("output", path, "Slurm's default name", False),
        JobFile("error", path, "Slurm's default name", False),
    )


def last_lines(path: str, count: int = TAIL_LINES) -> list[str] | None:
    """The last ``count`` non-empty lines of ``path`` (control characters removed, long lines
    cut), or None when it is not a regular file this process may read."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or not os.access(path, os.R_OK):
            return None
        with open(path, "rb") as fh:
            fh.seek(max(0, info.st_size - TAIL_BYTES))
            data = fh.read(TAIL_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    lines = [_clean(line) for line in text.splitlines()]
    if info.st_size > TAIL_BYTES and lines:
        lines = lines[1:]  # the first line read may be cut in the middle
    return [line for line in lines if line][-count:]


def _clean(line: str) -> str:
    kept = "".join(ch if ch.isprintable() else " " for ch in line).strip()
    return kept if len(kept) <= LINE_CHARS else kept[: LINE_CHARS - 1] + "…"
