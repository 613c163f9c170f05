"""Rows and polars frames -> escaped HTML tables (shared by the report's sections)."""

from __future__ import annotations

from html import escape

import polars as pl


def table_html(
    header: list[str], rows: list[tuple[str, ...]], css: dict[int, str] | None = None
) -> str:
    css = css or {}
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{css[i]}">{escape(str(c))}</td>'
            if i in css
            else f"<td>{escape(str(c))}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def frame_html(frame: pl.DataFrame) -> str:
    return table_html(frame.columns, [tuple(str(v) for v in row) for row in frame.rows()])
