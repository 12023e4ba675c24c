"""rich's table look, drawn without rich when the output is plain text.

Most commands print one small table into a pipe or a file (``stack create``
in a script); importing rich for it cost each of them ~40 ms.  This draws
the very same characters as rich's default box for tables whose cells are
printable ASCII on one line and that fit the width; anything else (a
terminal, long or wrapped values, other characters) is left to rich.
"""

from __future__ import annotations

from typing import Sequence

#: the width rich is given when output is not a terminal (cli/formatting.py)
WIDTH = 250


def plain_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str | None:
    """The table as rich would print it, or None when only rich can draw it."""
    if not all(_simple(cell) for cell in columns) or not all(_simple(cell) for row in rows for cell in row):
        return None
    widths = [max([len(column)] + [len(row[i]) for row in rows]) for i, column in enumerate(columns)]
    if sum(widths) + 3 * len(widths) + 1 > WIDTH:
        return None

    def line(left: str, fill: str, middle: str, right: str) -> str:
        return left + middle.join(fill * (w + 2) for w in widths) + right

    def cells(values: Sequence[str], edge: str) -> str:
        return edge + edge.join(f" {v:<{w}} " for v, w in zip(values, widths)) + edge

    return "\n".join([line("┏", "━", "┳", "┓"), cells(columns, "┃"), line("┡", "━", "╇", "┩"),
                      *(cells(row, "│") for row in rows), line("└", "─", "┴", "┘")])


def _simple(text: str) -> bool:
    """Printable ASCII, no surrounding blanks: what rich prints as it is."""
    return text.isascii() and text.isprintable() and text == text.strip()
