"""Bytes that are not UTF-8 reaching the panel from the terminal (a paste from a Latin-1 file, a terminal set to
another encoding, line noise) ended it: Textual's input thread decodes strictly, and the UnicodeDecodeError
closed the panel with a traceback. They arrive as U+FFFD, a mark the user sees and can delete, and the panel
keeps running."""

from __future__ import annotations

import pytest

from tests.test_tui_tmux_clear_paste import start_demo
from tests.test_tui_tmux_typing import field_value, type_keys
from tests.tmux_session import Tmux

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(240)]


def test_bytes_that_are_not_utf8_do_not_end_the_panel(tmux: Tmux) -> None:
    start_demo(tmux)
    type_keys(tmux, "Tab", "Tab")  # algorithm → steps → top-k
    type_keys(tmux, "End", "BSpace")
    # 0xff 0xfe, then a cut two-byte sequence (0xc3 before "("): sent as typed bytes, not as a bracketed paste
    tmux.run("set-buffer", "-b", "specdec-bytes", "--", "\udcff\udcfe\udcc3(")
    tmux.run("paste-buffer", "-d", "-b", "specdec-bytes", "-t", "t")
    tmux.wait_for(lambda s: "\ufffd" in (field_value(s, "speculative-eagle-topk") or ""), "the marks in the field")
    type_keys(tmux, "C-u", "4")
    screen = tmux.wait_for(lambda s: field_value(s, "speculative-eagle-topk") == "4", "top-k 4 typed after them")
    assert "Traceback" not in screen and "UnicodeDecodeError" not in screen
