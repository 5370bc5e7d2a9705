"""Issue 35, points 2 and 3, on the real `specdec-tui --demo` under tmux: a value field cleared and left (Tab or
escape) removes its flag (the diff shows it, p pushes without it); a paste into a value field is its value only
when it is a value, or `--flag value` of that field's own flag; anything else is refused in words."""

from __future__ import annotations

import pytest

from specdec_tui.core import paths
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.test_tui_tmux_typing import field_value, type_keys
from tests.tmux_session import Tmux, panel_env, program

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(240)]


def start_demo(tmux: Tmux) -> str:
    """The demo panel on its Config form; the demo unit's path."""
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    env = panel_env()
    tmux.start(program() + ["--demo"], env)
    tmux.wait_for(lambda s: field_value(s, "speculative-num-steps") == "1" and "Push" in s, "the Config form")
    return str(ws.root / "units" / ws.unit_name)


def paste(tmux: Tmux, text: str) -> None:
    """A terminal paste (bracketed, as Textual asks for); `--` so tmux takes a text starting with "--" as text."""
    tmux.run("set-buffer", "-b", "specdec-test", "--", text)
    tmux.run("paste-buffer", "-p", "-d", "-b", "specdec-test", "-t", "t")


def unit_flags(path: str) -> dict[str, str | None]:
    with open(path, encoding="utf-8") as f:
        return UnitFile.parse(f.read()).flags()


def test_a_value_field_cleared_and_left_by_tab_or_escape_removes_its_flag_and_p_pushes_without_it(tmux: Tmux) -> None:
    unit = start_demo(tmux)
    assert "speculative-num-draft-tokens" in unit_flags(unit) and "mem-fraction-static" in unit_flags(unit)
    type_keys(tmux, "Tab", "Tab", "Tab")  # algorithm → steps → top-k → draft tokens
    type_keys(tmux, "End", "BSpace", "Tab")  # cleared, left by Tab
    type_keys(tmux, "Tab", "End", "BSpace", "BSpace", "BSpace", "BSpace", "Escape")  # mem fraction cleared, left by escape
    tmux.wait_for(lambda s: field_value(s, "speculative-num-draft-tokens") == "(default)"
                  and field_value(s, "mem-fraction-static") == "(default)"
                  and "-    --speculative-num-draft-tokens 2 \\" in s and "-    --mem-fraction-static 0.85 \\" in s
                  and "p Push" in s,  # the field is left: the footer offers the panel's keys again, not the field's
                  "both fields (default), both flags removed in the diff, and the field left")
    tmux.keys("p")
    tmux.wait_for(lambda s: "Pushed" in s or "pushed trial" in s, "the push", timeout_s=120)
    flags = unit_flags(unit)
    assert "speculative-num-draft-tokens" not in flags and "mem-fraction-static" not in flags, flags


def test_a_paste_into_a_value_field_is_its_value_or_refused_in_words(tmux: Tmux) -> None:
    start_demo(tmux)
    type_keys(tmux, "Tab", "Tab")  # algorithm → steps → top-k
    type_keys(tmux, "End", "BSpace")
    paste(tmux, " --speculative-eagle-topk 4")  # the field's own flag with a value: the value
    tmux.wait_for(lambda s: field_value(s, "speculative-eagle-topk") == "4" and "+    --speculative-eagle-topk 4 \\" in s,
                  "top-k 4 in the field and in the diff")
    paste(tmux, "--speculative-num-steps 3")  # another flag: refused, nothing written
    tmux.wait_for(lambda s: "Paste refused" in s and "It sets" in s, "the refusal of another flag")
    paste(tmux, "4 8")  # several words: refused
    screen = tmux.wait_for(lambda s: "Several words" in s, "the refusal of several words")
    assert field_value(screen, "speculative-eagle-topk") == "4" and field_value(screen, "speculative-num-steps") == "1"
    assert "--speculative-eagle-topk \"" not in screen and "+    --speculative-eagle-topk 4 \\" in screen


def test_a_coloured_paste_lands_as_its_text_in_order(tmux: Tmux) -> None:
    """Newcomer pass (issue 35): text copied with its colours is pasted with its escape codes; Textual's parser cut
    the paste at the first code and typed the rest in *before* the paste, so the field read the value reordered,
    codes and all. The codes are dropped inside a paste (core.paste_codes); the value lands as it reads."""
    start_demo(tmux)
    type_keys(tmux, "Tab", "Tab")  # algorithm → steps → top-k
    type_keys(tmux, "End", "BSpace")
    paste(tmux, "--speculative-eagle-topk \x1b[1;31m4\x1b[0m")  # the flag plain, the value in bold red
    tmux.wait_for(lambda s: field_value(s, "speculative-eagle-topk") == "4" and "+    --speculative-eagle-topk 4 \\" in s,
                  "top-k 4 in the field and in the diff")
    type_keys(tmux, "End", "BSpace")
    paste(tmux, "\x1b[32m1\x1b[0m\x1b[32m6\x1b[0m")  # one word, each digit coloured: typed in as 16
    screen = tmux.wait_for(lambda s: field_value(s, "speculative-eagle-topk") == "16", "16 in the field")
    assert "^[" not in screen and "[0m" not in screen, screen
