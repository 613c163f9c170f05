"""A tool that failed, or a name that names nothing (kind ``error``): its facts and Markdown."""

from __future__ import annotations

from typing import TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind


class ErrorFacts(TypedDict):
    """What any tool returns when it fails: the one-line error the answer states."""

    kind: str
    error: str


def render_error(f: Facts) -> str:
    """The error in one line; a name that names nothing is refused with the nearest real ones
    and the names there are (the person picks: nothing was silently replaced)."""
    unknown = f.get("unknown")
    if not unknown:
        return f"I could not answer that: {f['error']}"
    text = f"There is no {unknown['what']} {lit(unknown['name'])}, so I did not answer."
    nearest = unknown.get("nearest") or []
    known = unknown.get("known") or []
    if nearest:
        text += f" Did you mean {' or '.join(lit(n) for n in nearest)}?"
    if known:
        what = str(unknown["what"])
        plural = what if what.isupper() else what + "s"  # QOS
        more = unknown.get("known_count", len(known)) - len(known)
        text += f" {plural[0].upper()}{plural[1:]}: {', '.join(lit(k) for k in known)}"
        text += f" and {more} more." if more > 0 else "."
    elif not nearest:
        what = str(unknown["what"])
        text += f" There are no {what if what.isupper() else what + 's'} to choose from."
    return text + (" Ask again with the right name." if nearest or known else "")


KIND = Kind(
    "error",
    "the one-line error, or the unknown name refused with the nearest real ones",
    render_error,
    facts=ErrorFacts,
)
