"""Two trials side by side — what changed in the flags, what it did to tok/s, per-request speed and TTFT at
each concurrency, and what it cost in max_running_requests — above every trial of the session in one table.

All numbers come from `core.compare`, so this screen, `session show` and the Markdown report agree.
`[` / `]` step through consecutive pairs; enter on a row of the all-trials table compares that trial
with the one before it.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from specdec_tui.core.compare import (
    TrialComparison,
    compare_trials,
    concurrencies_of,
    shown_label,
    summary_rows,
)
from specdec_tui.core.number_format import MISSING, fmt_delta, fmt_int, fmt_ms, fmt_num
from specdec_tui.core.session import Session
from specdec_tui.core.status_tone import delta_tone, rich_style
from specdec_tui.ui.widgets.keyed_table import keyed_table
from specdec_tui.ui.widgets.table_rows import event_row_key

LEVEL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("c", "C"),
    ("tok_a", "tok/s A"), ("tok_b", "tok/s B"), ("tok_d", "Δ"),
    ("req_a", "req A"), ("req_b", "req B"), ("req_d", "Δ"),
    ("ttft_a", "TTFT A"), ("ttft_b", "TTFT B"), ("ttft_d", "Δ"),
)


def _delta(pct: float | None, *, higher_is_better: bool = True) -> Text:
    style = rich_style(delta_tone(pct, higher_is_better=higher_is_better), bold=True)
    return Text(fmt_delta(pct), style=style, justify="right")


def _right(text: str) -> Text:
    return Text(text, justify="right")


class CompareScreen(Screen[None]):
    """Trial `b_id` against trial `a_id` of `session`, plus the all-trials summary."""

    HOST_KEYS = False  # saved trials: the app's footer offers no push, restart, rollback or bench here
    BINDINGS = [
        Binding("escape,q", "close", "Back", id="compare-close"),
        Binding("left_square_bracket", "step(-1)", "Prev pair", id="compare-prev", key_display="["),
        Binding("right_square_bracket", "step(1)", "Next pair", id="compare-next", key_display="]"),
    ]
    DEFAULT_CSS = """
    CompareScreen #compare-title { padding: 0 1; text-style: bold; }
    CompareScreen #compare-flags { padding: 0 1; }
    CompareScreen #compare-capacity { padding: 0 1; }
    CompareScreen #compare-legend { padding: 0 1; color: $text-muted; }
    CompareScreen #compare-levels { height: auto; max-height: 12; }
    CompareScreen #compare-confidence { padding: 0 1; height: auto; }
    CompareScreen #compare-all-title { padding: 1 1 0 1; text-style: bold; }
    CompareScreen #compare-all { height: auto; max-height: 20; }
    """

    def __init__(self, session: Session, a_id: int, b_id: int) -> None:
        super().__init__()
        self.session = session
        self.a_id, self.b_id = a_id, b_id
        self.comparison: TrialComparison | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("", id="compare-title", markup=False)
            yield Static("", id="compare-flags", markup=False)
            yield Static("", id="compare-capacity", markup=False)
            yield Static("per concurrency: aggregate output tok/s, per-request tok/s p50, TTFT p50; Δ = B vs A",
                         id="compare-legend")
            yield keyed_table("compare-levels", LEVEL_COLUMNS)
            yield Static("", id="compare-confidence", markup=False)
            yield Static("All trials (enter: compare with the one before)", id="compare-all-title")
            yield DataTable(id="compare-all", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self._fill_all()
        self.show_pair(self.a_id, self.b_id)
        self.query_one("#compare-all", DataTable).focus()

    # -- the pair ---------------------------------------------------------------------------------
    def show_pair(self, a_id: int, b_id: int) -> None:
        a, b = self.session.trial(a_id), self.session.trial(b_id)
        if a is None or b is None:
            self.notify(f"The session has no trial {a_id if a is None else b_id}.", severity="warning")
            return
        self.a_id, self.b_id = a_id, b_id
        cmp = self.comparison = compare_trials(a, b)
        self.query_one("#compare-title", Static).update(
            f"A: trial {a.id} {shown_label(a)} ({a.status})   →   B: trial {b.id} {shown_label(b)} ({b.status})")
        flags = "\n".join(f"  {d.describe()}" for d in cmp.flags) or "  no flag change"
        self.query_one("#compare-flags", Static).update(f"Flags A → B:\n{flags}")
        mrr_a, mrr_b = cmp.max_running_requests
        self.query_one("#compare-capacity", Static).update(
            f"max_running_requests: {fmt_int(mrr_a)} → {fmt_int(mrr_b)}\n" + "\n".join(cmp.latency_lines()))
        table = self.query_one("#compare-levels", DataTable)
        table.clear()
        for lv in cmp.levels:
            table.add_row(
                _right(str(lv.concurrency)),
                _right(fmt_num(lv.a.output_tok_s) if lv.a else MISSING),
                _right(fmt_num(lv.b.output_tok_s) if lv.b else MISSING),
                _delta(lv.tok_s_delta_pct),
                _right(fmt_num(lv.a.per_request_tok_s.p50) if lv.a else MISSING),
                _right(fmt_num(lv.b.per_request_tok_s.p50) if lv.b else MISSING),
                _delta(lv.per_request_delta_pct),
                _right(fmt_ms(lv.a.ttft_ms.p50) if lv.a else MISSING),
                _right(fmt_ms(lv.b.ttft_ms.p50) if lv.b else MISSING),
                _delta(lv.ttft_delta_pct, higher_is_better=False),
                key=str(lv.concurrency),
            )
        confidence = cmp.confidence_lines()  # a winner per level only where the 95 % intervals separate (issue 33)
        self.query_one("#compare-confidence", Static).update(
            "Confidence, per level:\n" + "\n".join(f"  {line}" for line in confidence) if confidence else "")
        if not cmp.levels:
            self.query_one("#compare-capacity", Static).update(
                f"max_running_requests: {fmt_int(mrr_a)} → {fmt_int(mrr_b)}   (neither trial has benchmark results)")

    def level_cell(self, concurrency: int, column: str) -> str:
        """Plain text of a cell of the pair's table (column keys: LEVEL_COLUMNS)."""
        value = self.query_one("#compare-levels", DataTable).get_cell(str(concurrency), column)
        return value.plain if isinstance(value, Text) else str(value)

    def action_step(self, direction: int) -> None:
        ids = [t.id for t in self.session.trials]
        if len(ids) < 2 or self.b_id not in ids:
            return
        i = min(max(ids.index(self.b_id) + direction, 1), len(ids) - 1)
        self.show_pair(ids[i - 1], ids[i])

    # -- all trials -------------------------------------------------------------------------------
    def _fill_all(self) -> None:
        table = self.query_one("#compare-all", DataTable)
        cs = concurrencies_of(self.session)
        table.clear(columns=True)
        for key, label in (("id", "#"), ("label", "trial"), ("status", "status"), ("mrr", "max_run_req"),
                           ("accept", "accept len"), *[(f"c{c}", f"c={c}") for c in cs], ("errors", "err")):
            table.add_column(label, key=key)
        for row in summary_rows(self.session):
            table.add_row(
                _right(str(row.trial.id)), Text(shown_label(row.trial)), Text(row.trial.status),
                _right(fmt_int(row.max_running_requests)), _right(fmt_num(row.accept_length, 2)),
                *[_right(fmt_num(row.tok_s[c])) for c in cs], _right(str(row.errors)),
                key=str(row.trial.id),
            )

    @on(DataTable.RowSelected, "#compare-all")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        ids = [t.id for t in self.session.trials]
        key = event_row_key(event)
        if key is None:
            return
        b_id = int(key)
        i = ids.index(b_id)
        if i == 0:
            self.notify("The first trial has none before it; pick a later one.", severity="warning")
            return
        self.show_pair(ids[i - 1], b_id)

    def action_close(self) -> None:
        self.dismiss(None)
