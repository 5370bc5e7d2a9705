"""The task screens' tables (sweep, replay, rate search, compare): a zebra-striped `DataTable` whose columns are
keyed, so rows are filled and read by (row key, column key), and a cell read back as the plain text it shows.
One owner for what each screen built alike."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CursorType


def keyed_table(table_id: str, columns: Sequence[tuple[str, str]], *, cursor: CursorType = "none") -> DataTable[Text]:
    """A table of `columns` ((key, label) pairs, in order); no cursor unless asked (the task tables show progress)."""
    table: DataTable[Text] = DataTable(id=table_id, cursor_type=cursor, zebra_stripes=True)
    for key, label in columns:
        table.add_column(label, key=key)
    return table


def cell_plain(table: DataTable[Text], row: str, column: str) -> str:
    """The text a cell shows (its style dropped), by row and column key."""
    cell = table.get_cell(row, column)
    return cell.plain if isinstance(cell, Text) else str(cell)
