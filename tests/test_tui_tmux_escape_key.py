"""Escape and the key typed after it under tmux: tmux joins the two into one read when typed within its
`escape-time` (500 ms by default), and Textual reads that as Alt+key. Escape to leave a field and then `2` for
the Journal tab typed "™" into the field; Escape then `o` typed an "o" there instead of opening the saved
sessions. The real program under tmux, both keys sent in one write (`ui/escape_prefix.py`)."""

from __future__ import annotations

import pytest

from specdec_tui.core import paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.test_tui_tmux_typing import field_value
from tests.tmux_session import Tmux, panel_env, program

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(180)]
STEPS = "speculative-num-steps"


def in_the_steps_field(tmux: Tmux) -> None:
    tmux.keys("1")
    tmux.wait_for(lambda s: field_value(s, STEPS) == "1" and "Push" in s, "the Config form")
    tmux.keys("Tab")  # the first field is the algorithm; one Tab reaches steps


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
def test_escape_then_a_key_typed_together_leaves_the_field_and_runs_the_key(tmux: Tmux,
                                                                           size: tuple[int, int]) -> None:
    ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    tmux.start(program() + ["--demo"], panel_env(), *size)
    in_the_steps_field(tmux)
    tmux.keys("Escape", "2")  # one write: Textual alone reads it as Option+2, "™"
    tmux.wait_for(lambda s: "● following ·" in s or "⏸ paused ·" in s, "the Journal tab (its status line)")
    in_the_steps_field(tmux)
    assert field_value(tmux.screen(), STEPS) == "1"  # nothing typed into the field

    tmux.keys("Escape", "o")  # Alt+o to Textual
    tmux.wait_for(lambda s: "Saved sessions in" in s, "the saved sessions")
    tmux.keys("Escape")
    screen = tmux.wait_for(lambda s: field_value(s, STEPS) is not None, "the Config form again")
    assert field_value(screen, STEPS) == "1", screen
    assert "No changes" in screen or "+    --speculative-num-steps" not in screen, screen
