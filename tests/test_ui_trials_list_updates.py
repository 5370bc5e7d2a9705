"""The trials list of a long session follows a change by rewriting what changed (issue 34: rebuilding all 1,000 rows
on every change of a sweep held the panel's keys for seconds), and still shows what a fresh list would."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from textual.app import App, ComposeResult

from specdec_tui.core.results import LevelResult, ServerFacts
from specdec_tui.core.session import Trial
from specdec_tui.ui.widgets.trials_list import COLUMNS, TrialsList

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield TrialsList(id="long")
        yield TrialsList(id="fresh")


def make_trial(i: int, steps: int, status: str = "ok", tok_s: float | None = None) -> Trial:
    trial = Trial(id=i, unit_text="", flags={"speculative-num-steps": str(steps)}, label=f"steps={steps}",
                  started_at=START + timedelta(minutes=i), status=status)  # type: ignore[arg-type]
    if tok_s is not None:
        trial.levels = [LevelResult(concurrency=1, output_tok_s=tok_s)]
        trial.facts = ServerFacts(model="qwen", max_running_requests=20 + steps % 7)
    return trial


def shown(widget: TrialsList) -> list[list[str]]:
    """Every row as the table shows it, in the table's order."""
    table = widget.table
    return [[widget.cell_text(int(str(table.coordinate_to_cell_key((row, 0)).row_key.value)), key)
             for key, _ in COLUMNS] for row in range(table.row_count)]


class WriteCounter:
    """Counts the rows the table is given and the cells rewritten (wrapping the DataTable's own methods)."""

    def __init__(self, widget: TrialsList) -> None:
        self.added = 0
        self.cells: set[str] = set()
        table = widget.table
        add_row, update_cell = table.add_row, table.update_cell

        def counting_add_row(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.added += 1
            return add_row(*args, **kwargs)

        def counting_update_cell(row_key, column_key, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.cells.add(str(row_key))
            return update_cell(row_key, column_key, *args, **kwargs)

        table.add_row = counting_add_row  # type: ignore[method-assign]
        table.update_cell = counting_update_cell  # type: ignore[method-assign]
        self.column_reads = 0  # whole columns read (DataTable.get_column): what shrinking a column's width costs
        get_column = table.get_column

        def counting_get_column(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.column_reads += 1
            return get_column(*args, **kwargs)

        table.get_column = counting_get_column  # type: ignore[method-assign]


async def test_a_trial_added_to_a_1000_trial_session_writes_one_row_and_the_list_reads_right(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from specdec_tui.ui.widgets import trials_list

    made: list[int] = []  # the trials whose cells were made again (every row's, each change: ~0.1 s at 1,000)
    shown_cells = trials_list._shown_cells
    monkeypatch.setattr(trials_list, "_shown_cells", lambda trial, *rest: made.append(trial.id) or shown_cells(trial, *rest))
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        long, fresh = app.query_one("#long", TrialsList), app.query_one("#fresh", TrialsList)
        trials = [make_trial(i, 1 + i % 5, tok_s=100.0 + i) for i in range(1, 1001)]
        long.set_trials(trials)
        long.table.move_cursor(row=500)
        await pilot.pause()
        counter = WriteCounter(long)
        made.clear()
        running = make_trial(1001, 3, status="running")
        long.set_trials([*trials, running])  # the push of a sweep's next value: one row more
        assert counter.added == 1 and counter.cells == set() and made == [1001]
        running.status, running.levels = "ok", [LevelResult(concurrency=1, output_tok_s=321.5)]
        long.set_trials([*trials, running])  # its level came and it ended: that row's cells only
        assert counter.added == 1 and counter.cells == {"1001"} and made == [1001, 1001]
        await pilot.pause()  # the table measures what changed when idle: "running" → "ok" reads no whole column
        assert counter.column_reads == 0
        fresh.set_trials([*trials, running])
        await pilot.pause()
        assert shown(long) == shown(fresh)
        assert long.cell_text(1001, "c1") == "321.5" and long.cell_text(1001, "status") == "ok"
        assert long.trial_ids == list(range(1, 1002))
        assert long.current_trial_id == 501  # the cursor stays where the operator left it


async def test_a_list_that_is_not_the_shown_one_extended_is_shown_as_given() -> None:
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        long, fresh = app.query_one("#long", TrialsList), app.query_one("#fresh", TrialsList)
        long.set_trials([make_trial(i, i, tok_s=10.0 * i) for i in range(1, 6)])
        other = [make_trial(i, 7 - i, tok_s=5.0 * i) for i in (2, 4, 9)]  # another session's, or trials removed
        long.set_trials(other)
        fresh.set_trials(other)
        await pilot.pause()
        assert long.trial_ids == [2, 4, 9] and shown(long) == shown(fresh)
        long.set_trials([])
        await pilot.pause()
        assert long.trial_ids == [] and long.table.row_count == 0


async def test_a_burst_of_stale_messages_redraws_the_panels_trials_once() -> None:
    from specdec_tui.ui.screens.main_screen import MainScreen

    from .ui_helpers import OFFLINE_UNIT, offline_app, started, wait_for

    app = offline_app(trials=[Trial(id=1, unit_text=OFFLINE_UNIT, label="base")])
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        redraws: list[int] = []
        show_trials = app.show_trials

        def counted() -> None:
            redraws.append(len(app.session.trials))
            show_trials()

        app.show_trials = counted  # type: ignore[method-assign]
        app.session.trials.append(Trial(id=2, unit_text=OFFLINE_UNIT, label="steps=2"))
        for _ in range(3):  # a level, the trial's end and the next push, queued together
            app.main.post_message(MainScreen.TrialsStale())
        await wait_for(pilot, lambda: app.main.trials_list.trial_ids == [1, 2], "the new trial in the list")
        await pilot.pause(0.1)
        assert redraws == [2]
        assert app.main.trials_list.cell_text(2, "change") == "steps=2"
