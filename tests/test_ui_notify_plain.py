"""Notifications carry text from outside (a session's labels and flag values, host names, a server's or host's
error words, file paths). Textual reads a notification's message as markup unless told not to: a "[/]" there
ended the panel with a MarkupError, a "[link=x]" or "[b]" restyled the words and hid itself. The panel's
notifications are plain text (one owner: `PanelState.notify`)."""

from __future__ import annotations

from textual.widgets._toast import Toast

from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.session import Trial
from specdec_tui.ui.screens.sessions_screen import SessionsScreen

from .ui_helpers import OFFLINE_UNIT, offline_app, started, wait_for


def toast_texts(app: object) -> list[str]:
    """What the notifications on screen read, as drawn."""
    return [str(toast.render()) for toast in app.screen.query(Toast)]  # type: ignore[attr-defined]


async def test_a_trial_picked_whose_flag_values_and_label_hold_markup_is_told_in_those_words() -> None:
    trials = [Trial(id=1, unit_text=OFFLINE_UNIT, label="base", flags={"speculative-num-steps": "3"}),
              Trial(id=2, unit_text=OFFLINE_UNIT, label="[link=x]bold[/link]",
                    flags={"speculative-num-steps": "[/]", "speculative-eagle-topk": "[b]4[/b]"})]
    app = offline_app(trials=trials)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await started(pilot)
        await pilot.press("5")
        app.main.trials_list.table.focus()
        app.main.trials_list.table.move_cursor(row=1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("v compares in full" in t for t in toast_texts(app)), "the trial's toast")
        await pilot.pause()
        told = " ".join(toast_texts(app))
        assert "[/]" in told, told
        assert "[b]4[/b]" in told, told
        assert "[link=x]bold[/link]" in told, told
        assert app.is_running


async def test_a_screen_s_notification_of_a_session_file_named_with_markup_shows_its_name() -> None:
    """A screen's `notify` (Textual's `Widget.notify` asks for markup by default) goes the same way."""
    directory = sessions_dir()
    directory.mkdir(parents=True)
    (directory / "20260301-[link=x]box[b].toml").write_text('host = "box"\nversion = 999\n', encoding="utf-8")
    app = offline_app()
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await started(pilot)
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "the sessions screen")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Cannot open" in t for t in toast_texts(app)), "the toast")
        await pilot.pause()
        told = " ".join(toast_texts(app))
        assert "[link=x]box[b]" in told, told
        assert app.is_running
