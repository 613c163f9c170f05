"""A :class:`~wass_chat.report.columns.Table` -> escaped HTML, in a box that scrolls on its own.

Every table of the page comes through here: its labels are the columns table's, numbers are
right-aligned and never broken, text cells wrap, and a table wider than the page scrolls inside
its ``table-box`` instead of widening the page.
"""

from __future__ import annotations

from html import escape

import polars as pl

from wass_chat.report.columns import Table, frame_table


def table_html(table: Table, css: dict[int, str] | None = None) -> str:
    """The table; ``css`` adds a class to the cells of a column (by index)."""
    classes = [
        " ".join(c for c in ("num" if numeric else "", (css or {}).get(i, "")) if c)
        for i, numeric in enumerate(table.numeric)
    ]
    attrs = [f' class="{c}"' if c else "" for c in classes]
    head = "".join(f"<th{a}>{escape(h)}</th>" for a, h in zip(attrs, table.header, strict=True))
    body = "".join(
        "<tr>"
        + "".join(f"<td{a}>{escape(c)}</td>" for a, c in zip(attrs, row, strict=True))
        + "</tr>"
        for row in table.rows
    )
    return (
        f'<div class="table-box"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def frame_html(frame: pl.DataFrame) -> str:
    """An analytics table with human labels and written values (see :mod:`.columns`)."""
    return table_html(frame_table(frame))
