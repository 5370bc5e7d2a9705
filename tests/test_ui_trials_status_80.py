"""At 80×24 the Trials list shows every trial's status whole: it was the last column, after a change label as wide
as the change, and a running trial read "runnin" (the rest off screen) on the demo's first sweep."""

from __future__ import annotations

from specdec_tui.core.config import Config
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.ui.app import make_app
from specdec_tui.ui.textual_compat import full_frame_text

from .test_ui_states_snapshots import seed_trials
from .ui_helpers import OFFLINE_UNIT, started, wait_for


async def test_a_running_trial_after_a_long_change_label_shows_running_at_80_columns() -> None:
    trials = seed_trials()
    flags = {**trials[-1].flags, "speculative-num-draft-tokens": "8", "speculative-eagle-topk": "4"}
    trials.append(Trial(id=4, unit_text=OFFLINE_UNIT, flags=flags, status="running",
                        label="speculative-num-draft-tokens=8 speculative-eagle-topk=4"))
    app = make_app(Config(), None, Session(host="demo", unit="sglang-demo.service", trials=trials), session_path=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await pilot.press("5")
        await wait_for(pilot, lambda: "max_run_req" in app.export_screenshot(), "the trials list")
        frame = [_words(line) for line in full_frame_text(app).splitlines()]
        row = next(line for line in frame if line.lstrip().startswith("4 "))
        assert "running" in row, frame
        third = next(line for line in frame if line.lstrip().startswith("3 "))
        assert "234.0" in third and "1,130 @64" in third and "ok" in third, frame  # the numbers on screen too


def _words(line: str) -> str:
    return terminal_safe(line)
