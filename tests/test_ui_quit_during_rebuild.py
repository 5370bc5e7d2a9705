"""A unit whose flags differ from the form's rows (pushed by a sweep, or read again from the host) rebuilds the
Config form's rows. A quit (ctrl+q, a signal, the pilot's end) can come in the middle of that rebuild: Textual's own
Select, composed while the app was torn down, looked for its parts already removed (NoMatches, a traceback).
The exit now waits for the rebuild (`ui.exit_hold`), as it waits for the form's first build."""

from __future__ import annotations

import asyncio
import functools

import pytest
from textual.widget import Widget
from textual.widgets import Input, Select

from specdec_tui.ui.widgets.flag_form import FlagForm

from .ui_helpers import OFFLINE_UNIT, offline_app, started, wait_for

OTHER_FLAGS = OFFLINE_UNIT.replace("--port 30000", "--port 30000 --chunked-prefill-size 4096")


@pytest.mark.parametrize("widget", [Select, Input], ids=["a select", "a text field"])
async def test_a_quit_in_the_middle_of_a_rebuild_of_the_form_exits_cleanly(
        widget: type[Widget], monkeypatch: pytest.MonkeyPatch) -> None:
    app = offline_app()
    quit_at: list[str] = []
    armed = False
    original = widget.compose

    @functools.wraps(original)
    def compose_then_quit(self: Widget) -> object:
        if armed and not quit_at:  # in the middle of the rebuild: its rows are going, new ones being composed
            quit_at.append(str(self))
            app.exit()
        return original(self)

    monkeypatch.setattr(widget, "compose", compose_then_quit)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        form = app.config_pane.query_one(FlagForm)
        armed = True
        rebuild = asyncio.create_task(app.config_pane.load_running(OTHER_FLAGS))
        await wait_for(pilot, lambda: app.return_code is not None, "the app to quit")
        await asyncio.wait({rebuild}, timeout=5)
    assert quit_at and app.return_code == 0  # Textual ends with return code 1 and a traceback on an exception
    assert rebuild.done() and not rebuild.cancelled() and rebuild.exception() is None
    assert "chunked-prefill-size" in form.values  # the rebuild ended before the exit
