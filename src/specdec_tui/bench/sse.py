"""Server-sent events split on raw bytes, with a fast path for the `data: {...}\\n\\n` events SGLang sends.

Bytes are split before any decoding so the reader stamps arrival time first and does the least work
per chunk. Only what the benchmark needs from the SSE spec: `data:` lines (joined with newlines),
`event:` names, comments ignored, CRLF tolerated.
"""

from __future__ import annotations

SseEvent = tuple[bytes | None, bytes]  # (event name or None, data)


class SseSplitter:
    """Feed raw byte chunks; get complete events back. Keeps the incomplete tail between feeds."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = b""

    def blocks(self, raw: bytes) -> list[bytes]:
        """Complete raw event blocks (no parsing): the benchmark's hot loop handles the common
        single `data: ` line itself and hands anything else to `parse_block`."""
        buf = self._buf + raw if self._buf else raw
        held = b""
        if b"\r" in buf:
            buf, held = without_cr(buf)
        blocks = buf.split(b"\n\n")
        self._buf = blocks.pop() + held
        return blocks

    def feed(self, raw: bytes) -> list[SseEvent]:
        out: list[SseEvent] = []
        for block in self.blocks(raw):
            if block.startswith(b"data: ") and b"\n" not in block:
                out.append((None, block[6:]))
            elif block:
                ev = parse_block(block)
                if ev is not None:
                    out.append(ev)
        return out

    @property
    def pending(self) -> bytes:
        """Bytes received after the last complete event (an unterminated event at stream end)."""
        return self._buf


def without_cr(buf: bytes) -> tuple[bytes, bytes]:
    """CRLF and lone CR turned into LF; a trailing CR is held back (maybe the first half of a CRLF cut by the read:
    decided with the next bytes). Returns (text, held)."""
    held = b""
    if buf.endswith(b"\r"):
        buf, held = buf[:-1], b"\r"
    return buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n"), held


def parse_block(block: bytes) -> SseEvent | None:
    """One event block of several lines; None when it holds no data and no event name."""
    name: bytes | None = None
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if not line or line.startswith(b":"):
            continue
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            name = value.strip()
    if name is None and not data:
        return None
    return name, b"\n".join(data)
