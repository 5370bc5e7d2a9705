"""Watching a tune in the panel as a newcomer does (the demo host, the real simulator, Pilot): a launch's benchmark
ran for minutes under "launch 1: bench" with nothing moving; a resumed tune showed an empty table and no best
though its earlier launches were known (and not repeated); after a cancel the screen still said what would be
launched next; the correctness gate after a one-launch budget read "launch 2: gate"."""

from __future__ import annotations

import re
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.screens.tune_screen import TuneScreen

from .ui_helpers import demo_app, demo_ready, record_notifications, start_tune, wait_for

SPACE = "speculative-num-steps=1,3"


def text_of(screen: TuneScreen, widget: str) -> str:
    return str(screen.query_one(f"#tune-{widget}", Static).render())


async def tuned_once(pilot: Pilot, app: SpecdecApp, *, watch: list[str] | None = None) -> None:
    """A one-launch tune to its end, then back on the main screen; `watch` gets every status said."""
    screen = await start_tune(pilot, app, SPACE, "ttft_p99=5s", "1")
    if watch is not None:
        say = screen._say
        screen._say = lambda widget, text: (watch.append(text) if widget == "status" else None, say(widget, text))[1]
    await wait_for(pilot, lambda: screen.outcome is not None, "the tune's end", steps=2400)
    await pilot.press("escape")
    await wait_for(pilot, lambda: not isinstance(app.screen, TuneScreen), "back on the main screen")


async def test_a_launch_shows_each_level_of_its_benchmark_as_it_runs(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=25.0, session_path=tmp_path / "session.toml")
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        said: list[str] = []
        await tuned_once(pilot, app, watch=said)
        levels = [s for s in said if re.fullmatch(r"launch 1: bench c=\d+( \d+/\d+)?", s)]
        assert len({s.split()[3] for s in levels}) >= 2, said  # each level as it runs (with its requests done)
        assert [s for s in said if s.startswith("gate: correctness gate")], said  # the tune's own step: no launch 2
        assert not [s for s in said if s.startswith("launch 2")], said


async def test_a_resumed_tune_shows_its_launches_at_once_and_a_cancel_names_no_next(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=25.0, session_path=tmp_path / "session.toml")
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        await tuned_once(pilot, app)
        again = await start_tune(pilot, app, SPACE, "ttft_p99=5s", "2")  # the same tune, one launch more
        await wait_for(pilot, lambda: "launch 2" in text_of(again, "status"), "the second launch", steps=1200)
        table = again.query_one("#tune-surface", DataTable)
        assert table.row_count == 1 and text_of(again, "best").startswith("best: steps="), text_of(again, "best")
        await pilot.press("escape")  # cancel it mid-launch
        await wait_for(pilot, lambda: "The tune stopped" in text_of(again, "status"), "the cancel", steps=1200)
        assert text_of(again, "next") == ""


async def test_a_tune_whose_slo_nothing_meets_says_so_instead_of_an_empty_best_and_chart(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=25.0, session_path=tmp_path / "session.toml")
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_ready(pilot, seen)
        screen = await start_tune(pilot, app, SPACE, "ttft_p99=1ms", "3")
        await wait_for(pilot, lambda: screen.outcome is not None, "the tune's end", steps=2400)
        assert text_of(screen, "best") == "best: none yet: no level of any launch meets TTFT p99 ≤ 1 ms"
        status = text_of(screen, "status")
        assert "predicted to meet TTFT p99 ≤ 1 ms at any level" in status and "beat the best" not in status, status
        assert "No configuration met the SLO" in text_of(screen, "result")
        assert text_of(screen, "next") == ""  # was "next: steps=… — nothing measured yet" after the end
