"""ctrl+q quits from every screen the panel puts on top — a question, a form, the help — as it does from the main
screen. Textual stops the app's keys at a modal screen: the draft question at start held ctrl+q, and every key
after it waited for an answer (found by trying the demo with a draft saved from an earlier run)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from specdec_tui.core import drafts
from specdec_tui.ui.screens.bench_form_screen import BenchFormScreen
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.help_screen import HelpScreen

from .ui_helpers import demo_app, demo_ready, demo_unit_file, record_notifications, started, wait_for


async def test_ctrl_q_at_the_draft_question_quits_and_keeps_the_draft_for_the_next_start(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    draft = demo_unit_file(tmp_path).read_text().replace("--speculative-num-steps 1", "--speculative-num-steps 2")
    drafts.save_draft("demo", "sglang-demo.service", draft)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the draft question")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None, "the panel to quit")
    assert app.return_code == 0
    assert drafts.load_draft("demo", "sglang-demo.service") == draft  # neither restored nor discarded: offered again


async def test_ctrl_q_on_the_help_screen_quits(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None, "the panel to quit")


async def test_ctrl_q_in_a_field_of_the_load_form_asks_about_the_unpushed_edit_and_q_types_a_q(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        await app.config_pane.set_flag("speculative-num-steps", "3")
        app.action_bench_load()
        await wait_for(pilot, lambda: isinstance(app.screen, BenchFormScreen) and bool(app.screen.query("#bench-slo")),
                       "the load form")
        slo = app.screen.query_one("#bench-slo", Input)
        slo.focus()
        await pilot.press("q")  # a field's own letter: typed, not a quit
        await wait_for(pilot, lambda: slo.value.endswith("q"), "q in the field")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "quit's question")
        assert "Quit with an unpushed edit" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("y")
        await wait_for(pilot, lambda: app.return_code is not None, "the panel to quit")
