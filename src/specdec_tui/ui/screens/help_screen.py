"""The `?` screen: every binding of the app and its screens with the keys it answers to now
(after the user's keymap), so a remapped key is never a surprise."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from specdec_tui.ui.keymap import WIDGET_SCOPES, KeyRow, key_name, key_rows
from specdec_tui.ui.screens.panel_modal import PanelModal


class HelpScreen(PanelModal[None]):
    """Lists `rows` in a table; escape, q or ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help-close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 90%; max-width: 100; height: 90%; border: round $accent; background: $surface; }
    HelpScreen #help-title { padding: 0 1; text-style: bold; }
    HelpScreen DataTable { height: 1fr; }
    """

    def __init__(self, rows: Sequence[KeyRow]) -> None:
        super().__init__()
        self.rows = list(rows)

    def _widget_rows(self) -> list[KeyRow]:
        """Keys of widgets (the journal's) that `rows` does not list yet, with the current keymap."""
        listed = {row.binding_id for row in self.rows}
        keymap = getattr(self.app, "effective_keymap", {})
        display = getattr(self.app, "key_display", key_name)
        return [row for row in key_rows(WIDGET_SCOPES, keymap, display) if row.binding_id not in listed]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Keys (remap them with [ui.keymap] in the config, by id)", id="help-title")
            yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Keys", "Action", "Id", "Where")
        self.rows += self._widget_rows()
        for row in self.rows:
            table.add_row(row.keys, row.description, row.binding_id, row.scope)
        table.focus()

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(None)
