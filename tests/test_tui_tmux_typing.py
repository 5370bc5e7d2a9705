"""Typing fast into the Config pane of the real `specdec-tui --demo` under tmux: the field, the unit and
the saved draft end on exactly what was typed, and quit still works (no echo loop between the form
and the unit text)."""

from __future__ import annotations

import re
import time

import pytest

from specdec_tui.core import drafts, paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.tmux_session import Tmux, panel_env, program

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(180)]

KEY_GAP_S = 0.04  # a fast typist: 40 ms between keys (pacing the input, not a timing assertion)


def field_value(screen: str, flag: str) -> str | None:
    """The text a form row shows (the left column), None when the row is not on screen."""
    for line in screen.splitlines():
        match = re.match(rf"^{re.escape(flag)}\s+(\S*)", line)
        if match:
            return match.group(1)
    return None


def type_keys(tmux: Tmux, *keys: str) -> None:
    for key in keys:
        tmux.keys(key)
        time.sleep(KEY_GAP_S)


def paste(tmux: Tmux, text: str) -> None:
    """A terminal paste (bracketed when the program asked for it, as Textual does)."""
    tmux.run("set-buffer", "-b", "specdec-test", text)
    tmux.run("paste-buffer", "-p", "-d", "-b", "specdec-test", "-t", "t")


def test_fast_typing_and_a_paste_in_the_steps_field_end_on_what_was_typed(tmux: Tmux) -> None:
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    env = panel_env()
    tmux.start(program() + ["--demo"], env)
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "1" and "Push" in s, "the Config form")

    type_keys(tmux, "Tab")  # the first field is the algorithm; one Tab reaches steps
    type_keys(tmux, "End", "BSpace", "3", "BSpace", "2", "BSpace", "3")
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "3" and "+    --speculative-num-steps 3 \\" in s,
                  "steps 3 in the field and in the diff")

    type_keys(tmux, "End", "BSpace")
    paste(tmux, "42")
    type_keys(tmux, "7")
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "427" and "+    --speculative-num-steps 427 \\" in s,
                  "steps 427 in the field and in the diff")

    tmux.keys("C-q")  # quit works from the field (no echo loop keeps the app busy)
    tmux.wait_for(lambda s: "Quit with an unpushed edit" in s, "quit's question (the edit is kept as a draft)")
    tmux.keys("y")
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")
    assert "EXITED:0" in final and "Traceback" not in final, final
    draft = drafts.load_draft("demo", ws.unit_name)
    assert draft is not None and "--speculative-num-steps 427 \\" in draft


def test_keys_sent_in_one_burst_with_tabs_land_in_the_fields_the_tabs_reach(tmux: Tmux) -> None:
    """One `send-keys` (one read for the program): the keys behind a Tab or a Shift+Tab go to the field the focus
    moved to, as soon as the form is on screen (before, the steps field emptied and the keys after it were lost)."""
    ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    env = panel_env()
    tmux.start(program() + ["--demo"], env)
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "1", "the Config form")

    tmux.keys("Tab", "End", "BSpace", "4", "BSpace", "3", "Tab", "End", "BSpace", "5", "BTab", "End", "2")
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "32" and field_value(s, "speculative-eagle-topk") == "5"
                  and "+    --speculative-num-steps 32 \\" in s and "+    --speculative-eagle-topk 5 \\" in s,
                  "steps 32 and top-k 5 in the fields and in the diff")
    tmux.keys("C-q")
    tmux.wait_for(lambda s: "Quit with an unpushed edit" in s, "quit's question")
    tmux.keys("y")
    assert "EXITED:0" in tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")


def test_ctrl_q_at_the_question_about_an_earlier_draft_quits_and_the_draft_stays(tmux: Tmux) -> None:
    """A draft saved by an earlier run is offered at start in a question; ctrl+q there did nothing (Textual stops
    the app's keys at a question) and the keys after it waited for an answer."""
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    draft = ws.unit_path.read_text().replace("--speculative-num-steps 1", "--speculative-num-steps 2")
    drafts.save_draft("demo", ws.unit_name, draft)
    env = panel_env()
    tmux.start(program() + ["--demo"], env, width=80, height=24)
    tmux.wait_for(lambda s: "Restore it?" in s, "the question about the draft")
    tmux.keys("C-q")
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")
    assert "EXITED:0" in final and "Traceback" not in final, final
    assert drafts.load_draft("demo", ws.unit_name) == draft
