"""The first switch to the chart loads nothing: an operator's first `4` waits only for the tab's first draw.

bench/long_session.py times that switch key to frame (45–70 ms on a 200-trial session, the chart drawn for the first
time in the process); a module first imported there would be paid by that key, on the event loop, as the doctor's
first `/metrics` poll once paid aiohttp's import mid-sweep. The chart's modules come with the tabs at start."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from textual.widgets import TabbedContent

from specdec_tui.cli.tui_cmd import offline_app
from specdec_tui.core.config import Config
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial, save_session

OWN = ("specdec_tui", "plotext", "textual_plotext", "textual.widgets")  # the panel's, the chart's, Textual's widgets


def _session(trials: int) -> Session:
    session = Session(host="gpu-box", unit="sglang.service")
    for index in range(1, trials + 1):
        rate = 100.0 + index
        levels = [LevelResult(concurrency=c, requests=8, errors=0, output_tokens=8 * 64, duration_s=2.0,
                              output_tok_s=rate * c ** 0.5, per_request_tok_s=Dist(rate, rate, rate, rate))
                  for c in (1, 4, 16)]
        session.trials.append(Trial(id=index, unit_text="", flags={"speculative-num-steps": str(index % 4 + 1)},
                                    status="ok", label=f"steps={index % 4 + 1}", levels=levels))
    return session


async def test_the_first_switch_to_the_chart_draws_it_and_imports_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    save_session(_session(12), path)
    app = offline_app(argparse.Namespace(sessions=False, session=str(path), host=None), Config())
    assert app is not None
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(400):  # the panel has started and read the rest of the file (after its first frame)
            if app.session_load is not None and app.session_load.done:
                break
            await pilot.pause(0.05)
        assert app.session_load is not None and app.session_load.done
        await pilot.pause()
        loaded = set(sys.modules)
        await pilot.press("4")
        await pilot.pause()
        assert app.main.query_one(TabbedContent).active == "bench"
        assert any(label.startswith("#12 ") for label, _ in app.main.tok_chart.series)  # the newest trial's curve
        new = sorted(set(sys.modules) - loaded)  # Textual's scrollbar and rich's ANSI reader may come now (~1.4 ms)
        assert [name for name in new if name.startswith(OWN)] == []
