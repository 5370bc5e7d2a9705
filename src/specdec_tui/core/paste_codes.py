"""A bracketed paste without the terminal codes it carries, before the terminal parser reads it.

Why (issue 35, newcomer pass): text copied with its colours (from `less -R`, a coloured log, tmux's copy with
escapes) is pasted with its escape codes between the paste's brackets. Textual's parser ends the paste's text at
the first code and sends the rest as typed keys, which reach the field *before* the paste itself: a pasted
`--speculative-eagle-topk 2` in red became `^[31m2^[0m--speculative-eagle-topk ` — reordered, codes and all.
The codes are a copy's decoration, never part of a value: inside a paste they are removed
(`terminal_codes.strip_escapes`), everything outside a paste goes through untouched and undelayed.
"""

from __future__ import annotations

from specdec_tui.core.terminal_codes import strip_escapes

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


class PasteCodes:
    """One input stream's filter (it keeps whether a paste is open across reads, and a code cut by a read)."""

    def __init__(self) -> None:
        self.in_paste = False
        self._held = ""  # inside a paste: the end of a read that may be the start of a code or of PASTE_END
        self._start_seen = ""  # outside: the end of a read that PASTE_START may go on from (passed on, not held)

    def __call__(self, data: str) -> str:
        data, self._held = self._held + data, ""
        out: list[str] = []
        at = 0
        rest = PASTE_START[len(self._start_seen):]
        if self._start_seen and data.startswith(rest):  # a paste's start cut by the read before
            out.append(rest)
            at, self.in_paste = len(rest), True
        self._start_seen = ""
        while at < len(data):
            if not self.in_paste:
                start = data.find(PASTE_START, at)
                if start < 0:
                    out.append(data[at:])
                    self._start_seen = next((data[-n:] for n in range(len(PASTE_START) - 1, 0, -1)
                                             if len(data) - at >= n and PASTE_START.startswith(data[-n:])), "")
                    break
                out.append(data[at:start + len(PASTE_START)])
                at, self.in_paste = start + len(PASTE_START), True
                continue
            end = data.find(PASTE_END, at)
            if end < 0:
                text = data[at:]
                cut = text.rfind("\x1b")
                if cut >= 0 and len(text) - cut < 32:  # a code (or the paste's end) that the next read completes
                    text, self._held = text[:cut], text[cut:]
                out.append(strip_escapes(text))
                break
            out.append(strip_escapes(data[at:end]) + PASTE_END)
            at, self.in_paste = end + len(PASTE_END), False
        return "".join(out)
