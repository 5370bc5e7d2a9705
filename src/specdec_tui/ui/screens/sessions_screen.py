"""The saved sessions (in `paths.sessions_dir()` or a given folder), newest first: when, which host, how many
trials, the best single-request tok/s. Enter dismisses with the chosen file so the caller opens it
(offline, without a host); a file that does not load says why instead.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from specdec_tui.core.number_format import MISSING, fmt_num
from specdec_tui.loop.sessions import SessionSummary, list_sessions

# The file second, whole at 80 columns (last, it was cut to "20260301-0"); the unit, the longest label and the
# same in most sessions, last (the detail line under the table shows the whole path of the highlighted row).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("date", "started (UTC)"),
    ("file", "file"),
    ("host", "host"),
    ("trials", "trials"),
    ("best_c1", "best c=1 tok/s"),
    ("unit", "unit"),
)


class SessionsScreen(Screen[Path | None]):
    """Pick a saved session; dismisses with its path (None on escape)."""

    BINDINGS = [
        Binding("escape,q", "close", "Back", id="sessions-close"),
        Binding("f5", "reload", "Reload", id="sessions-reload"),
    ]
    DEFAULT_CSS = """
    SessionsScreen > Vertical { height: 1fr; }
    SessionsScreen #sessions-title { padding: 0 1; text-style: bold; }
    SessionsScreen #sessions-table { height: 1fr; }
    SessionsScreen #sessions-detail { padding: 0 1; color: $text-muted; height: auto; }
    """

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self.summaries: list[SessionSummary] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Saved sessions in {self.directory} — enter opens one offline", id="sessions-title", markup=False)
            table: DataTable[Text | str] = DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
            for key, label in COLUMNS:
                table.add_column(label, key=key)
            yield table
            yield Static("", id="sessions-detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()
        self.query_one(DataTable).focus()

    @property
    def table(self) -> DataTable[Text | str]:
        return self.query_one("#sessions-table", DataTable)

    def action_reload(self) -> None:
        self.summaries = list_sessions(self.directory)
        table = self.table
        table.clear()
        for s in self.summaries:
            table.add_row(*self._cells(s), key=str(s.path))
        detail = self.query_one("#sessions-detail", Static)
        detail.update(f"{len(self.summaries)} session file(s)" if self.summaries
                      else "No saved sessions yet: every trial run in the panel or with `specdec-tui sweep` is saved here.")

    def cell_text(self, row: int, column: str) -> str:
        value = self.table.get_cell_at(Coordinate(row, [k for k, _ in COLUMNS].index(column)))
        return value.plain if isinstance(value, Text) else str(value)

    @staticmethod
    def _cells(s: SessionSummary) -> list[Text]:
        if s.problem:
            return [Text(MISSING), Text(s.path.name), Text(MISSING), Text(MISSING, justify="right"),
                    Text("unreadable", style="bold red"), Text(MISSING)]
        return [
            Text(s.created.strftime("%Y-%m-%d %H:%M") if s.created else MISSING),
            Text(s.path.name),
            Text(s.host or MISSING),
            Text(str(s.trials), justify="right"),
            Text(fmt_num(s.best_c1_tok_s) + (f"  ({s.best_c1_trial})" if s.best_c1_trial else ""), justify="right"),
            Text(s.unit or MISSING),
        ]

    @on(DataTable.RowHighlighted, "#sessions-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        summary = self._summary(event.cursor_row)
        if summary is not None:
            self.query_one("#sessions-detail", Static).update(
                f"cannot open: {summary.problem}" if summary.problem else str(summary.path))

    @on(DataTable.RowSelected, "#sessions-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        summary = self._summary(event.cursor_row)
        if summary is None:
            return
        if summary.problem:
            self.notify(f"{summary.problem}", title="Cannot open this session", severity="error")
            return
        self.dismiss(summary.path)

    def _summary(self, row: int) -> SessionSummary | None:
        return self.summaries[row] if 0 <= row < len(self.summaries) else None

    def action_close(self) -> None:
        self.dismiss(None)
