"""End to end on the demo host: the sim's start-up log says the mamba state pool cut max_running_requests,
the journal parser reads it, and the health pane shows the number with its bound, as the operator sees it."""

from __future__ import annotations

from pathlib import Path

from .ui_helpers import demo_app, started, wait_for


async def test_health_pane_shows_the_demo_servers_bound(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=20)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.screen.query_one("#health-pane")
        # the seed's unit: steps 1 asks for 48 running requests; the state pool gives 26
        await wait_for(
            pilot,
            lambda: "max_running_requests  26, bound by mamba state" in pane.section_text("facts"),
            "the health pane to show the bound",
            steps=1200,
        )
