"""A flag's value field in the Config form: keys act in the order typed, and a paste is a value only.

Its own module: the form (`flag_form`) lays out the rows; what a field does with the keys and pastes it gets is here.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from textual import events
from textual.widgets import Input

from specdec_tui.core.long_words import clip_quote
from specdec_tui.ui.textual_compat import KeysFirstInput, compact_input_classes, make_compact


@dataclass(frozen=True, slots=True)
class Pasted:
    """What a paste into a flag's value field is: `value` to put in the field, `insert` (a plain value typed in at
    the cursor, as any paste), or `refused` in words (nothing written)."""

    value: str | None = None
    insert: bool = False
    refused: str = ""


def pasted_value(flag: str, text: str) -> Pasted:
    """A value field takes a value (issue 35: ` --speculative-eagle-topk 1` pasted into top-k was written as the
    value `"--speculative-eagle-topk 1"`): one word is typed in; `--flag value` or `--flag=value` of the field's
    own flag (a line copied from a unit, its trailing `\\` too) is its value; anything else is refused."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[0].removesuffix("\\").strip() if lines else ""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    if len(lines) > 1:
        return Pasted(refused=f"Several lines: --{flag} takes one value. Nothing was written.")
    if not words:
        return Pasted()
    if not words[0].startswith("--"):
        if len(words) == 1:
            return Pasted(insert=True)
        return Pasted(refused=f"Several words ({clip_quote(line)}): --{flag} takes one value. Nothing was written.")
    name, eq, value = words[0][2:].partition("=")
    if name != flag:
        return Pasted(refused=f"It sets --{clip_quote(name)}: this field takes a value of --{flag}. Nothing was written.")
    rest = words[1:]
    if eq and not rest and value:
        return Pasted(value=value)
    if not eq and len(rest) == 1 and not rest[0].startswith("--"):
        return Pasted(value=rest[0])
    return Pasted(refused=f"Not one value ({clip_quote(line)}): --{flag} takes one. Nothing was written.")


class FlagInput(KeysFirstInput):
    """An Input whose own editing keys (BackSpace, End, ...) act in the order they were typed.

    Textual runs a widget's key bindings only once the key has bubbled up to the app, while
    characters are inserted at once; keys read together (fast typing, a busy frame) would have
    BackSpace act after the characters typed behind it. Here the field's own bindings run as the
    key arrives; other keys (Tab, app commands) go on as before.

    A paste is a value only (`pasted_value`): one word is typed in, the field's own `--flag value` puts the value
    in the field, anything else is refused in words."""

    def __init__(self, flag: str, *, value: str, placeholder: str, compact: bool, id: str) -> None:
        # with the classes Textual would add as it builds the field (each added one restyled it, before its mount)
        super().__init__(value=value, placeholder=placeholder, id=id,
                         classes=compact_input_classes(value) if compact else None)
        if compact:
            make_compact(self, Input.compact)
        self.flag = flag

    def on_paste(self, event: events.Paste) -> None:
        """Runs before Input's own paste handler (Textual calls a subclass's first); stopping the default skips it."""
        pasted = pasted_value(self.flag, event.text)
        if pasted.insert:
            return  # Input's own paste: typed in at the cursor
        event.stop()
        event.prevent_default()
        if pasted.refused:
            self.notify(pasted.refused, severity="warning", title="Paste refused")
        elif pasted.value is not None:
            self.value = pasted.value  # a Changed as any edit: the form applies it
            self.cursor_position = len(pasted.value)

    async def key_first(self, event: events.Key) -> bool:
        if not event.is_printable:
            for binding in self.own_bindings(event.key):
                if self.check_action(binding.action, ()) is False:
                    continue
                event.stop()
                event.prevent_default()
                self.restart_blink()
                await self.run_action(binding.action)
                return True
        return False
