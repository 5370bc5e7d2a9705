"""ctrl+q while a cancelled sweep puts back the unit that ran before: the panel said "A sweep is running. Press
escape on it to cancel … then quit", though escape had been pressed and the restore was under way (a newcomer
pressed escape again, in tmux at 80×24). It says the unit is being put back and to quit once it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.ui.app import make_app
from specdec_tui.ui.screens.sweep_screen import SweepScreen

from .ui_helpers import demo_idle, record_notifications, wait_for

pytestmark = pytest.mark.timeout(120)


async def test_ctrl_q_during_a_cancelled_sweep_s_restore_says_the_unit_is_being_put_back(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=2.0)  # a restart takes seconds: the restore is seen
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1,), requests=4, warmup=0, max_tokens=64, ignore_eos=True)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"),
                   Session(host="demo", unit=ws.unit_name, profile=profile), session_path=tmp_path / "s.toml")
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_idle(pilot)
        screen = SweepScreen(app.trial_loop, plan_from_form(SweepForm("speculative-num-steps", "2..3", "1", "c1"),
                                                           profile))
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.running and bool(screen.log_lines), "the sweep to start", steps=2400)
        await pilot.press("escape")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: any("quit" in s for s in seen), "quit's answer")
        assert screen.running, "the restore ended before ctrl+q: nothing was tested"
        said = next(s for s in seen if "quit" in s)
        assert "Press escape" not in said and "putting back the unit that ran before" in said, said
        await wait_for(pilot, lambda: not screen.running, "the restore to end", steps=2400)
