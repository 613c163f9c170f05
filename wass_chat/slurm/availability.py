"""Is Slurm here? A cheap check, before any real command, that names what is missing.

Without it, a missing ``SLURM_CONF`` file made every Slurm command retry for 60 s ("cannot stat
file ..., retrying in 1sec up to 60sec") and the answer blamed a timeout, never the file; an
unreachable controller cost each command its full timeout. :func:`ensure_slurm` checks, in order
and each step only if the one before passed:

1. **the command**: ``shutil.which`` for it and for ``scontrol`` (no process is started);
2. **the configuration**: the file ``SLURM_CONF`` names, else ``/etc/slurm/slurm.conf`` or
   slurmd's configless cache ``/run/slurm/conf/slurm.conf``, must exist and be readable (no
   process); then ``scontrol --version`` (which parses it, without contacting anyone) must
   accept it: a parse error is quoted with the file's name. With no file at all, Slurm may still
   find its controller through a DNS SRV record (configless); ``scontrol --version`` says
   whether it did;
3. **the version**: the release ``scontrol --version`` names must be one whose output formats
   wass-chat reads (:data:`KNOWN_RELEASES`), unless ``WASS_SLURM_ANY_VERSION=1``;
4. **the controller** (commands that talk to slurmctld): ``scontrol ping`` within
   :data:`PING_TIMEOUT_S`, an authenticated request slurmctld answers at once and logs nothing
   for. When it does not say UP, a TCP connect to the ``SlurmctldHost``/``SlurmctldPort`` of the
   configuration (at most :data:`CONNECT_TIMEOUT_S`) tells a closed port from a silent host
   from a daemon that refuses Slurm's ping (munge), and a controller that is only slow (the
   port accepts) is let through.

``WASS_SLURM_PRECHECK=off`` leaves only step 1 (for a site whose setup the check misjudges, and
for tests that stand in for one Slurm command).

Each failure raises :class:`SlurmAway`, a :class:`~sim.errors.ServiceUnavailable` whose one line
names the cause (the file, the host and port, the command), the step that failed and the
commands the check ran. A passed check is remembered for :data:`CHECK_TTL_S` seconds per
configuration, so a question that runs ten commands checks once.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sim.errors import ServiceUnavailable

DEFAULT_CONF_PATHS = (Path("/etc/slurm/slurm.conf"), Path("/run/slurm/conf/slurm.conf"))
"""Where Slurm looks when ``SLURM_CONF`` is unset (Debian's build; then slurmd's configless
cache), before asking DNS for an SRV record."""
KNOWN_RELEASES = ((22, 5), (23, 2), (23, 11), (24, 5), (24, 11), (25, 5), (25, 11), (26, 5))
"""Slurm releases whose command output wass-chat reads (22.05, 24.11 and 26.05 are tested on a
real cluster; the others lie between them and share their formats)."""
ANY_VERSION_ENV = "WASS_SLURM_ANY_VERSION"
PRECHECK_ENV = "WASS_SLURM_PRECHECK"
VERSION_TIMEOUT_S = 2.0
"""``scontrol --version`` only parses the configuration: it answers in milliseconds."""
PING_TIMEOUT_S = 1.0
CONNECT_TIMEOUT_S = 1.0
CHECK_TTL_S = 30.0
DEFAULT_CTLD_PORT = 6817
ACCOUNTING_COMMANDS = frozenset({"sacct", "sacctmgr", "sreport", "sshare"})
"""Commands answered by slurmdbd (or from its data), which work while slurmctld is down."""

Stage = Literal["command", "config", "version", "controller"]


class SlurmAway(ServiceUnavailable):
    """Slurm cannot be used from here; :attr:`stage` says which check failed.

    ``ran`` lists the commands the check started (none for a missing command or file), for the
    record and for tests that prove no Slurm command was run.
    """

    def __init__(self, message: str, stage: Stage, ran: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.stage: Stage = stage
        self.ran = ran


@dataclass(frozen=True, slots=True)
class SlurmVersion:
    """A Slurm release as ``scontrol --version`` prints it (``slurm 24.11.5``)."""

    major: int
    minor: int
    micro: int

    @property
    def release(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def known(self) -> bool:
        return self.release in KNOWN_RELEASES

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}.{self.micro}"


def parse_version(text: str) -> SlurmVersion | None:
    """``slurm 24.11.5`` / ``slurm-wlm 22.05.8`` (Debian) -> SlurmVersion; None if neither."""
    match = re.search(r"\bslurm(?:-wlm)?\s+(\d+)\.(\d+)\.(\d+)", text)
    return SlurmVersion(*(int(g) for g in match.groups())) if match else None


@dataclass(frozen=True)
class Controller:
    """One ``SlurmctldHost`` line: its name and the address to reach it (``name(addr)``)."""

    name: str
    address: str
    port: int

    def __str__(self) -> str:
        where = f"{self.address}:{self.port}"
        return f"{self.name} ({where})" if self.name != self.address else where


@dataclass(frozen=True)
class SlurmConf:
    """What the check reads from slurm.conf (and the files it ``Include`` s)."""

    path: Path
    controllers: tuple[Controller, ...]


@dataclass(frozen=True)
class SlurmReady:
    """A passed check: the version and configuration the commands will use."""

    version: SlurmVersion | None
    """None when the check was switched off (``WASS_SLURM_PRECHECK=off``)."""
    conf: SlurmConf | None
    """None when Slurm found its configuration through DNS (configless)."""
    ran: tuple[str, ...] = field(default=())


def conf_path_in_use(environ: dict[str, str] | None = None) -> tuple[Path | None, str]:
    """The configuration file Slurm's commands will read, and how it was chosen (for messages).

    ``SLURM_CONF`` wins even when it names nothing (the commands would then retry for a
    minute); without it, the first existing default path, else None (DNS SRV lookup)."""
    env = os.environ if environ is None else environ
    named = env.get("SLURM_CONF")
    if named:
        return Path(named), f"SLURM_CONF={named}"
    for path in DEFAULT_CONF_PATHS:
        if path.is_file():
            return path, str(path)
    return None, "SLURM_CONF is unset and " + " and ".join(map(str, DEFAULT_CONF_PATHS)) + (
        " do not exist"
    )


def read_slurm_conf(path: Path) -> SlurmConf:
    """Controllers (``SlurmctldHost``, or the old ``ControlMachine``/``ControlAddr``) and
    ``SlurmctldPort`` (first of a range), following ``Include`` lines; keys are
    case-insensitive, as Slurm reads them."""
    settings: dict[str, list[str]] = {}
    _read_settings(path, settings, depth=0)
    port_text = (settings.get("slurmctldport") or [str(DEFAULT_CTLD_PORT)])[-1]
    digits = re.match(r"\d+", port_text)  # "6817-6820": the first of the range
    port = int(digits.group()) if digits else DEFAULT_CTLD_PORT
    hosts = settings.get("slurmctldhost", [])
    if not hosts and settings.get("controlmachine"):
        address = (settings.get("controladdr") or settings["controlmachine"])[-1]
        hosts = [f"{settings['controlmachine'][-1]}({address})"]
    controllers = []
    for value in hosts:
        name, _, address = value.partition("(")
        controllers.append(Controller(name.strip(), address.rstrip(")").strip() or name, port))
    return SlurmConf(path, tuple(controllers))


def _read_settings(path: Path, settings: dict[str, list[str]], depth: int) -> None:
    for raw in path.read_text(errors="replace").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep:
            words = line.split(None, 1)
            if words[0].lower() == "include" and len(words) == 2 and depth < 5:
                included = Path(words[1].strip())
                included = included if included.is_absolute() else path.parent / included
                if included.is_file():
                    _read_settings(included, settings, depth + 1)
            continue
        if " " in key.strip():  # NodeName=... lines carry many pairs; only the first matters
            continue
        settings.setdefault(key.strip().lower(), []).append(value.split()[0] if value else "")


_checked: dict[tuple[str, ...], tuple[float, SlurmReady]] = {}
_lock = threading.Lock()


def ensure_slurm(command: str, needs_controller: bool | None = None) -> SlurmReady:
    """Check that ``command`` can be run against a Slurm that answers; raise :class:`SlurmAway`
    naming the cause otherwise (see the module's docstring for the steps).

    ``needs_controller`` defaults to False for accounting commands (slurmdbd answers them).
    """
    if shutil.which(command) is None:
        raise SlurmAway(f"Slurm is not installed here: {command} not found on PATH", "command")
    if os.environ.get(PRECHECK_ENV, "").lower() == "off":
        return SlurmReady(None, None)
    if shutil.which("scontrol") is None:
        raise SlurmAway("Slurm is not installed here: scontrol not found on PATH", "command")
    if needs_controller is None:
        needs_controller = command not in ACCOUNTING_COMMANDS
    path, chosen = conf_path_in_use()
    key = (chosen, os.environ.get("PATH", ""), str(needs_controller), _mtime(path))
    with _lock:
        hit = _checked.get(key)
        if hit is not None and time.monotonic() - hit[0] < CHECK_TTL_S:
            return hit[1]
    ready = _check(path, chosen, needs_controller)
    with _lock:
        _checked[key] = (time.monotonic(), ready)
    return ready


def forget_checks() -> None:
    """Drop remembered checks (after the configuration or the cluster changed)."""
    with _lock:
        _checked.clear()


def _mtime(path: Path | None) -> str:
    try:
        return str(path.stat().st_mtime_ns) if path is not None else ""
    except OSError:
        return "missing"


def _check(path: Path | None, chosen: str, needs_controller: bool) -> SlurmReady:
    if path is not None:
        if not path.exists():
            raise SlurmAway(f"Slurm is not configured here: {chosen}: no such file", "config")
        if not path.is_file() or not os.access(path, os.R_OK):
            raise SlurmAway(
                f"Slurm is not configured here: {chosen}: not a readable file", "config"
            )
    ran: list[str] = ["scontrol --version"]
    done = _quick(["scontrol", "--version"], VERSION_TIMEOUT_S, ran)
    if done.returncode != 0 or parse_version(done.stdout) is None:
        raise SlurmAway(_config_problem(path, chosen, done.stderr + done.stdout), "config", (*ran,))
    version = parse_version(done.stdout)
    assert version is not None
    if not version.known and os.environ.get(ANY_VERSION_ENV) != "1":
        known = f"{KNOWN_RELEASES[0][0]}.{KNOWN_RELEASES[0][1]:02d}-"
        known += f"{KNOWN_RELEASES[-1][0]}.{KNOWN_RELEASES[-1][1]:02d}"
        raise SlurmAway(
            f"Slurm {version} (scontrol --version) is a release wass-chat has never seen "
            f"(it reads {known}); set {ANY_VERSION_ENV}=1 to try it anyway",
            "version",
            (*ran,),
        )
    conf = read_slurm_conf(path) if path is not None else None
    if needs_controller:
        _check_controller(conf, ran)
    return SlurmReady(version, conf, tuple(ran))


def _quick(argv: list[str], timeout: float, ran: list[str]) -> subprocess.CompletedProcess[str]:
    """Run one check command; a hang becomes a failed result, not an exception."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, -1, "", f"no answer within {timeout:g} s")
    except OSError as exc:
        return subprocess.CompletedProcess(argv, -1, "", str(exc))


def _config_problem(path: Path | None, chosen: str, output: str) -> str:
    """One line from Slurm's complaint about its configuration, naming the file."""
    if path is None:
        return (
            f"Slurm is not configured here: {chosen}, and no DNS SRV record names a "
            "controller (set SLURM_CONF to the cluster's slurm.conf)"
        )
    lines = [re.sub(r"^\S+: (error|fatal): ", "", line.strip()) for line in output.splitlines()]
    lines = [line for line in lines if line]
    if mixed := next((line for line in lines if "Incompatible Slurm plugin" in line), None):
        detail = mixed.split(": ", 1)[-1]
        return (
            f"Slurm's commands and plugins are of different releases ({chosen}: {detail}); "
            "set PluginDir to this release's plugins"
        )
    detail = next(
        (line for line in lines if "error" in line.lower() or "parse" in line.lower()),
        lines[0] if lines else "scontrol --version failed",
    )
    return f"Slurm is not configured here: {chosen} is not a usable slurm.conf ({detail})"


def _check_controller(conf: SlurmConf | None, ran: list[str]) -> None:
    ran.append("scontrol ping")
    done = _quick(["scontrol", "ping"], PING_TIMEOUT_S, ran)
    if re.search(r"\bis UP\b", done.stdout):
        return
    controllers = conf.controllers if conf is not None else ()
    timed_out = done.returncode == -1 and "no answer" in done.stderr
    states = [_connect(c) for c in controllers]
    if timed_out and any(state == "open" for state in states):
        return  # the port accepts: a slow controller, not an absent one
    where = " or ".join(str(c) for c in controllers) or "the controller DNS names"
    source = f" (SlurmctldHost in {conf.path})" if conf is not None else ""
    if not controllers:  # configless: no address of ours to try
        said = " ".join((done.stdout or done.stderr).split())[:160]
        cause = (
            f"slurmctld did not answer scontrol ping within {PING_TIMEOUT_S:g} s"
            if timed_out
            else f"scontrol ping: {said or 'no answer'}"
        )
    elif all(state == "refused" for state in states):
        cause = f"nothing listens at {where}{source}: slurmctld is not running there"
    elif any(state == "open" for state in states):
        cause = (
            f"slurmctld at {where} accepts connections but does not answer scontrol ping "
            "(is munged running with the cluster's key?)"
        )
    else:
        waited = PING_TIMEOUT_S + CONNECT_TIMEOUT_S
        cause = f"slurmctld at {where}{source} does not answer (no reply within {waited:g} s)"
    raise SlurmAway(f"Slurm is unreachable: {cause}", "controller", (*ran,))


def _connect(controller: Controller) -> Literal["open", "refused", "silent"]:
    """A TCP connect to the controller's port, at most :data:`CONNECT_TIMEOUT_S`."""
    try:
        with socket.create_connection(
            (controller.address, controller.port), timeout=CONNECT_TIMEOUT_S
        ):
            return "open"
    except ConnectionRefusedError:
        return "refused"
    except (OSError, OverflowError, ValueError):
        return "silent"
