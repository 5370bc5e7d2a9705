"""Escape and the key typed right after it, read together, are the two keys the operator typed.

A terminal sends Escape as the byte that also starts every escape sequence, and Alt+key as Escape followed by the
key. Textual's input parser takes Escape followed by another key within ESCDELAY (100 ms), or in one terminal read,
as that second key with Alt — and tmux, by default, joins Escape and a key typed within its `escape-time` (500 ms)
into one such read itself. So under tmux, Escape to leave a field and then `2` for the Journal tab, typed at an
ordinary pace, typed "™" into the field (Textual reads Escape+2 as macOS's Option+2); Escape then `o` typed an
"o" into the field instead of opening the sessions. The panel binds no Alt key, so a key Textual read with Escape
before it is given back as Escape, then the key — unless the current screen binds that Alt key (a remapped
`[ui.keymap]`). What cannot be told apart from a key of its own is left as Textual reads it (README, Keys):
Escape then b or f (Textual's ctrl+left, ctrl+right), Tab (shift+tab), Backspace (ctrl+w), Enter or a punctuation
key (the key alone). A ™ or another of those characters typed on its own is taken the same way: no SGLang flag
takes one."""

from __future__ import annotations

from collections.abc import Callable

from textual import events

# What Textual's parser makes of Escape followed by a digit, - or = (macOS's Option+key characters): the key meant.
OPTION_CHARACTERS = {"¡": "1", "™": "2", "£": "3", "¢": "4", "∞": "5", "§": "6", "¶": "7", "•": "8", "ª": "9",
                     "º": "0", "–": "-", "≠": "="}
DIGIT_OR_SIGN_KEYS = {"-": "minus", "=": "equals_sign"}


def escape_then_key(event: events.Key, bound: Callable[[str], bool]) -> tuple[events.Key, events.Key] | None:
    """(Escape, the key) when `event` is how Textual reads Escape typed just before a key, else None; `bound(key)`
    says whether the screen binds a key now (an Alt key bound there stays an Alt key)."""
    character = event.character
    if character is None or len(character) != 1:
        return None
    if event.key.startswith("alt+") and character.isprintable() and not character.isspace():
        typed = character
    elif character in OPTION_CHARACTERS:
        typed = OPTION_CHARACTERS[character]
    else:
        return None
    if bound(event.key):
        return None
    return events.Key("escape", "\x1b"), events.Key(DIGIT_OR_SIGN_KEYS.get(typed, typed), typed)
