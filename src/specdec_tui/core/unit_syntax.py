"""The layout of a systemd unit file, kept byte for byte: physical lines, [Section]s, `Key=value` entries
with their continuation lines, and the blank/comment trivia between them.

`parse_layout` reads text into that layout (raising UnitSyntaxError, with the 1-based line, for a malformed
section header, a key line without "=", or an assignment before the first section); `render_layout` gives
the exact text back. `logical_value` joins an entry's lines the way systemd does and maps each character
back to its (line, column), so edits can touch only the bytes they are about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from specdec_tui.core.unit_errors import UnitSyntaxError

COMMENT_CHARS = "#;"
LONG_LINE_MAX = 1 << 20  # systemd reads a unit line by line up to this many bytes: "Line too long", and no unit
PHYSICAL_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
CONTINUATION_TAIL = re.compile(r"([ \t]*)\\\Z")


def physical_lines(text: str) -> list[str]:
    return PHYSICAL_LINE.findall(text)


def split_eol(line: str) -> tuple[str, str]:
    """Splits a physical line into (content, line ending); CRLF stays CRLF, a missing final newline stays missing."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    if line.endswith("\r"):
        return line[:-1], "\r"
    return line, ""


def continues(content: str) -> bool:
    return content.endswith("\\")


def is_comment(content: str) -> bool:
    stripped = content.lstrip(" \t")
    return bool(stripped) and stripped[0] in COMMENT_CHARS


@dataclass(frozen=True)
class Trivia:
    """Blank lines and comments between entries, kept verbatim."""

    lines: tuple[str, ...]
    first_line: int


@dataclass(frozen=True)
class Entry:
    """One `Key=value` assignment with all its physical lines (continuations and interleaved comments)."""

    key: str
    lines: tuple[str, ...]
    first_line: int
    value: str


@dataclass(frozen=True)
class Section:
    name: str
    header: str
    first_line: int
    items: tuple[Entry | Trivia, ...]


def parse_layout(text: str) -> tuple[tuple[Trivia, ...], tuple[Section, ...]]:
    """Reads unit text into (preamble, sections); raises UnitSyntaxError on lines systemd would reject."""
    lines = physical_lines(text)
    preamble: list[Trivia] = []
    sections: list[Section] = []
    current: tuple[str, str, int] | None = None
    items: list[Entry | Trivia] = []
    trivia: list[str] = []
    trivia_start = 1

    def flush_trivia() -> None:
        nonlocal trivia
        if trivia:
            (items if current else preamble).append(Trivia(tuple(trivia), trivia_start))
            trivia = []

    i = 0
    while i < len(lines):
        number = i + 1
        content, _ = split_eol(lines[i])
        if len(content) > LONG_LINE_MAX // 4 and len(content.encode()) > LONG_LINE_MAX:  # bytes, as systemd counts
            raise UnitSyntaxError(f"the line is {len(content.encode()):,} bytes: systemd refuses a line over 1 MiB "
                                  "(\"Line too long\") and the unit does not load", number)
        if i == 0:  # systemd skips a UTF-8 byte order mark before the first line; the text keeps it
            content = content.removeprefix("\ufeff")
        stripped = content.strip(" \t\r")
        if not stripped or stripped[0] in COMMENT_CHARS:
            if not trivia:
                trivia_start = number
            trivia.append(lines[i])
            i += 1
            continue
        flush_trivia()
        if stripped.startswith("["):
            if not stripped.endswith("]") or len(stripped) < 3:
                raise UnitSyntaxError(f"section header {stripped!r} is not of the form [Name]", number)
            if current:
                sections.append(Section(current[0], current[1], current[2], tuple(items)))
            current, items = (stripped[1:-1], lines[i], number), []
            i += 1
            continue
        if "=" not in stripped:
            raise UnitSyntaxError(f"{stripped[:60]!r} is neither Key=value, a [Section] nor a comment", number)
        key = stripped.split("=", 1)[0].strip(" \t")
        if not key:
            raise UnitSyntaxError("an assignment has no key before '='", number)
        if current is None:
            raise UnitSyntaxError(f"{key}= comes before the first [Section] header", number)
        j = i + 1
        while j < len(lines):  # comment lines inside a continuation do not end it (systemd.syntax)
            previous = split_eol(lines[j - 1])[0]
            if not (continues(previous) or (j - 1 > i and is_comment(previous))):
                break
            j += 1
        entry_lines = tuple(lines[i:j])
        check_joined_length(key, entry_lines, number)
        items.append(Entry(key, entry_lines, number, logical_value(entry_lines)[0].strip(" \t\r\n")))
        i = j
    if current:
        flush_trivia()
        sections.append(Section(current[0], current[1], current[2], tuple(items)))
    else:
        flush_trivia()
    return tuple(preamble), tuple(sections)


def check_joined_length(key: str, lines: tuple[str, ...], first: int) -> None:
    """systemd joins an entry's continuation lines (comments inside left out, each backslash a space) into one
    buffer of at most LONG_LINE_MAX bytes: past it "Continuation line too long", and the unit does not load.
    Raises UnitSyntaxError at the line that crosses it, as systemd names it."""
    if len(lines) < 2 or sum(map(len, lines)) <= LONG_LINE_MAX // 4:
        return
    joined = 0
    for index, line in enumerate(lines):
        content = split_eol(line)[0]
        if index > 0 and is_comment(content):
            continue
        joined += len(content.encode())
        if joined > LONG_LINE_MAX:
            total = sum(len(split_eol(x)[0].encode()) for n, x in enumerate(lines)
                        if n == 0 or not is_comment(split_eol(x)[0]))
            raise UnitSyntaxError(
                f"{key}= at line {first} and its continuation lines join into {total:,} bytes: systemd "
                "refuses a joined line over 1 MiB (\"Continuation line too long\") and the unit does not load: "
                "shorten the value", first + index)


def render_layout(preamble: tuple[Trivia, ...], sections: tuple[Section, ...]) -> str:
    """The text of a layout: exactly the parsed bytes until an entry was replaced."""
    parts: list[str] = [line for t in preamble for line in t.lines]
    for section in sections:
        parts.append(section.header)
        for item in section.items:
            parts.extend(item.lines)
    return "".join(parts)


def logical_value(lines: tuple[str, ...] | list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Joins an entry's physical lines the way systemd does: the value after "=", each trailing backslash
    replaced by a space, comment lines inside the continuation skipped. Also returns, for each character,
    its (line index, column) so word spans map back to the file."""
    chars: list[str] = []
    where: list[tuple[int, int]] = []
    for index, line in enumerate(lines):
        content, _ = split_eol(line)
        if index > 0 and is_comment(content):
            continue
        start = content.index("=") + 1 if index == 0 else 0
        body_end = len(content) - 1 if continues(content) else len(content)
        for col in range(start, body_end):
            chars.append(content[col])
            where.append((index, col))
        if continues(content):
            chars.append(" ")
            where.append((index, body_end))
    where.append(where[-1] if where else (0, 0))  # sentinel for end offsets
    return "".join(chars), where
