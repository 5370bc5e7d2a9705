"""End to end on the demo host: the mamba state pool cuts max_running_requests (48 asked for speculative
decoding, 26 fit), the journal parser reads SGLang 0.5.23's start-up summary, and the health pane shows the
number the server runs with. 0.5.23 logs no "bound by" line, so the pane claims no bound it was not told."""

from __future__ import annotations

from pathlib import Path

from .ui_helpers import demo_app, started, wait_for


async def test_health_pane_shows_the_demo_servers_max_running_requests(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=20)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.screen.query_one("#health-pane")
        # the seed's unit: steps 1 asks for 48 running requests; the state pool gives 26
        await wait_for(
            pilot,
            lambda: "max_running_requests  26" in pane.section_text("facts"),
            "the health pane to show the server's max_running_requests",
            steps=1200,
        )
