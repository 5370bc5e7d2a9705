"""ctrl+q at quit's own question ("Quit with an unpushed edit?") quits: the key that asked answers it. A newcomer
pressed ctrl+q twice and the panel stayed, the question up (found in tmux at 160×48: the question is asked over
the form, and the second ctrl+q was taken as "already asking")."""

from __future__ import annotations

from pathlib import Path

from specdec_tui.core import drafts
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for


async def test_ctrl_q_twice_with_an_unpushed_edit_quits_and_keeps_the_edit_as_a_draft(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_ready(pilot, seen)
        await app.config_pane.set_flag("speculative-num-steps", "3")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "quit's question")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None, "the panel to quit")
    assert app.return_code == 0
    draft = drafts.load_draft("demo", "sglang-demo.service")
    assert draft is not None and "--speculative-num-steps 3" in draft
