"""What the first trial needs is made ready off the event loop once the server is ready (issue 34): the benchmark's
modules (the first benchmark imported aiohttp on the panel's event loop, holding every key typed meanwhile) and the
session file's text (the first save of a long session made every trial's table, holding the GIL mid-sweep)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from textual.app import App

from specdec_tui.core.session import Session, Trial, load_session
from specdec_tui.loop.session_saver import saver_for
from specdec_tui.ui import first_trial_warmup
from specdec_tui.ui.first_trial_warmup import FirstTrialWarmup

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for

PROBE = '''import threading
IMPORTED_ON = threading.get_ident()
'''


async def test_the_warm_up_imports_the_modules_on_a_thread_not_the_event_loop(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "warm_probe_34.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(first_trial_warmup, "BENCH_MODULES", ("warm_probe_34",))
    monkeypatch.delitem(sys.modules, "warm_probe_34", raising=False)
    app: App[None] = App()
    async with app.run_test() as pilot:
        warmup = FirstTrialWarmup(app)
        warmup.start(Session(), None)
        warmup.start(Session(), None)  # once per panel
        await wait_for(pilot, lambda: "warm_probe_34" in sys.modules, "the module imported")
        assert sys.modules["warm_probe_34"].IMPORTED_ON != threading.get_ident()
    monkeypatch.delitem(sys.modules, "warm_probe_34", raising=False)


async def test_the_panel_warms_the_bench_engine_when_its_server_is_ready(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.warmup.started
        await demo_ready(pilot, seen)
        await wait_for(pilot, lambda: app.warmup.started and "specdec_tui.bench.engine" in sys.modules,
                       "the bench engine warmed")


def test_a_primed_saver_writes_nothing_and_its_next_save_is_the_session(tmp_path: Path) -> None:
    path = tmp_path / "primed.toml"
    session = Session(host="demo", unit="u.service", trials=[Trial(id=i, unit_text=f"[Service]\nX={i}\n", label=f"t{i}")
                                                             for i in range(1, 4)])
    saver = saver_for(path)
    saver.prime(session)
    saver.flush(30)
    assert not path.exists() and saver.writes == 0  # made ready, not written
    session.trials.append(Trial(id=4, unit_text="[Service]\nX=4\n", label="t4"))
    session.trials[0].notes = "changed after the prime"
    saver.save(session)
    saver.flush(30)
    back = load_session(path)
    assert [t.id for t in back.trials] == [1, 2, 3, 4] and back.trials[0].notes == "changed after the prime"
    assert [t.label for t in back.trials] == ["t1", "t2", "t3", "t4"] and saver.writes == 1
