"""A message that quotes what the user typed or pasted, with each overlong word cut in the middle: a pasted
screenful of digits quoted whole in a refusal hid the form it refused (the buttons went out of sight) and the
words saying what to write."""

from __future__ import annotations

import re

WORD_LIMIT = 60  # characters of one word (a run without spaces) a message shows
_LONG_WORD = re.compile(rf"\S{{{WORD_LIMIT + 1},}}")


def clip_long_words(text: str, limit: int = WORD_LIMIT) -> str:
    """`text` with every word longer than `limit` cut to its start, "…" and its last 10 characters."""
    if len(text) <= limit:
        return text
    pattern = _LONG_WORD if limit == WORD_LIMIT else re.compile(rf"\S{{{limit + 1},}}")
    return pattern.sub(lambda m: m[0][:limit - 11] + "…" + m[0][-10:], text)


QUOTE_LIMIT = 80  # characters of a quoted paste a message shows, whatever its words


def clip_quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text` (a paste quoted in a refusal) cut to `limit` characters with "…": a 100 KB paste of many short words
    quoted whole filled the screen with its notification, each word being short enough for `clip_long_words`."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
