"""The Tune screen as a person sees it at 80×24 in a real terminal: `specdec-tui --demo`, T, enter, the search
runs on the demo host and ends with the choice, its schedule and the key that pushes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import specdec_tui
from specdec_tui.core import paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.tmux_session import Tmux, program

pytestmark = pytest.mark.timeout(300)


def test_a_tune_at_80x24_ends_with_the_choice_and_its_schedule(tmux: Tmux) -> None:
    ensure_demo_workspace(paths.demo_dir(), time_scale=50)
    env = {"SPECDEC_TUI_DATA_DIR": os.environ["SPECDEC_TUI_DATA_DIR"],
           "SPECDEC_TUI_CONFIG_DIR": os.environ["SPECDEC_TUI_CONFIG_DIR"], "TERM": "xterm-256color",
           "PYTHONPATH": str(Path(specdec_tui.__file__).resolve().parents[1])}
    tmux.start(program() + ["--demo"], env, width=80, height=24)
    tmux.wait_for(lambda s: "Server is healthy" in s, "the demo's own start", timeout_s=90)
    tmux.keys("T")
    tmux.wait_for(lambda s: "Tune demo" in s and "ttft_p99=2s" in s, "the Tune screen with its form")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "launch " in s and "of at most" in s or "launch 1:" in s, "the first launch")
    final = tmux.wait_for(lambda s: "Choice: steps=" in s, "the choice", timeout_s=240)
    assert "Traceback" not in final
    assert "a pushes the choice" in final or "Schedule: c=1" in final, final
    assert all(len(line) <= 80 for line in final.splitlines())
    footer = final.rstrip("\n").splitlines()[-1]  # the last row of the 24: the screen's keys
    assert "esc Cancel / back" in footer and "a Push the choice" in footer, final
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "Push" in s and "Choice:" not in s, "back on the main screen")
