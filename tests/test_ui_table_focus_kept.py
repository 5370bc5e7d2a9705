"""A tab switch does not draw a table again that it showed before (issue 34, point 3: tab keys were the slowest keys
of a sweep). Textual's DataTable dropped every drawn row at each focus change (its `:focus` tint restyles it), so
every show of the Bench, Trials or Fleet tab drew its whole table from scratch in the switch's frame.
`FocusKeptTable` keeps those rows while their looks are the same, and draws them again when they change (a theme).
Counted through public APIs: the cells a table hands to the app's Rich console to render."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.test_report_html import seed_session

from .ui_helpers import cells_rendered, offline_app, started, wait_for


def shown_text(table: DataTable[Any]) -> list[str]:
    return [strip.text for strip in table.render_lines(table.content_region.reset_offset)]


async def show(pilot: Pilot[None], key: str) -> None:
    await pilot.press(key)
    await pilot.pause()
    await pilot.pause()


async def test_showing_a_table_tab_again_draws_none_of_its_cells_and_shows_the_same_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        for key in "45654565":  # each table shown and left twice: drawn focused, then blurred, its rows all there
            await show(pilot, key)
        table = app.main.trials_list.table
        await wait_for(pilot, lambda: table.row_count > 0 and app.screen.focused is table, "the trials table focused")
        shown = shown_text(table)
        for key in ("4", "5", "4", "5"):
            with cells_rendered(app, monkeypatch) as cells:
                await show(pilot, key)
            assert cells == [], f"key {key}: {len(cells)} cells drawn again"
        assert app.screen.focused is table
        assert shown_text(table) == shown  # the same rows, the cursor on the same one


async def test_a_table_s_focus_still_changes_how_its_cursor_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept rows are kept per focus state: the blurred table's cursor is drawn in its blurred colours, and the
    focused one's again in its focused colours when the focus comes back."""
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await show(pilot, "5")
        table = app.main.trials_list.table
        await wait_for(pilot, lambda: app.screen.focused is table, "the trials table focused")
        cursor_row = table.cursor_row + 1  # the header first
        region = table.content_region.reset_offset

        def cursor_style() -> object:
            return next(iter(table.render_lines(region)[cursor_row])).style

        focused = cursor_style()
        app.screen.set_focus(None)
        await pilot.pause()
        blurred = cursor_style()
        assert blurred != focused
        app.screen.set_focus(table)
        await pilot.pause()
        assert cursor_style() == focused


async def test_a_theme_change_draws_a_table_s_rows_again(monkeypatch: pytest.MonkeyPatch) -> None:
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await show(pilot, "5")
        table = app.main.trials_list.table
        await wait_for(pilot, lambda: app.screen.focused is table and table.row_count > 0, "the trials table focused")
        before = table.render_lines(table.content_region.reset_offset)[1]
        with cells_rendered(app, monkeypatch) as cells:
            app.theme = "textual-light"
            await pilot.pause()
            await pilot.pause()
            after = table.render_lines(table.content_region.reset_offset)[1]
        assert cells != []
        assert after.text == before.text and after != before  # the same row, in the new theme's colours
