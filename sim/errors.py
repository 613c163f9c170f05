"""Input errors shared by every layer.

Bad input raises a subclass of :class:`InputError` that carries *every* problem found, so a user
fixes a file once rather than once per run. The CLI turns any ``InputError`` into a one-line
message and exit code 2 (see ``wass_chat.cli``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable


class UserFacingError(Exception):
    """An error whose message is for the user: the CLI prints it on one line and exits 2."""

    def one_line(self) -> str:
        return str(self)


class ServiceUnavailable(UserFacingError):
    """A service we depend on does not answer (Slurm, Ollama, a Chroma server)."""


class InputError(UserFacingError, ValueError):
    """Bad user input: a malformed file, an inconsistent model, an impossible request.

    ``subject`` names what was being read (a path, a workflow name); ``problems`` lists each
    problem in words that name the offending task, file or node.
    """

    kind = "input"

    def __init__(self, subject: str, problems: Iterable[str]) -> None:
        self.subject = subject
        self.problems: tuple[str, ...] = tuple(problems) or ("unknown problem",)
        super().__init__(self.one_line())

    def one_line(self, limit: int = 5) -> str:  # type: ignore[override]
        """All problems on one line; past ``limit`` the rest are counted, not listed."""
        shown = "; ".join(self.problems[:limit])
        more = len(self.problems) - limit
        suffix = f"; and {more} more" if more > 0 else ""
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        return f"invalid {self.kind} {self.subject}: {count} {noun}: {shown}{suffix}"


def nearest_names(name: str, known: Iterable[str], count: int = 3) -> list[str]:
    """The known names closest to ``name`` (difflib ratio >= 0.5, case-insensitive), best first.

    Names with the same stem and another number (``genomics-50`` -> ``genomics-49``) come
    first, then those whose letters are close (``hefty`` -> ``heft``).
    """
    by_key = {k.lower(): k for k in known}
    wanted = name.strip().lower()
    stem = re.sub(r"[-_]?\d+$", "", wanted)  # ``genomics-50`` -> ``genomics-49`` first
    same_stem = [k for k in by_key if stem and re.sub(r"[-_]?\d+$", "", k) == stem]
    close = difflib.get_close_matches(wanted, list(by_key), n=count, cutoff=0.5)
    hits = list(dict.fromkeys([*same_stem, *close]))[:count]
    return [by_key[k] for k in hits]


class UnknownName(InputError):
    """A name (workflow, run, node, scheduler, task) that names nothing known: refused, with the
    nearest real names offered, never silently replaced by one of them."""

    kind = "name"

    def __init__(self, what: str, name: str, known: Iterable[str], where: str = "") -> None:
        self.what = what
        self.name = name
        self.known = tuple(known)
        self.nearest = tuple(nearest_names(name, self.known))
        problem = f"there is no {what} {name!r}" + (f" {where}" if where else "")
        if self.nearest:
            problem += "; the nearest: " + ", ".join(self.nearest)
        elif self.known:
            shown = ", ".join(self.known[:8])
            problem += f"; known: {shown}" + (
                f" and {len(self.known) - 8} more" if len(self.known) > 8 else ""
            )
        super().__init__(name, [problem])

    def one_line(self, limit: int = 5) -> str:
        return "; ".join(self.problems[:limit])


class NoSuchName(UnknownName):
    """A name a person typed that a live system (the cluster, the decision log) does not hold,
    refused in one line that says what there is, since the person cannot see it:
    ``No partition 'debgu' on this cluster; did you mean debug? Partitions: debug, small``."""

    shown = 12
    """Known names listed; past this they are counted."""

    def __init__(self, what: str, name: str, known: Iterable[str], where: str) -> None:
        super().__init__(what, name, sorted(set(known)), where)
        self.problems = (self._refusal(where),)
        self.args = (self.one_line(),)

    def _refusal(self, where: str) -> str:
        text = f"No {self.what} {self.name!r} {where}"
        if self.nearest:
            text += f"; did you mean {' or '.join(self.nearest)}?"
        else:
            text += "."
        plural = self.what if self.what.isupper() else self.what + "s"  # QOS
        if not self.known:
            return text.removesuffix(".") + f" (there are no {plural})"
        listed = ", ".join(self.known[: self.shown])
        if len(self.known) > self.shown:
            listed += f" and {len(self.known) - self.shown} more"
        return f"{text} {plural[0].upper()}{plural[1:]}: {listed}"


class WorkflowError(InputError):
    """A workflow that cannot be read or is inconsistent (cycle, dangling reference, ...)."""

    kind = "workflow"


class PlatformError(InputError):
    """A platform that cannot be read or is physically impossible (zero bandwidth, no node)."""

    kind = "platform"


class ScheduleError(InputError):
    """A schedule that does not fit its workflow and platform (unknown node, missing task)."""

    kind = "schedule"


class ConfigError(InputError):
    """A settings file or environment variable that cannot be used."""

    kind = "config"


def raise_if(problems: list[str], error: type[InputError], subject: str) -> None:
    """Raise ``error`` carrying ``problems`` when there are any."""
    if problems:
        raise error(subject, problems)
