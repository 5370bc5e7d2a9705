"""At 80×24 the Tune screen's search field and the saved-sessions list (`o`) were cut: a third of the row for the
search space showed "speculative-num-steps=0,1,2,3" of its default, and the file column, last, showed
"20260301-0". Checked on the frame as a terminal would get it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile, Config, HostConfig
from specdec_tui.core.session import save_session
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui.screens.sessions_screen import SessionsScreen
from specdec_tui.ui.screens.tune_screen import DEFAULT_SLO, DEFAULT_SPACE, TuneScreen
from specdec_tui.ui.textual_compat import full_frame_text

from .test_ui_sessions import seed_session
from .ui_helpers import offline_app, started

SESSION_FILE = "20260301-093000-gpu-box.toml"


def frame_lines(app: object) -> list[str]:
    return [terminal_safe(line) for line in full_frame_text(app).splitlines()]  # type: ignore[arg-type]


@pytest.mark.parametrize("hosts", [("demo",), ("demo", "gpu-b")], ids=["one host", "with the hosts field"])
async def test_the_tune_form_shows_its_default_search_space_and_slo_whole_at_80x24(hosts: tuple[str, ...]) -> None:
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        host = LocalHost(Path("no-such-workspace"), "sglang-demo.service", "http://127.0.0.1:9", name="demo")
        loop = TrialLoop(host=host, session=app.session, profile=BenchProfile(concurrency=(1, 4)),
                         base_url="http://127.0.0.1:9")
        config = Config(hosts={name: HostConfig(name=name, address="" if name == "demo" else "127.0.0.1") for name in hosts})
        app.push_screen(TuneScreen(loop, config=config))
        for _ in range(3):
            await pilot.pause()
        assert bool(app.screen.query("#tune-hosts")) is (len(hosts) > 1)
        fields = next(line for line in frame_lines(app) if "ttft" in line)
        assert DEFAULT_SPACE in fields and DEFAULT_SLO in fields, fields


async def test_the_sessions_list_shows_the_whole_file_name_at_80x24(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a short relative folder: the detail line's path fits one line
    directory = Path("sessions")
    directory.mkdir()
    save_session(seed_session("gpu-box"), directory / SESSION_FILE)
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        app.push_screen(SessionsScreen(directory))
        for _ in range(3):
            await pilot.pause()
        row = next(line for line in frame_lines(app) if "gpu-box" in line and "2026-03-01" in line)
        assert SESSION_FILE in row and "234.0" in row, row  # the file whole, the best tok/s still on screen
        assert any(line.strip() == os.fspath(directory / SESSION_FILE) for line in frame_lines(app))  # the detail line
