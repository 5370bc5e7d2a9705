"""Focus follows the tab the user looks at, and digits typed into a field stay in the field."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Select, TabbedContent

from specdec_tui.core.unit import UnitFile
from specdec_tui.ui.widgets.flag_form import FlagForm, widget_id
from specdec_tui.ui.widgets.journal_log import JournalLog

from .ui_helpers import offline_app, started, wait_for

STEPS = "speculative-num-steps"


async def test_the_form_is_no_tab_stop_and_digits_typed_in_steps_edit_the_unit() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)  # the first frame shows the unit as text; the form takes the focus when it arrives
        tabs = app.main.query_one(TabbedContent)
        assert isinstance(app.focused, Select) and app.focused.id == widget_id("field", "speculative-algorithm")
        assert not app.main.query_one(FlagForm).can_focus
        await pilot.press("tab")  # one Tab from the first field reaches steps (the form is no stop)
        assert isinstance(app.focused, Input) and app.focused.id == widget_id("field", STEPS)
        await pilot.press("end", "backspace", "2")
        await wait_for(pilot, lambda: UnitFile.parse(app.config_pane.text).flags().get(STEPS) == "2", "steps=2 in the unit")
        assert tabs.active == "config"


async def test_a_tab_key_puts_the_focus_on_that_tabs_widget() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        tabs = app.main.query_one(TabbedContent)
        expected = {"2": ("journal", JournalLog, "journal-log"), "4": ("bench", DataTable, "bench-data"),
                    "5": ("trials", DataTable, "trials-data"), "1": ("config", Select, widget_id("field", "speculative-algorithm"))}
        for key, (tab, kind, wid) in expected.items():
            await pilot.press("escape", key)  # escape leaves a field, so the digit is a tab key
            await wait_for(pilot, lambda tab=tab, wid=wid: tabs.active == tab and app.focused is not None and app.focused.id == wid,
                           f"focus in {tab}")
            assert isinstance(app.focused, kind)


async def test_tabbing_to_a_field_already_in_view_does_not_scroll_the_form() -> None:
    """The form moves only to show a field that is not all in view (Textual asks every ancestor of the field
    whether it is; a container hidden to save paint time answered no, and each Tab re-centred the form)."""
    app = offline_app()
    async with app.run_test(size=(80, 16)) as pilot:
        await started(pilot)
        form = app.main.query_one(FlagForm)
        await wait_for(pilot, lambda: form.max_scroll_y > 0, "a form taller than the screen")
        target = widget_id("field", "max-running-requests")  # the 6th field: in view with the form at the top
        for _ in range(6):
            await pilot.press("tab")
            await pilot.pause()
        assert app.focused is not None and app.focused.id == target
        assert form.scroll_y == 0
