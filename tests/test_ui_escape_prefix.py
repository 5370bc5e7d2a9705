"""Escape read together with the key after it is the two keys typed (`ui/escape_prefix.py`) — but an Alt key the
operator bound in `[ui.keymap]` stays that key, and Alt keys Textual cannot have read from Escape stay too. The
keys are posted to the App as the terminal driver posts them (Pilot's `press` makes no such key)."""

from __future__ import annotations

from textual import events

from specdec_tui.core.config import UIConfig
from specdec_tui.ui.screens.sessions_screen import SessionsScreen

from .ui_helpers import offline_app, started, wait_for


async def test_an_alt_key_bound_in_the_keymap_runs_its_binding() -> None:
    app = offline_app()
    app.config = type(app.config)(ui=UIConfig(keymap={"sessions": "alt+o"}))
    app.effective_keymap = {"sessions": "alt+o"}
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        app.post_message(events.Key("alt+o", "o"))
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "the sessions screen")


async def test_escape_then_o_read_as_alt_o_opens_the_sessions_and_types_nothing() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("tab")
        field = app.focused
        before = getattr(field, "value", None)
        app.post_message(events.Key("alt+o", "o"))
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "the sessions screen")
        assert getattr(field, "value", None) == before
