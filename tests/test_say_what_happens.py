"""Issue 17, point 6: say what will happen and what happened — the rollback question, a failed start's cause,
a demo unit whose Python is gone, the footer offline and on compare, a TOML syntax error, the failure wording."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import parse_config
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.systemd_quote import quote_arg
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.events import StepFailed
from specdec_tui.loop.states import Busy, Step
from specdec_tui.ui.screens.compare_screen import CompareScreen
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.error_screen import ErrorScreen

from .ui_helpers import OFFLINE_UNIT, demo_app, footer_text, offline_app, record_notifications, started, wait_for


def test_a_toml_syntax_error_names_its_own_lines_unclosed_header() -> None:
    text = 'default_host = "gpu"\nschema_version = 1\n[hosts.gpu\naddress = "h"\n'
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "cfg.toml")
    assert str(caught.value) == "cfg.toml:3: [hosts.gpu: TOML syntax error: the table header is not closed; write [hosts.gpu]"
    assert "default_host" not in str(caught.value)


# -- the footer offers only what can happen there ------------------------------------------------------------

LOOP_KEYS = ("Push", "Restart", "Rollback", "Bench")


async def test_offline_the_footer_offers_no_push_restart_rollback_or_bench() -> None:
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.pause()
        text = footer_text(app)
        assert "Help" in text and "Quit" in text
        assert not [k for k in LOOP_KEYS if k in text], text


async def test_on_the_compare_screen_the_footer_offers_no_push_restart_or_bench(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.trial_loop is not None, "the loop")
        await pilot.pause()
        assert all(k in footer_text(app) for k in LOOP_KEYS)  # on the main screen, with a host, they are offered
        trials = [Trial(id=1, unit_text=OFFLINE_UNIT, label="a"), Trial(id=2, unit_text=OFFLINE_UNIT, label="b")]
        app.push_screen(CompareScreen(Session(host="demo", trials=trials), 1, 2))
        await pilot.pause()
        await pilot.pause()
        text = footer_text(app)
        assert "Back" in text
        assert not [k for k in LOOP_KEYS if k in text], text


# -- a failed start says why, in words ----------------------------------------------------------------------


async def test_a_start_whose_program_is_missing_shows_systemds_cause_in_the_dialog(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                       "the demo start", steps=1200)
        running = app.config_pane.running_text
        program = running.split("ExecStart=", 1)[1].split(" ", 1)[0]
        await app.config_pane.set_text(running.replace(program, str(tmp_path / "gone-venv" / "bin" / "python"), 1))
        await pilot.pause()
        await app.action_push()
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen), "the error dialog", steps=1200)
        dialog = app.screen
        assert isinstance(dialog, ErrorScreen)
        assert dialog.title_text == "The unit could not be restarted"
        assert f"Failed to locate executable {tmp_path}/gone-venv/bin/python" in dialog.detail, dialog.detail
        trial = app.session.trials[-1]
        assert trial.status == "failed" and "Failed to locate executable" in trial.failure
        assert not trial.failure.startswith("restart:")


@pytest.mark.parametrize(("step", "title"), [(Step.HEALTHY, "The server did not become healthy"),
                                             (Step.PUSH, "The push failed"),
                                             (Step.ROLLBACK, "The rollback failed")])
async def test_a_failed_step_is_said_in_words_not_from_its_id(step: Step, title: str) -> None:
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.pause()
        app.show_loop_event(StepFailed(step, "the server did not become ready within 120 s."))
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen), "the dialog")
        dialog = app.screen
        assert isinstance(dialog, ErrorScreen)
        assert dialog.title_text == title
        assert "Healthy failed" not in dialog.title_text and ".." not in dialog.detail, dialog.detail
        log = app.main.journal_pane.log_view
        await wait_for(pilot, lambda: any(title.lower() in str(line) for line in log.lines), "the journal marker")


# -- the rollback question names what it restores ----------------------------------------------------------


async def test_the_rollback_question_names_the_trial_its_time_and_the_flags_that_change(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                       "the demo start", steps=1200)
        for steps in (2, 3):
            seen.clear()
            unit = UnitFile.parse(app.config_pane.running_text).set_flags(
                {"speculative-num-steps": str(steps), "speculative-num-draft-tokens": str(steps + 1)})
            await app.config_pane.set_text(unit.text)
            await pilot.pause()
            await app.action_push()
            await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                           f"the push of steps={steps}", steps=1200)
        first = app.session.trials[0]
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the rollback question")
        question = app.screen.question
        when = (first.pushed_at or first.started_at).strftime("%Y-%m-%d %H:%M")
        assert f"back to trial {first.id} ({first.label}, {when} UTC)" in question, question
        assert "--speculative-num-steps: 3 → 2" in question and "--speculative-num-draft-tokens: 4 → 3" in question
        await pilot.press("n")


# -- a demo workspace whose Python is gone is repaired at start ------------------------------------------


async def test_a_demo_unit_whose_python_was_deleted_is_repaired_at_start_keeping_flags_and_history(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=200)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, stop_timeout_s=5)
    try:
        edited = UnitFile.parse(await host.read_unit()).set_flags(
            {"speculative-num-steps": "3", "speculative-num-draft-tokens": "4"}).text
        await host.push(edited)
        history = await host.history()
        gone = tmp_path / "old venv" / "bin" / "python"  # a path with a space: written quoted
        ws.unit_path.write_text(edited.replace(quote_arg(sys.executable), quote_arg(str(gone)), 1))
        assert UnitFile.parse(ws.unit_path.read_text()).exec_start.program == str(gone)
    finally:
        await host.close()

    again = ensure_demo_workspace(tmp_path / "demo")
    repaired = UnitFile.parse(again.unit_path.read_text())
    assert repaired.exec_start.program == sys.executable
    assert repaired.flags() == UnitFile.parse(edited).flags()  # every flag kept
    host = LocalHost(again.root, again.unit_name, again.base_url, stop_timeout_s=5)
    try:
        assert await host.history() == history  # not a user's edit: no history entry
        started = await host.restart()
        assert started.ok and started.status.is_running, started
    finally:
        await host.close()
