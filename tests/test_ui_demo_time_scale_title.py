"""The demo panel on a workspace a headless `tune`/`sweep` created (25× time scale, kept in its unit) says so in
its title: otherwise its tok/s (≈ 25 × the modelled GPU's) pass for the figures the README quotes."""

from __future__ import annotations

import argparse

import pytest

from specdec_tui.cli.tui_cmd import demo_app
from specdec_tui.core import paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace

from .ui_helpers import started

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize(("scale", "shown"), [(25.0, "simulated 25× fast: tok/s ×25"), (1.0, None)])
async def test_demo_panel_title_names_the_time_scale(scale: float, shown: str | None) -> None:
    ensure_demo_workspace(paths.demo_dir(), time_scale=scale)
    app = demo_app(argparse.Namespace(config=None, session=None, new_session=False))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        title = app.screen.query_one("HeaderTitle").render()
        text = str(title)
        if shown is None:
            assert "simulated" not in text and "demo · sglang-demo.service" in text
        else:
            assert shown in text
        await pilot.press("ctrl+q")
