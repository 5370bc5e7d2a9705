"""The sweep table's status cell while a value is benchmarked says how far the level is: "c=4 3/8" (no "bench "
before it: it was cut at 80×24), not "bench c=4 3" (a bare count that reads like an error count or a repeat number)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.ui.app import make_app
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen

from .ui_helpers import demo_idle, wait_for

pytestmark = pytest.mark.timeout(120)
STEPS = "speculative-num-steps"


async def test_sweep_status_shows_requests_done_of_planned(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=2.0)  # slow enough for progress within a level
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1,), requests=6, warmup=0, max_tokens=64, ignore_eos=True)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"),
                   Session(host="demo", unit=ws.unit_name, profile=profile), session_path=tmp_path / "s.toml")
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        screen = SweepScreen(app.trial_loop, plan_from_form(SweepForm(STEPS, "1..2", "1", "c1"), profile))
        shown: list[str] = []
        set_status = screen._set_status

        def record(value: str, status: str) -> None:
            shown.append(status)
            set_status(value, status)

        screen._set_status = record  # type: ignore[method-assign]
        app.push_screen(screen)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) or screen.outcome is not None,
                       "the sweep to end", steps=2400)
    progress = [s for s in shown if re.fullmatch(r"c=1 \d+.*", s)]
    assert progress, shown
    assert all(re.fullmatch(r"c=1 \d/6", s) for s in progress), progress


async def test_the_first_value_has_a_time_left_once_a_level_is_done(tmp_path: Path) -> None:
    """Newcomer pass (issue 35): the sweep said "estimating the time left…" for its whole first value (the pace was
    taken from whole values only); a level done gives an estimate while the first value still runs."""
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=25.0)
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1, 2, 4), requests=4, warmup=0, max_tokens=32, ignore_eos=True)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"),
                   Session(host="demo", unit=ws.unit_name, profile=profile), session_path=tmp_path / "s.toml")
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        screen = SweepScreen(app.trial_loop, plan_from_form(SweepForm(STEPS, "1..2", "1", "c1"), profile))
        app.push_screen(screen)

        def status() -> str:
            found = screen.query("#sweep-status")
            return str(found.first().render()) if found else ""

        await wait_for(pilot, lambda: status().startswith("[1/2]") and "left" in status() and "estimating" not in status(),
                       "an estimate during the first value", steps=2400)
        assert re.fullmatch(r"\[1/2\] .* · about \d+ s left|\[1/2\] .* · about \d+ min \d\d s left", status()), status()
        assert not screen.trials_by_value  # the first value has not ended
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) or screen.outcome is not None,
                       "the sweep to end", steps=2400)
