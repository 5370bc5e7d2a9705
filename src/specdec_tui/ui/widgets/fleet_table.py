"""The Fleet tab: every configured host as a row (health, model, speculative settings, max running requests, the
last trial's c=1 and best tok/s, journal errors since the unit started). Enter on a row posts `FleetTable.Chosen`,
and the app makes that host the active one. The active host's row is marked with ▶.

Public API: FleetTable(id=...); .set_rows(rows, active); .row_names; .cell_text(name, column).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from specdec_tui.core.number_format import MISSING, fmt_num
from specdec_tui.loop.fleet import FleetRow
from specdec_tui.ui.widgets.alike_rows import AlikeRows
from specdec_tui.ui.widgets.focus_kept_table import FocusKeptTable
from specdec_tui.ui.widgets.table_rows import event_row_key

# Narrow-first order: what says a host is in trouble (its state, the doctor, journal errors) comes first, then what
# tells hosts apart, the model name last (long and often the same). At 80 columns "errors" fell off the edge.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("host", "host"),
    ("state", "state"),
    ("doctor", "doctor"),
    ("errors", "errors"),
    ("spec", "speculative"),
    ("c1", "c=1 tok/s"),
    ("best", "best tok/s ≤TTFT"),  # core.latency.pick: within the TTFT p99 limit, of the running unit
    ("mrr", "max run"),
    ("model", "model"),
)
def _detail(r: FleetRow) -> str:
    parts = [f"{r.name}: {r.state}" + (f" — {r.detail}" if r.detail and r.state != "ready" else "")]
    if r.cause:
        parts.append(f"{r.errors_since_start} error(s) since it started; cause: {r.cause}")
    if r.findings:
        parts.append("doctor: " + ", ".join(r.findings) + " (specdec-tui doctor --host " + r.name + ")")
    return "\n".join(parts)


def _cells(r: FleetRow, active: str) -> dict[str, str]:
    return {
        "host": ("▶ " if r.name == active else "  ") + r.name,
        "state": r.state,
        "model": r.model or MISSING,
        "spec": r.spec_text,
        "mrr": str(r.max_running_requests) if r.max_running_requests is not None else MISSING,
        "c1": fmt_num(r.last_c1_tok_s),
        "best": fmt_num(r.best_tok_s),
        "errors": str(r.errors_since_start),
        "doctor": f"⚠ {len(r.findings)}" if r.findings else ("✓" if r.state != "unreachable" else MISSING),
    }


STATE_STYLE = {"ready": "bold green", "failing": "bold red", "unreachable": "bold red", "down": "dim"}


class FleetTable(Vertical, AlikeRows):
    """One row per host; enter makes it the active host (see the module doc)."""

    DEFAULT_CSS = """
    FleetTable { height: 1fr; }
    FleetTable #fleet-data { height: 1fr; }
    FleetTable #fleet-detail { height: auto; padding: 0 1; }
    FleetTable #fleet-note { height: auto; color: $text-muted; padding: 0 1; }
    """

    class Chosen(Message):
        """The operator picked a host to make active."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.row_names: list[str] = []
        self._cells: dict[tuple[str, str], str] = {}
        self._details: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        table: DataTable[Text | str] = FocusKeptTable(id="fleet-data")
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        yield table
        yield Static("", id="fleet-detail")
        yield Static("Polling the hosts…  enter: make the selected host the active one", id="fleet-note")

    @property
    def table(self) -> DataTable[Text | str]:
        return self.query_one("#fleet-data", DataTable)

    def set_rows(self, rows: list[FleetRow], active: str, *, refused: str = "") -> None:
        """Show `rows`. Rebuilt on every poll (every 2 s while the tab shows), also when nothing changed: leaving
        it alone saved ~1 % of a core, but a notice that expired over the unchanged table stayed painted on the
        terminal (tests/test_tui_tmux_fleet.py at 80x24) — not yet understood, see the issue-16 note."""
        cells_of = {r.name: _cells(r, active) for r in rows}
        details = {r.name: _detail(r) for r in rows}
        table = self.table
        keep = table.cursor_row
        table.clear()
        self.row_names = [r.name for r in rows]
        self._cells.clear()
        self._details = details
        for r in rows:
            cells = cells_of[r.name]
            self._cells.update({(r.name, k): v for k, v in cells.items()})
            styled: list[Text | str] = [
                Text(cells["host"], style="bold" if r.name == active else ""),
                Text(cells["state"], style=STATE_STYLE.get(r.state, "yellow")),
                Text(cells["doctor"], style="bold yellow" if r.findings else "dim"),
                Text(cells["errors"], style="bold red" if r.errors_since_start else "dim"),
                cells["spec"], cells["c1"], cells["best"], cells["mrr"],
                cells["model"],
            ]
            table.add_row(*styled, key=r.name)
        if rows and keep is not None:
            table.move_cursor(row=min(keep, len(rows) - 1))
        self._show_detail()
        if refused:
            self.query_one("#fleet-note", Static).update(Text(f"Not polled: {refused}.", style="bold red"))
            return
        unreachable = sum(1 for r in rows if r.state == "unreachable")
        note = f"{len(rows)} host{'s' if len(rows) != 1 else ''}"
        if unreachable:
            note += f", {unreachable} unreachable"
        self.query_one("#fleet-note", Static).update(f"{note} · polled every 2 s while this tab is shown · "
                                                     "enter: make the selected host the active one")

    def cell_text(self, name: str, column: str) -> str:
        return self._cells.get((name, column), "")

    @property
    def detail_text(self) -> str:
        rendered = self.query_one("#fleet-detail", Static).render()
        return rendered.plain if isinstance(rendered, Text) else str(rendered)

    def _show_detail(self) -> None:
        """What the selected row's cells cannot hold: why it is not ready, and its journal's error cause."""
        row = self.table.cursor_row
        name = self.row_names[row] if 0 <= row < len(self.row_names) else ""
        self.query_one("#fleet-detail", Static).update(Text(self._details.get(name, "")))

    @on(DataTable.RowHighlighted, "#fleet-data")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    @on(DataTable.RowSelected, "#fleet-data")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = event_row_key(event)
        if key is not None:
            self.post_message(self.Chosen(key))
