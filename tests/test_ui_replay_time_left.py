"""A replay of one trial says how long it has left once a level is done (newcomer44, the demo under tmux at 80×24:
`R` on a session of one trial read "[1/1] replaying baseline · estimating the time left…" for its whole four
minutes — the pace was taken from whole trials only — and still after it ended). The real demo host, a real replay, the status line read as
shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.ui.app import make_app
from specdec_tui.ui.screens.replay_screen import ReplayScreen

from .ui_helpers import demo_idle, wait_for

pytestmark = pytest.mark.timeout(180)


async def test_a_replay_of_one_trial_has_a_time_left_once_a_level_is_done(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=10.0)  # levels long enough to read the estimate between them
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1, 2, 4), requests=4, warmup=0, max_tokens=32, ignore_eos=True)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    trial = Trial(id=1, unit_text=ws.unit_path.read_text(), status="ok", label="baseline", profile=profile,
                  levels=[LevelResult(concurrency=c, requests=4, output_tok_s=100.0) for c in (1, 2, 4)])
    session = Session(host="demo", unit=ws.unit_name, profile=profile, trials=[trial])
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"), session,
                   session_path=tmp_path / "s.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_idle(pilot)
        screen = ReplayScreen(app.trial_loop, session)
        app.push_screen(screen)

        def status() -> str:
            found = screen.query("#replay-status")
            return str(found.first().render()) if found else ""

        await wait_for(pilot, lambda: ("left" in status() and "estimating" not in status()) or screen.outcome is not None,
                       "an estimate while the trial is replayed", steps=2400)
        assert screen.outcome is None, f"the replay ended without an estimate: {screen.log_lines}"
        assert re.fullmatch(r"\[1/1\] replaying baseline · about (\d+ s|\d+ min \d\d s) left", status()), status()
        await wait_for(pilot, lambda: screen.outcome is not None, "the replay to end", steps=2400)
        await pilot.pause()
        assert status() == "replay done: 1 trial(s) replayed", status()  # it read "replaying baseline · estimating…"
