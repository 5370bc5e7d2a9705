"""Newcomer pass (issue 34): `R` offered every trial with a unit — also one cancelled before its bench, with no
level to replay or compare a replay against. A trial with no levels is left out (a cancelled trial that kept its
levels stays offered), and when nothing is left the panel says so in words."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from specdec_tui.core.results import LevelResult
from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

from .ui_helpers import demo_app, demo_idle, record_notifications, wait_for


async def trials_started(pilot: Pilot[None], app: SpecdecApp, statuses: tuple[str, ...], with_levels: tuple[bool, ...]) -> None:
    """Trials of the running unit with these statuses, each with one level or none, as a session of earlier runs."""
    await demo_idle(pilot)
    runner = app.trial_loop
    assert runner is not None
    text = app.config_pane.running_text
    for status, levels in zip(statuses, with_levels, strict=True):
        trial = runner.start_trial(text)
        trial.status = status  # type: ignore[assignment]
        trial.levels = [LevelResult(concurrency=1, requests=6, output_tok_s=100.0)] if levels else []


async def test_r_offers_only_the_trials_with_levels(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await trials_started(pilot, app, ("ok", "cancelled", "cancelled", "failed"), (True, True, False, False))
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the replay's question")
        question = str(app.screen.query_one("#confirm-question").render())
        assert question.startswith("Replay 2 trial(s)"), question
        await pilot.press("n")
        await pilot.pause()


async def test_r_with_only_trials_without_levels_says_there_is_nothing_to_replay(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await trials_started(pilot, app, ("cancelled", "failed"), (False, False))
        seen = record_notifications(app)
        await pilot.press("R")
        await wait_for(pilot, lambda: bool(seen), "the panel's answer")
        assert not isinstance(app.screen, ConfirmScreen)
        assert "Nothing to replay" in seen[0] and "no benchmark levels" in seen[0], seen
        assert "2 trial(s)" in seen[0], seen
