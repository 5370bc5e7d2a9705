"""A service's log lines come with terminal escape codes (SGLang prints its deprecation warnings in bold yellow):
the words stay, the codes go, so a parser reads the words and the panel never sends the codes to the terminal."""

from __future__ import annotations

import pytest

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.terminal_codes import strip_escapes

# upstream: python/sglang/srt/server_args.py `print_deprecated_warning` (`\033[1;33m…\033[0m`)
DEPRECATED = ("[2026-10-02 17:39:00] \x1b[1;33m'--enable-old-cache' is deprecated and will be removed in a future "
              "release. Use '--cache-mode old' instead.\x1b[0m")


@pytest.mark.parametrize(("text", "words"), [
    (DEPRECATED, "[2026-10-02 17:39:00] '--enable-old-cache' is deprecated and will be removed in a future release. "
                 "Use '--cache-mode old' instead."),
    ("title \x1b]0;owned\x07 set", "title  set"),  # OSC ended by BEL
    ("a \x1b]8;;http://127.0.0.1/\x1b\\link\x1b]8;;\x1b\\ b", "a link b"),  # a hyperlink, OSC ended by ST
    ("clear \x1b[2J\x1b[H home \x1bc reset", "clear  home  reset"),
    ("charset \x1b(B ok", "charset  ok"),
    ("a lone escape at the end \x1b", "a lone escape at the end "),
    ("cursor \x1b[?25l hidden", "cursor  hidden"),
])
def test_escape_sequences_are_removed_and_the_words_kept(text: str, words: str) -> None:
    assert strip_escapes(text) == words


def test_text_without_escapes_is_returned_as_it_is() -> None:
    text = "[2026-10-02 17:39:00 TP0] Decode batch, #running-req: 1"
    assert strip_escapes(text) is text


def test_the_parser_reads_the_words_of_a_coloured_warning() -> None:
    assert parse_line(DEPRECATED).kind == "deprecation"
