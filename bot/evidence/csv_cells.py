"""Every CSV the product writes goes through here: a cell a spreadsheet would read as a
formula (starting with =, +, -, @, a tab or a carriage return) is written with a leading
apostrophe, so a steward's note or a rota name is shown as text and never run. A cell that
already starts with an apostrophe gets one more, so `plain` gives back exactly what was
written (verify recomputes the hash chain from events.csv that way)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import IO, Any

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def safe_cell(value: Any) -> str:
    """The cell as written: text, with an apostrophe before a formula's first character."""
    text = "" if value is None else str(value)
    return QUOTE + text if text.startswith((*TRIGGERS, QUOTE)) else text


def plain(cell: str) -> str:
    """The value a written cell holds (safe_cell undone)."""
    if cell.startswith(QUOTE) and cell[1:2] and cell[1:2] in (*TRIGGERS, QUOTE):
        return cell[1:]
    return cell


def write_rows(f: IO[str], head: list[str], rows: Iterable[Iterable[Any]],
               lineterminator: str = "\r\n") -> None:
    """A header and rows, every cell through safe_cell."""
    w = csv.writer(f, lineterminator=lineterminator)
    w.writerow([safe_cell(h) for h in head])
    w.writerows([safe_cell(c) for c in row] for row in rows)
