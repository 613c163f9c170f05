"""What a new conversation opens on: what the app is for, the demo to try, three questions.

Shown only on an empty chat and never stored: it is the app's greeting, not part of the
conversation (``--resume`` and the exported report do not repeat it).
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


def welcome_markdown(demo_workflows: tuple[str, ...]) -> str:
    """The greeting, naming the demo workflows one can ask about."""
    names = ", ".join(f"`{name}`" for name in demo_workflows)
    examples = "\n".join(f"- `{question}`" for question in EXAMPLE_QUESTIONS)
    return (
        "**Welcome to wass-chat.** Ask why a task ran where it did, simulate what-ifs, compare "
        "schedulers and plan Slurm submissions (nothing is submitted without your approval).\n\n"
        f"The demo ships an 8-node platform and the workflows {names}. Try:\n\n"
        f"{examples}\n\n"
        "`/help` lists every command; F1 the keys."
    )


class Welcome(Markdown):
    """The greeting at the top of an empty conversation."""

    def __init__(self) -> None:
        from sim.demo import demo_workflow_names

        super().__init__(welcome_markdown(demo_workflow_names()), classes="welcome")
