"""At 80×24 the sweep screen keeps every figure column on screen: the status column ("bench c=32 20/32" while a
level runs) came second and pushed the high-concurrency tok/s off the right edge ("high-c tok/", "404.")."""

from __future__ import annotations

from textual.pilot import Pilot

from specdec_tui.bench.events import LevelProgress
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.ui.screens.sweep_screen import SweepScreen
from specdec_tui.ui.task_messages import LevelProgressMessage
from specdec_tui.ui.textual_compat import full_frame_text

from .test_ui_small_screens import sweep_screen
from .ui_helpers import offline_app, started


async def sweep_screen_shown(pilot: Pilot[None]) -> SweepScreen:
    """The offline panel's sweep screen, as `S` opens it."""
    await started(pilot)
    await sweep_screen(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SweepScreen)
    return screen


async def frame_lines(pilot: Pilot[None]) -> list[str]:
    """The lines of the frame a terminal gets, once what was just set is drawn."""
    for _ in range(3):
        await pilot.pause()
    return [terminal_safe(line) for line in full_frame_text(pilot.app).splitlines()]


async def test_a_long_status_leaves_the_high_concurrency_column_on_screen() -> None:
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await sweep_screen_shown(pilot)
        screen._set_status("1", "bench c=32 20/32")  # what the screen writes while a value's c=32 level runs
        lines = await frame_lines(pilot)
        header = next(line for line in lines if "ok/fail" in line)
        assert "high-c tok/s" in header, lines
        assert any("bench c=32" in line for line in lines), lines


async def test_a_running_level_s_status_is_whole_at_80x24() -> None:
    """Newcomer pass (issue 34): a c=64 level's progress read "bench c=64 40/" at 80×24 — the count it was
    running was cut. The screen writes it through its own level handler, and the frame shows it whole."""
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await sweep_screen_shown(pilot)
        screen.current_by_host[screen.runner.host.info.name] = "1"
        screen.planned_by_level[64] = 64  # as the level's start said
        screen._level_progress(LevelProgressMessage(LevelProgress(concurrency=64, done=40, errors=0, tokens=0, tok_s=0.0)))
        lines = await frame_lines(pilot)
        row = next(line for line in lines if "c=64" in line)
        assert "c=64 40/64" in row, lines
        assert "high-c tok/s" in next(line for line in lines if "ok/fail" in line), lines


async def test_the_charts_have_their_titles_and_say_they_wait_before_the_first_value_at_80x24() -> None:
    """Newcomer pass (issue 34): at 80×24 the two charts were empty boxes until a value's figures came (the title
    with "— waiting for the first value" was wider than a chart, and the plot dropped it)."""
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await sweep_screen_shown(pilot)
        frame = "\n".join(await frame_lines(pilot))
        assert "low-concurrency tok/s (up is better)" in frame, frame
        assert "max_running_requests (capacity)" in frame, frame
        assert frame.count("waiting for the first value") == 2, frame
