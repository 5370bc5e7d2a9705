"""core.paste_codes: the escape codes inside a bracketed paste go, whatever the reads' boundaries; nothing outside a
paste is touched (an escape key, an arrow key) nor held back."""

from __future__ import annotations

import pytest

from specdec_tui.core.paste_codes import PASTE_END, PASTE_START, PasteCodes

RED, RESET, LINK = "\x1b[1;31m", "\x1b[0m", "\x1b]8;;https://x.example\x07"


@pytest.mark.parametrize("pasted, text", [
    (f"{RED}4{RESET}", "4"),
    (f"--speculative-eagle-topk {RED}2{RESET}", "--speculative-eagle-topk 2"),
    (f"{LINK}qwen{LINK}", "qwen"),
    ("plain 1", "plain 1"),
])
def test_the_codes_inside_a_paste_go_in_any_cut_of_the_reads(pasted: str, text: str) -> None:
    data = f"\x1b[A{PASTE_START}{pasted}{PASTE_END}\x1b"  # an arrow key before, an escape key after
    for cut in range(len(data) + 1):
        clean = PasteCodes()
        assert clean(data[:cut]) + clean(data[cut:]) == f"\x1b[A{PASTE_START}{text}{PASTE_END}\x1b", cut


def test_nothing_outside_a_paste_is_held_back() -> None:
    clean = PasteCodes()
    assert clean("\x1b") == "\x1b" and clean("\x1b[") == "\x1b[" and clean("x") == "x"
