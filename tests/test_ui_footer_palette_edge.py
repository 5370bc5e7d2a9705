"""The footer's command-palette key sits at the screen's right edge when the keys overflow the row: Textual's compact
footer gives every key a right margin, the docked palette key too, and through that cell the key scrolled under the
palette showed ("…c Cancel ▏^p palettel" at 80×24 during a benchmark, seen under tmux)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Footer

from specdec_tui.core.config import BenchProfile

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for


async def test_the_palette_key_ends_at_the_right_edge_and_no_key_shows_past_it(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_ready(pilot, seen)
        assert app.trial_loop is not None
        app.trial_loop.use_profile(BenchProfile(concurrency=(1,), requests=100_000, warmup=0, max_tokens=64))
        await app.config_pane.set_flag("speculative-num-steps", "3")  # an edit: "d Discard edit" joins the keys
        await pilot.press("escape", "b")
        await wait_for(pilot, lambda: app.bench_running, "the benchmark to start", steps=1200)
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert footer.virtual_size.width > footer.size.width  # the keys overflow the row
        palette = next(key for key in footer.children if key.has_class("-command-palette"))
        assert palette.region.right == app.size.width
        last_cell, _ = app.screen.get_widget_at(app.size.width - 1, app.size.height - 1)
        assert last_cell is palette
        await pilot.press("escape")  # the benchmark cancelled
