"""The footer offers "esc Cancel" at all times; pressed with nothing to stop and no field to leave it did nothing and
said nothing (a new user's pass: `--demo`, tab 4, esc). It leaves a field first, then says there is nothing to
cancel and what the key stops."""

from __future__ import annotations

from textual.widgets import Select, Tabs

from .ui_helpers import offline_app, record_notifications, started, wait_for


async def test_escape_leaves_the_field_then_says_there_is_nothing_to_cancel() -> None:
    app = offline_app()
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert isinstance(app.focused, Select)  # the form's first field
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.focused, Tabs), "the focus on the tab bar")
        assert not any("cancel" in n.lower() for n in seen), seen  # leaving the field is what it did: no word
        await pilot.press("4", "escape")
        await wait_for(pilot, lambda: any(n.startswith("Nothing to cancel") for n in seen), "the words")
        assert "stops a running benchmark" in seen[-1]
        await pilot.press("c")  # the other key of the binding says it too
        await wait_for(pilot, lambda: sum(n.startswith("Nothing to cancel") for n in seen) == 2, "the words again")
