"""Issue 35, "edits that do not land as typed" (the panel's half): whatever changes the host's unit refreshes the
Config form, `f` fixes the finding it is offered for, the restore-draft dialog shows what the draft changes."""

from __future__ import annotations

from pathlib import Path

from specdec_tui.core import drafts
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.states import Busy
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sweep_form_screen import SweepFormScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen
from specdec_tui.ui.widgets.flag_form import widget_id

from .ui_helpers import applied_as, demo_app, demo_ready, demo_unit_file, offline_app, record_notifications, started, wait_for

STEPS = "speculative-num-steps"


def field_value(app: object, flag: str) -> str:
    return str(app.config_pane.query_one(f"#{widget_id('field', flag)}").value)  # type: ignore[attr-defined]


async def test_a_sweep_winner_applied_is_what_the_form_shows_and_the_next_push_keeps_it(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=200.0)
    unit_file = demo_unit_file(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        before = UnitFile.parse(unit_file.read_text()).flags()[STEPS]
        values = ("2", "3") if before == "1" else ("1", "2")  # every value another than the one running
        await pilot.press("escape")
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, SweepFormScreen)
        app.screen.query_one("#sweep-values").value = "..".join(values)
        app.screen.query_one("#sweep-repeats").value = "1"
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the apply-the-winner question", steps=2400)
        winner = screen.outcome.winner
        assert winner in values and winner != before
        await pilot.press("y")
        await wait_for(pilot, lambda: f"now runs the {applied_as(screen)}" in str(screen.query_one("#sweep-result").render()),
                       "the winner applied", steps=2400)
        await pilot.press("escape")
        pane = app.config_pane
        await wait_for(pilot, lambda: app.screen is app.main and pane.running_text == unit_file.read_text(),
                       "the form to follow the host's unit")
        await pilot.pause()
        # The form and the diff show the host's unit: the winner, and no change nobody typed.
        assert field_value(app, STEPS) == winner
        assert not pane.dirty and pane.diff == ""
        assert UnitFile.parse(pane.text).flags()[STEPS] == winner
        # An edit of another field, then p, pushes the winner with it (not the pre-sweep value again); quitting
        # with that edit unpushed writes the draft it says it keeps.
        app.config_pane.query_one(f"#{widget_id('field', 'max-running-requests')}").focus()
        await pilot.press("ctrl+a", *"12")  # select all is not an Input key: type after what is there
        await pilot.press("escape")
        await wait_for(pilot, lambda: pane.dirty, "the edit to land in the unit")
        assert "speculative-num-steps" not in pane.diff and "max-running-requests" in pane.diff
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the quit question")
        draft = drafts.load_draft("demo", app.session.unit)
        assert draft is not None and UnitFile.parse(draft).flags()[STEPS] == winner
        await pilot.press("y")
    assert app.trial_loop is None or app.trial_loop.busy is Busy.IDLE


async def test_f_fixes_the_finding_of_the_row_the_cursor_is_on_not_the_first_fixable_one() -> None:
    app = offline_app()
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.config_pane
        editor = app.screen.query_one("#unit-editor")
        # Two findings with a fix: a deprecated flag (a warning) and a switch given a value (an error, listed first).
        editor.text = editor.text.replace("--enable-metrics", "--enable-metrics yes \\\n    --disable-cuda-graph")
        cuda_graph_field = f"#{widget_id('field', 'disable-cuda-graph')}"
        # the findings are judged from the text at once, the new flag's row is mounted after the form's rebuild (later
        # on a loaded machine: the query found no field)
        await wait_for(pilot, lambda: len([i for i in pane.issues if i.fixable]) == 2
                       and any(field.is_mounted for field in pane.query(cuda_graph_field)), "both findings and the row")
        pane.query_one(cuda_graph_field).focus()
        await pilot.pause()
        app.set_focus(None)  # out of the field (escape): f is the panel's key; the cursor was on that row
        await pilot.press("f")
        await wait_for(pilot, lambda: any(n.startswith("Applied fix") for n in seen), "the fix")
        flags = UnitFile.parse(pane.text).flags()
        assert "disable-cuda-graph" not in flags and flags["cuda-graph-backend-decode"] == "disabled"
        assert flags["enable-metrics"] == "yes"  # the other finding's fix is not applied
        # On a row whose finding has no fix, f says so and fixes nothing else.
        editor.text = editor.text.replace("--speculative-num-steps 1", "--speculative-num-steps three")
        await wait_for(pilot, lambda: any(i.flag == STEPS for i in pane.issues), "the steps error")
        pane.query_one(f"#{widget_id('field', STEPS)}").focus()
        await pilot.pause()
        app.set_focus(None)
        text = pane.text
        await pilot.press("f")
        await wait_for(pilot, lambda: "has no fix" in seen[-1], "the refusal")
        assert pane.text == text and seen[-1] == f"The finding of --{STEPS} has no fix to apply: type a value it allows."
