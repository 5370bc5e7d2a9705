"""The panel opening a session whose text is hostile (labels, hosts, a profile name and flag values hold escape
codes, a bidi override and Textual markup): it opens, every tab draws, and what is drawn is the words. Before: a
label holding "[link=javascript:x]" raised MarkupError from the Bench tab's status line at open (the panel ended),
and the tok/s chart's legend ran the label's colour code and showed the OSC's "0;PWNED"."""

from __future__ import annotations

from textual.pilot import Pilot

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial
from specdec_tui.ui.app import make_app
from specdec_tui.ui.textual_compat import full_frame_text

from .ui_helpers import OFFLINE_UNIT, started, wait_for

EVIL = "\x1b]0;PWNED\x07\x1b[31mRED\u202eevil[bold]B[/bold][link=javascript:x]L[/link]"


def _hostile_session() -> Session:
    trials = [Trial(id=i, unit_text=OFFLINE_UNIT, status="ok", label=f"{EVIL}{i}", host=f"{EVIL}h",
                    flags={"speculative-num-steps": str(i), "served-model-name": f"{EVIL}[red]m{i}"},
                    levels=[LevelResult(concurrency=c, requests=4, output_tok_s=123.4 * c * i, ttft_ms=Dist(p99=10.0))
                            for c in (1, 4)],
                    profile=BenchProfile(concurrency=(1, 4), name=f"{EVIL}prof"))
              for i in (1, 2)]
    return Session(host=f"{EVIL}host", unit="sglang-demo.service", trials=trials, notes=EVIL)


def _words_only(pilot: Pilot[None], where: str) -> str:
    frame = full_frame_text(pilot.app)
    assert "PWNED" not in frame and "\u202e" not in frame, where
    assert "0;PWNED" not in frame
    return frame


async def test_a_hostile_session_opens_and_every_tab_draws_its_words() -> None:
    app = make_app(Config(), None, _hostile_session(), session_path=None)
    async with app.run_test(size=(200, 50)) as pilot:
        await started(pilot)
        for key in "1234567":
            await pilot.press(key)
            await pilot.pause(0.2)
            _words_only(pilot, f"tab {key}")
        await pilot.press("4")
        await wait_for(pilot, lambda: "#2 REDevil[bold]B[/bold][link=javascript:x]L[/link]2: 2 levels"
                       in full_frame_text(app), "the Bench tab's status naming the stored trial by its label as typed")
        await wait_for(pilot, lambda: "#1 REDevil[bold]B[/bold]" in full_frame_text(app), "the chart legend's label")
        _words_only(pilot, "bench tab")
        assert app.is_running
