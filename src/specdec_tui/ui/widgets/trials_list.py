"""The session's trials, newest last: what changed, what it bought at c=1 and at the top, what it cost.

This is the seed operator's notebook (steps 1→2→3: 123→186→234 tok/s, max_running_requests 26→21→17)
as a table. Selecting a row posts `TrialsList.Selected` so the shell can show that trial's results.

Public API (for the app shell):
    TrialsList(id=...)
    .set_trials(trials: list[Trial])    # specdec_tui.core.session.Trial, in session order
    .trial_ids: list[int]
    .cell_text(trial_id, column) -> str  # column keys: COLUMNS
Messages: TrialsList.Selected(trial_index: int, trial_id: int) on enter/click of a row;
          TrialsList.Highlighted(trial_id: int) when the cursor moves to a row.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from specdec_tui.core.compare import shown_label
from specdec_tui.core.number_format import MISSING, fmt_int, fmt_num
from specdec_tui.core.session import Trial
from specdec_tui.core.status_tone import THEME_VARIABLE, Tone, status_tone
from specdec_tui.ui.cell_style import foreground_style
from specdec_tui.ui.widgets.alike_rows import AlikeRows
from specdec_tui.ui.widgets.focus_kept_table import FocusKeptTable
from specdec_tui.ui.widgets.table_rows import event_row_key

COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "#"),
    ("time", "time"),
    ("c1", "total tok/s c=1"),  # not the trade-off's per-request p50: each names its figure
    ("cmax", "tok/s max c"),
    ("mrr", "max_run_req"),
    ("status", "status"),
    ("change", "changed"),  # last: a label as wide as its change pushed the numbers and the status off 80 columns
)
_TONE_CLASS = {tone: f"trials--{tone.value}" for tone in Tone}  # a status's colour: core.status_tone's
Cell = tuple[str, "JustifyMethod | None", Style | None]  # text, justify, style: a cell as shown (unchanged ones are skipped)


class TrialsList(Vertical, AlikeRows):
    """One row per trial with its headline numbers; selecting posts `Selected` (API in module doc)."""

    COMPONENT_CLASSES = set(_TONE_CLASS.values())
    DEFAULT_CSS = ("TrialsList {\n    height: 1fr;\n    #trials-data { height: 1fr; }\n    & > .trials--bad { text-style: bold; }\n"
                   + "".join(f"    & > .{_TONE_CLASS[tone]} {{ color: $text-{THEME_VARIABLE[tone]}; }}\n" for tone in Tone)
                   + "}\n")

    class Selected(Message):
        """The operator picked a trial (enter or click)."""

        def __init__(self, trial_index: int, trial_id: int) -> None:
            super().__init__()
            self.trial_index = trial_index  # position in the list given to set_trials
            self.trial_id = trial_id

    class Highlighted(Message):
        """The cursor is on a trial (the trade-off view marks it)."""

        def __init__(self, trial_id: int) -> None:
            super().__init__()
            self.trial_id = trial_id

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.trial_ids: list[int] = []
        self._shown: list[list[Cell]] = []  # the cells on screen, per trial in order
        self._marks: list[tuple[object, ...]] = []  # what each shown row was made from (`_mark`), in order
        self._styles: dict[str, Style] = {}  # the status colours the rows were made with

    def compose(self) -> ComposeResult:
        table: DataTable[Text | str] = FocusKeptTable(id="trials-data")
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        yield table

    @property
    def table(self) -> DataTable[Text | str]:
        return self.query_one("#trials-data", DataTable)

    def set_trials(self, trials: list[Trial]) -> None:
        """Show `trials`. When they extend the trials shown (a trial added, a level or an end changed one), only
        the trials that changed are read again (`_mark`), only the cells that differ are rewritten and the new rows
        added: rebuilding all of a 1,000-trial session's rows on every change of a sweep held the panel's keys for
        seconds, and making every row's cells again still cost ~0.1 s a change (issue 34). Anything else rebuilds."""
        styles = {name: foreground_style(self, name) for name in self.COMPONENT_CLASSES}
        ids = [trial.id for trial in trials]
        extends = bool(self.trial_ids) and ids[: len(self.trial_ids)] == self.trial_ids
        if styles != self._styles or not extends:  # a new theme (the status colours) or another list: all again
            self._styles, self._marks = styles, []
        marks = [_mark(trial, previous) for previous, trial in zip([None, *trials], trials, strict=False)]
        known = self._marks
        shown = [self._shown[i] if i < len(known) and known[i] == mark else _shown_cells(trial, previous, styles)
                 for i, (mark, previous, trial) in enumerate(zip(marks, [None, *trials], trials, strict=False))]
        self._marks = marks
        table = self.table
        if not extends:
            keep_row = table.cursor_row
            table.clear()
            for trial_id, cells in zip(ids, shown, strict=True):
                table.add_row(*(_text(cell) for cell in cells), key=str(trial_id))
            self._shown, self.trial_ids = shown, ids
            if trials:
                table.move_cursor(row=min(max(keep_row, 0), len(trials) - 1))
            return
        for trial_id, cells, was in zip(ids, shown, self._shown, strict=False):  # the rows shown before
            if cells is was:
                continue
            for (column, _), cell, old in zip(COLUMNS, cells, was, strict=True):
                if cell != old:  # a text wider than its column widens it; a narrower one leaves it as it is (Textual
                    # measures every cell of the column again for a narrower one: ~1,000 measures a change here)
                    wider = cell_len(cell[0]) > table.columns[ColumnKey(column)].content_width
                    table.update_cell(str(trial_id), column, _text(cell), update_width=wider)
        for trial_id, cells in zip(ids[len(self._shown):], shown[len(self._shown):], strict=True):
            table.add_row(*(_text(cell) for cell in cells), key=str(trial_id))
        self._shown, self.trial_ids = shown, ids

    @property
    def current_trial_id(self) -> int | None:
        """The trial under the cursor (None with no trials)."""
        row = self.table.cursor_row
        return self.trial_ids[row] if 0 <= row < len(self.trial_ids) else None

    def cell_text(self, trial_id: int, column: str) -> str:
        value = self.table.get_cell(str(trial_id), column)
        return value.plain if isinstance(value, Text) else str(value)

    @on(DataTable.RowHighlighted, "#trials-data")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = event_row_key(event)
        if key is not None:
            self.post_message(self.Highlighted(int(key)))

    @on(DataTable.RowSelected, "#trials-data")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = event_row_key(event)
        if key is not None:
            trial_id = int(key)
            self.post_message(self.Selected(self.trial_ids.index(trial_id), trial_id))



def _mark(trial: Trial, previous: Trial | None) -> tuple[object, ...]:
    """What a row is made of, cheap to compare: a row whose trial (and the one before it, which names the change) has
    the same mark shows the same cells. Levels are appended, never edited; the rest is replaced, not changed."""
    return (trial, trial.id, trial.status, trial.failure, len(trial.levels), trial.levels[-1] if trial.levels else None,
            trial.label, trial.facts, trial.pushed_at, trial.started_at, trial.flags, previous,
            previous.flags if previous is not None else None)


def _shown_cells(trial: Trial, previous: Trial | None, styles: dict[str, Style]) -> list[Cell]:
    levels = sorted(trial.levels, key=lambda lv: lv.concurrency)
    at_one = next((lv.output_tok_s for lv in levels if lv.concurrency == 1 and lv.measured), None)
    at_max = levels[-1] if levels else None
    when = trial.pushed_at or trial.started_at
    mrr = trial.facts.max_running_requests if trial.facts else None
    status_class = _TONE_CLASS[status_tone(trial.status)]
    status = trial.status + (f": {trial.failure}" if trial.failure else "")
    return [
        (str(trial.id), "right", None),
        (when.astimezone().strftime("%H:%M:%S") if when else MISSING, None, None),
        (fmt_num(at_one), "right", None),
        (f"{fmt_num(at_max.output_tok_s)} @{at_max.concurrency}" if at_max and at_max.measured else MISSING, "right",
         None),
        (fmt_int(mrr), "right", None),
        (status[:40], None, styles[status_class]),
        (shown_label(trial, previous), None, None),
    ]


def _text(cell: Cell) -> Text:
    text, justify, style = cell
    return Text(text, justify=justify, style=style or "")
