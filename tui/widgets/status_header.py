"""The one-line header: product name, which engine answers (ollama/openai/offline, and the
model and server: "qwen2.5:3b on OpenAI-compatible server at http://..."), whether Slurm
answers, and activity.

The header asks Slurm itself (:meth:`StatusHeader.check_slurm`), in a thread worker since the
check may wait ~2 s for a silent controller, and posts :class:`StatusHeader.SlurmChecked` so the
greeting can offer live questions.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Label

from tui.slurm_status import CHECKING, SlurmProbe, SlurmStatus

SLURM_CHECK_GROUP = "slurm-check"


class StatusHeader(Horizontal):
    """Shows ``wass-chat``, the session mode badge, the Slurm badge and what the app is doing
    (no clock)."""

    mode: reactive[str] = reactive("connecting")
    """``ollama``, ``openai``, ``offline``, ``connecting`` or ``unavailable``."""
    detail: reactive[str] = reactive("")
    slurm: reactive[SlurmStatus] = reactive(CHECKING)
    """Whether a Slurm controller answers (:mod:`tui.slurm_status`); why, in the tooltip."""
    activity: reactive[str] = reactive("ready")

    class SlurmChecked(Message):
        """A Slurm check finished with ``status``."""

        def __init__(self, status: SlurmStatus) -> None:
            super().__init__()
            self.status = status

    def __init__(self, slurm_probe: SlurmProbe) -> None:
        super().__init__()
        self._probe = slurm_probe
        self._badge = Label(id="mode-badge")
        self._slurm = Label(id="slurm-badge")
        self._activity = Label(id="activity")

    def compose(self) -> ComposeResult:
        yield Label("wass-chat", id="app-title")
        yield self._badge
        yield self._slurm
        yield self._activity

    def watch_mode(self, mode: str) -> None:
        badge = self._badge
        badge.update(f"● {mode}" + (f" · {self.detail}" if self.detail else ""))
        for name in ("ollama", "openai", "offline", "connecting", "unavailable"):
            badge.set_class(mode == name, f"-{name}")

    def watch_detail(self, _detail: str) -> None:
        self.watch_mode(self.mode)

    @work(thread=True, group=SLURM_CHECK_GROUP, exclusive=True, exit_on_error=False)
    def check_slurm(self) -> None:
        """Ask whether Slurm answers, off the UI's loop; show it and post SlurmChecked."""
        status = self._probe()
        self.app.call_from_thread(self._checked, status)

    def _checked(self, status: SlurmStatus) -> None:
        self.slurm = status
        self.post_message(self.SlurmChecked(status))

    def watch_slurm(self, status: SlurmStatus) -> None:
        self._slurm.update(status.label)
        self._slurm.tooltip = status.detail or None
        for state in ("checking", "reachable", "unreachable", "unchecked"):
            self._slurm.set_class(status.state == state, f"-{state}")

    def watch_activity(self, activity: str) -> None:
        self._activity.update(activity)
