"""The key of the row a DataTable event names, or None when it names none.

Textual posts `RowHighlighted` for row -1 of an empty table (an arrow key before there is any row) with its
`row_key` None, though it is typed `RowKey`; read as a row, that stopped the panel with a traceback."""

from __future__ import annotations

from textual.widgets import DataTable
from textual.widgets.data_table import RowKey


def event_row_key(event: DataTable.RowHighlighted | DataTable.RowSelected) -> str | None:
    row_key: RowKey | None = event.row_key
    return row_key.value if row_key is not None else None
