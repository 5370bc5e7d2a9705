"""The panel's sweep when its values are within noise (issue 33, point 4): the best value is marked a pick, not
"★ winner", and the apply question says in words that it shows no clear difference from the runner-up (and how
many repeats would tell) before asking to apply anyway; applied, it is named the pick. On the real demo host, through Pilot."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen

from .ui_helpers import demo_app, demo_idle, demo_unit_file, wait_for


async def test_a_sweep_within_noise_asks_to_apply_a_pick_anyway(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=5.0)  # at 25× a request's tok/s is mostly the loaded machine's timing
    unit_file = demo_unit_file(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        original = unit_file.read_text()
        # 0.84 and 0.85 of the memory fraction (the form offers the speculative flags; the plan takes any):
        # the same speed at c=1, within the benchmark's noise
        plan = replace(plan_from_form(SweepForm("speculative-num-steps", "1,2", "1", "c1"), app.config.profile()),
                       flag="mem-fraction-static", values=("0.84", "0.85"))
        # 24 requests a value at c=1: the percentile bootstrap over 4 requests is too narrow to trust
        app.trial_loop.use_profile(replace(app.trial_loop.profile, concurrency=(1,), requests=24))
        app.push_screen(SweepScreen(app.trial_loop, plan))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                       and bool(app.screen.query("#confirm-question")), "the apply question", steps=2400)
        outcome = screen.outcome
        assert outcome is not None and outcome.choice is not None and outcome.winner is not None
        assert not outcome.choice.clear, outcome.choice.reasons
        other = ({"0.84", "0.85"} - {outcome.winner}).pop()
        question = str(app.screen.query_one("#confirm-question").render())
        said = " ".join(question.split())
        assert said.startswith(f"Apply --mem-fraction-static {outcome.winner}? It shows no clear difference "
                               f"from {other}; "), question
        # how many repeats would tell them apart, or (the two figures read the same) that none would
        assert (said.startswith(f"Apply --mem-fraction-static {outcome.winner}? It shows no clear difference from "
                                f"{other}; ") and ("; about " in said or "; more than 99 " in said)
                and "repeats each would tell; apply anyway?" in said) or (
            "; the figures are equal: no count of repeats would tell them apart; apply anyway?" in said), said
        assert "Apply the winner" not in question
        status = screen.cell_text(outcome.winner, "status")
        assert "pick: no clear difference" in status and "★" not in status
        assert str(screen.query_one("#sweep-result").render()).startswith(
            f"Pick: mem-fraction-static {outcome.winner} (no clear difference from {other}")
        assert "--mem-fraction-static" in original
        await pilot.press("y")  # applied anyway: said as the pick it is, not as a winner
        await wait_for(pilot, lambda: "now runs" in str(screen.query_one("#sweep-result").render()), "the result",
                       steps=2400)
        result = " ".join(str(screen.query_one("#sweep-result").render()).split())
        assert f"The host now runs the pick (mem-fraction-static {outcome.winner})." in result, result
        assert "now runs the winner" not in result
        assert f"--mem-fraction-static {outcome.winner}" in unit_file.read_text()
