"""Issue 17, point 1, as a person sees it: `specdec-tui --demo` started, a trial benchmarked, quit, and the
program started again lists that trial at once (the demo host's current session is continued)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import specdec_tui
from specdec_tui.core import paths
from specdec_tui.core.number_format import fmt_num
from specdec_tui.core.session import load_session
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.current_session import current_session_of
from tests.tmux_session import Tmux, program

pytestmark = pytest.mark.timeout(240)


def quit_program(tmux: Tmux) -> None:
    tmux.keys("C-q")
    tmux.wait_for(lambda s: "EXITED:" in s or "Quit" in s, "quit (or its confirmation)")
    if "EXITED:" not in tmux.screen():
        tmux.keys("y")
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")
    assert "EXITED:0" in final and "Traceback" not in final, final


def test_the_demo_started_again_lists_the_trial_of_the_start_before(tmux: Tmux) -> None:
    ensure_demo_workspace(paths.demo_dir(), time_scale=50)  # the workspace the program opens, fast
    env = {"SPECDEC_TUI_DATA_DIR": os.environ["SPECDEC_TUI_DATA_DIR"],
           "SPECDEC_TUI_CONFIG_DIR": os.environ["SPECDEC_TUI_CONFIG_DIR"], "TERM": "xterm-256color",
           "PYTHONPATH": str(Path(specdec_tui.__file__).resolve().parents[1])}  # this checkout's code
    tmux.start(program() + ["--demo"], env)
    tmux.wait_for(lambda s: "specdec-tui" in s and "Push" in s, "the panel's first frame")
    tmux.wait_for(lambda s: "Server is healthy" in s, "the demo's own start", timeout_s=90)
    tmux.keys("b")
    tmux.wait_for(lambda s: "Benchmark done" in s, "the benchmark", timeout_s=150)
    quit_program(tmux)

    path = current_session_of("demo", paths.sessions_dir())
    assert path is not None
    trial = load_session(path).trials[-1]
    level = trial.level(1)
    assert trial.status == "ok" and level is not None
    when = (trial.pushed_at or trial.started_at).astimezone().strftime("%H:%M:%S")

    tmux.kill()
    tmux.start(program() + ["--demo"], env)
    tmux.wait_for(lambda s: "specdec-tui" in s and "Push" in s, "the panel's first frame again")
    tmux.keys("5")  # Trials tab: the first start's trial is there, before anything ran in this one
    tmux.wait_for(lambda s: any(when in line and fmt_num(level.output_tok_s) in line for line in s.splitlines()),
                  f"trial {trial.id} ({when}, {fmt_num(level.output_tok_s)} tok/s at c=1) in the Trials tab")
    quit_program(tmux)
    assert len(list(paths.sessions_dir().glob("*.toml"))) == 1
