"""What a new conversation opens on: what the app is for, the demo to try, three questions; and
when a Slurm cluster answers from here, three questions about it.

Shown only on an empty chat and never stored: it is the app's greeting, not part of the
conversation (``--resume`` and the exported report do not repeat it). It first names the demo
only; the chat screen's Slurm check (a thread worker) adds the live questions once a controller
has answered, so a greeting never offers what no cluster can answer.
"""

from __future__ import annotations

from textual.widgets import Markdown

EXAMPLE_QUESTIONS = (
    "/simulate montage-60 scheduler=cpop",
    "what if I add 4 nodes?",
    "/compare",
)
"""Three questions that work offline on the demo, in an order that builds on the one before:
simulate a run, change one thing about it, rank the schedulers on it."""
LIVE_QUESTIONS = (
    "what is blocking the queue?",
    "which nodes are down?",
    "why did my last job fail?",
)
"""Three questions the live cluster answers, none needing a job id or node name to start."""


def welcome_markdown(demo_workflows: tuple[str, ...], live: bool = False) -> str:
    """The greeting, naming the demo workflows one can ask about, and with ``live`` (a Slurm
    controller answered) what to ask the cluster."""
    names = ", ".join(f"`{name}`" for name in demo_workflows)
    examples = "\n".join(f"- `{question}`" for question in EXAMPLE_QUESTIONS)
    text = (
        "**Welcome to wass-chat.** Ask why a task ran where it did, simulate what-ifs, compare "
        "schedulers and plan Slurm submissions (nothing is submitted without your approval).\n\n"
        f"The demo ships an 8-node platform and the workflows {names}. Try:\n\n"
        f"{examples}\n\n"
    )
    if live:
        questions = "\n".join(f"- `{question}`" for question in LIVE_QUESTIONS)
        text += f"Your Slurm cluster answers from here. Ask it, live:\n\n{questions}\n\n"
    return text + "`/help` lists every command; F1 the keys."


class Welcome(Markdown):
    """The greeting at the top of an empty conversation."""

    def __init__(self, live: bool = False) -> None:
        from sim.demo import demo_workflow_names

        self._workflows: tuple[str, ...] = demo_workflow_names()
        self.live = live
        super().__init__(welcome_markdown(self._workflows, live), classes="welcome")

    def show_live(self, live: bool) -> None:
        """Offer the live-cluster questions (or stop offering them)."""
        if live != self.live:
            self.live = live
            self.update(welcome_markdown(self._workflows, live))
