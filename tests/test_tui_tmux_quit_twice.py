"""The real `specdec-tui --demo` under tmux: ctrl+q twice with an unpushed edit quits (the second answered nothing:
the question stayed up), and the edit is the draft offered at the next start."""

from __future__ import annotations

import pytest

from specdec_tui.core import drafts, paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.test_tui_tmux_typing import field_value, type_keys
from tests.tmux_session import Tmux, panel_env, program

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(180)]


def test_ctrl_q_twice_with_an_edit_quits_and_keeps_the_draft(tmux: Tmux) -> None:
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    env = panel_env()
    tmux.start(program() + ["--demo"], env)
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "1" and "Push" in s, "the Config form")
    type_keys(tmux, "Tab", "End", "BSpace", "3")
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "3", "steps 3 in the field")
    tmux.keys("C-q")
    tmux.wait_for(lambda s: "Quit with an unpushed edit" in s, "quit's question")
    tmux.keys("C-q")
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")
    assert "EXITED:0" in final and "Traceback" not in final, final
    draft = drafts.load_draft("demo", ws.unit_name)
    assert draft is not None and "--speculative-num-steps 3 \\" in draft
