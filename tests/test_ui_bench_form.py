"""The panel's load form (issue 33): from the palette's "Benchmark with a load…", the demo panel runs an open-loop
benchmark of the chat workload on the real simulator; a bad field is refused in words; the form fits 80x24."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Input, Select, Static

from specdec_tui.core.config import BenchProfile
from specdec_tui.ui.screens.bench_form_screen import BenchFormScreen
from specdec_tui.ui.widgets.bench_table import BenchTable

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for


async def test_the_load_form_runs_an_open_loop_chat_benchmark_on_the_demo(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        app.action_bench_load()
        await wait_for(pilot, lambda: isinstance(app.screen, BenchFormScreen) and bool(app.screen.query("#bench-rate")),
                       "the load form")
        form = app.screen
        form.query_one("#bench-workload", Select).value = "chat"
        form.query_one("#bench-arrivals", Select).value = "poisson"
        form.query_one("#bench-rate", Input).value = "fast"
        form.submit()
        await pilot.pause()
        assert "Rate: requests per second" in str(form.query_one("#bench-form-error", Static).render())
        form.query_one("#bench-rate", Input).value = "20"
        form.query_one("#bench-requests", Input).value = "12"
        form.query_one("#bench-slo", Input).value = "ttft_p99=5s"
        form.submit()
        await wait_for(pilot, lambda: any(n.startswith("Benchmark done") for n in seen), "the benchmark", steps=1200)
        trial = app.session.trials[-1]
        assert trial.profile.workload == "chat" and trial.profile.rate == 20.0
        (level,) = trial.levels
        assert level.rate == 20.0 and level.requests == 12 and level.workload["name"] == "chat"
        assert level.good_requests is not None
        assert app.screen.query_one(BenchTable).cell_text(0, "c") == "20/s"


class FormHost(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        self.push_screen(BenchFormScreen(BenchProfile(workload="code", seed=3, rate=8.0, slo=("ttft_p99=2s",))))


def test_the_load_form_at_80x24(snap_compare) -> None:
    assert snap_compare(FormHost(), terminal_size=(80, 24))
