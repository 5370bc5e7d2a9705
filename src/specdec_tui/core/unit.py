"""A systemd unit file that round-trips byte for byte and edits one SGLang flag at a time.

Why line-preserving: the unit on the server is hand-written (comments, `\\`-continued ExecStart, CRLF,
odd spacing). A trial must change only the flag it is about, so the diff the user approves shows exactly
that line. The file is kept as sections -> entries -> raw physical lines; an edit rewrites only the
physical lines of the words it touches, then the text is parsed again.

Errors: `UnitFile.parse` raises UnitSyntaxError (with the 1-based line) for a malformed section header,
a key line without "=", or an assignment before the first section. `exec_start`, `flags`, `get_flag`,
`has_flag`, `set_flag`, `remove_flag` and `set_flags` raise UnitSyntaxError when the unit has no
ExecStart= in [Service] or its command line has an unterminated quote; the edit methods raise
UnitEditError for a quoted argument that spans a line continuation.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from specdec_tui.core.systemd_quote import Word, quote_arg, split_prefixes, split_words
from specdec_tui.core.unit_errors import UnitEditError, UnitSyntaxError

__all__ = [
    "Entry",
    "ExecStart",
    "FlagChange",
    "Section",
    "Trivia",
    "UnitEditError",
    "UnitFile",
    "UnitSyntaxError",
    "flag_changes",
    "unified_diff",
]

COMMENT_CHARS = "#;"
_PHYSICAL_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_CONTINUATION_TAIL = re.compile(r"([ \t]*)\\\Z")


def _physical_lines(text: str) -> list[str]:
    return _PHYSICAL_LINE.findall(text)


def _split_eol(line: str) -> tuple[str, str]:
    """Splits a physical line into (content, line ending); CRLF stays CRLF, a missing final newline stays missing."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    if line.endswith("\r"):
        return line[:-1], "\r"
    return line, ""


def _continues(content: str) -> bool:
    return content.endswith("\\")


def _is_comment(content: str) -> bool:
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


@dataclass(frozen=True)
class ExecStart:
    """The parsed command of the service: systemd prefixes, argv after unquoting, and what it runs."""

    prefixes: str
    argv: list[str]

    @property
    def program(self) -> str:
        return self.argv[0] if self.argv else ""

    @property
    def python_module(self) -> str | None:
        """The module after `-m` (e.g. "sglang.launch_server"), looked for before the first `--flag`."""
        for i, arg in enumerate(self.argv[1:], start=1):
            if arg.startswith("--"):
                return None
            if arg == "-m" and i + 1 < len(self.argv):
                return self.argv[i + 1]
        return None


@dataclass(frozen=True)
class _Occurrence:
    """Where one `--flag [value...]` sits among the ExecStart words."""

    written_name: str  # as written, without "--"
    flag: int  # index of the flag word
    values: tuple[int, ...]  # indices of separate value words
    inline_value: str | None  # the value of a `--flag=value` word

    @property
    def form(self) -> str:
        if self.inline_value is not None:
            return "equals"
        return "space" if self.values else "bool"


@dataclass
class _Command:
    """ExecStart words with a map from logical offsets back to (physical line index, column)."""

    entry: Entry
    section_index: int
    item_index: int
    words: list[Word]
    where: list[tuple[int, int]] = field(repr=False)

    def position(self, offset: int) -> tuple[int, int]:
        return self.where[offset]

    def span(self, word: Word) -> tuple[int, int, int]:
        """(line index, start column, end column) of a word; refuses words split by a continuation."""
        line, start = self.where[word.start]
        end_line, last = self.where[word.end - 1]
        if end_line != line:
            raise UnitEditError(
                f"the argument {word.value!r} is quoted across a line continuation; edit that line by hand"
            )
        return line, start, last + 1


@dataclass(frozen=True)
class FlagChange:
    """One flag that differs between two units; None on a side means absent there ("" marks a switch)."""

    name: str
    old: str | None
    new: str | None


class UnitFile:
    """A parsed unit. `str(unit)` and `unit.text` give back the exact input until an edit is made."""

    def __init__(self, preamble: tuple[Trivia, ...], sections: tuple[Section, ...]) -> None:
        self.preamble = preamble
        self.sections = sections

    # ---------------------------------------------------------------- parsing and rendering
    @classmethod
    def parse(cls, text: str) -> UnitFile:
        """Reads unit text; raises UnitSyntaxError (with its line number) on lines systemd would reject."""
        lines = _physical_lines(text)
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
            content, _ = _split_eol(lines[i])
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
                previous = _split_eol(lines[j - 1])[0]
                if not (_continues(previous) or (j - 1 > i and _is_comment(previous))):
                    break
                j += 1
            entry_lines = tuple(lines[i:j])
            items.append(Entry(key, entry_lines, number, _logical_value(entry_lines)[0].strip(" \t\r\n")))
            i = j
        if current:
            flush_trivia()
            sections.append(Section(current[0], current[1], current[2], tuple(items)))
        else:
            flush_trivia()
        return cls(tuple(preamble), tuple(sections))

    @property
    def text(self) -> str:
        parts: list[str] = [line for t in self.preamble for line in t.lines]
        for section in self.sections:
            parts.append(section.header)
            for item in section.items:
                parts.extend(item.lines)
        return "".join(parts)

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnitFile) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"UnitFile({[s.name for s in self.sections]!r}, {len(self.text)} chars)"

    # ---------------------------------------------------------------- plain keys
    def entries(self, section: str, key: str) -> list[Entry]:
        """All assignments of `key` in every [section] block of that name, in file order."""
        return [
            item
            for s in self.sections
            if s.name == section
            for item in s.items
            if isinstance(item, Entry) and item.key == key
        ]

    def get(self, section: str, key: str) -> str | None:
        """The last value of `key` in `section`, continuation-joined and stripped; None when absent."""
        found = self.entries(section, key)
        return found[-1].value if found else None

    def get_all(self, section: str, key: str) -> list[str]:
        """Every value of a repeatable key (Environment=, ExecStartPre=...), in order."""
        return [e.value for e in self.entries(section, key)]

    # ---------------------------------------------------------------- ExecStart
    def _command(self) -> _Command:
        found: tuple[int, int, Entry] | None = None
        for si, s in enumerate(self.sections):
            if s.name != "Service":
                continue
            for ii, item in enumerate(s.items):
                if isinstance(item, Entry) and item.key == "ExecStart":
                    found = (si, ii, item) if item.value else None  # an empty ExecStart= resets the list
        if found is None:
            raise UnitSyntaxError("the unit has no ExecStart= line in its [Service] section")
        si, ii, entry = found
        logical, where = _logical_value(entry.lines)
        try:
            words = split_words(logical)
        except UnitSyntaxError as err:
            line, col = where[(err.column or 1) - 1]
            raise UnitSyntaxError(f"ExecStart= has an {err.message[:1].lower()}{err.message[1:]}",
                                  entry.first_line + line, col + 1) from None
        return _Command(entry, si, ii, words, where)

    @property
    def exec_start(self) -> ExecStart:
        words = self._command().words
        if not words:
            return ExecStart("", [])
        prefixes, program = split_prefixes(words[0].value)
        return ExecStart(prefixes, [program] + [w.value for w in words[1:]])

    def flags(self) -> dict[str, str | None]:
        """ExecStart's `--flag value` / `--flag=value` pairs in order (names without "--"; switches -> None).

        A flag given twice keeps its first position and its last value (argparse keeps the last).
        Several value words (e.g. `--cuda-graph-bs 1 2 4`) are joined with single spaces.
        """
        command = self._command()
        result: dict[str, str | None] = {}
        for occ in _occurrences(command.words):
            result[occ.written_name] = _occurrence_value(command.words, occ)
        return result

    def get_flag(self, name: str) -> str | None:
        """The flag's value; None for a switch or an absent flag (tell them apart with has_flag)."""
        command = self._command()
        occ = self._find(command, name)
        return None if occ is None else _occurrence_value(command.words, occ)  # type: ignore[arg-type]

    def has_flag(self, name: str) -> bool:
        return self._find(self._command(), name) is not None

    def _find(self, command: _Command, name: str, *, every: bool = False) -> _Occurrence | list[_Occurrence] | None:
        wanted = _canonical(name)
        hits = [o for o in _occurrences(command.words) if _canonical(o.written_name) == wanted]
        if every:
            return hits
        return hits[-1] if hits else None

    # ---------------------------------------------------------------- edits (each returns a new UnitFile)
    def set_flag(self, name: str, value: str | None) -> UnitFile:
        """Sets `--name value` (value None: a bare switch) and returns the new unit.

        An existing flag (also when written as an alias, e.g. --tp for tp-size) is edited in place, keeping its
        `--x v` or `--x=v` form; several words are written when the flag already had several values. A new
        flag goes on its own continuation line after the last one, with the same indentation and ` \\`
        style; on a one-line ExecStart it is appended to that line.
        """
        name = _bare(name)
        command = self._command()
        occ = self._find(command, name)
        if occ is None:
            return self._append_flag(command, name, value)
        words = command.words
        lines = list(command.entry.lines)
        if occ.form == "equals":
            line, start, end = command.span(words[occ.flag])
            new_word = f"--{occ.written_name}" if value is None else f"--{occ.written_name}={quote_arg(value)}"
            lines[line] = _replace(lines[line], start, end, new_word)
            return self._with_entry(command, lines)
        if value is None:
            return self._with_entry(command, _delete_words(command, list(occ.values)))
        rendered = _render_value(value, multi=len(occ.values) > 1 or _is_list_flag(name))
        if occ.form == "bool":
            line, _, end = command.span(words[occ.flag])
            lines[line] = _replace(lines[line], end, end, " " + rendered)
            return self._with_entry(command, lines)
        line, start, _ = command.span(words[occ.values[0]])
        elsewhere = [k for k in occ.values if command.span(words[k])[0] != line]
        if elsewhere:  # values spread over several lines: drop the far ones, then edit the first line
            return self._with_entry(command, _delete_words(command, elsewhere)).set_flag(name, value)
        end = command.span(words[occ.values[-1]])[2]
        lines[line] = _replace(lines[line], start, end, rendered)
        return self._with_entry(command, lines)

    def remove_flag(self, name: str) -> UnitFile:
        """Removes every occurrence of the flag (and its values); a line left with no words goes entirely."""
        command = self._command()
        hits = self._find(command, _bare(name), every=True)
        assert isinstance(hits, list)
        if not hits:
            return self
        doomed = [k for occ in hits for k in (occ.flag, *occ.values)]
        return self._with_entry(command, _delete_words(command, doomed))

    def set_flags(self, mapping: Mapping[str, str | None], unset: Iterable[str] = ()) -> UnitFile:
        """Applies several set_flag calls, then remove_flag for each name in `unset`."""
        unit = self
        for name, value in mapping.items():
            unit = unit.set_flag(name, value)
        for name in unset:
            unit = unit.remove_flag(name)
        return unit

    def _append_flag(self, command: _Command, name: str, value: str | None) -> UnitFile:
        addition = f"--{name}" + ("" if value is None else " " + _render_value(value, multi=_is_list_flag(name)))
        lines = list(command.entry.lines)
        value_lines = [i for i, line in enumerate(lines) if i == 0 or not _is_comment(_split_eol(line)[0])]
        last = value_lines[-1]
        content, eol = _split_eol(lines[last])
        if _continues(content):  # file ended inside a continuation: finish the open line
            lines[last] = content + addition + eol
            return self._with_entry(command, lines)
        if len(value_lines) == 1:
            lines[last] = content.rstrip(" \t") + " " + addition + content[len(content.rstrip(" \t")):] + eol
            return self._with_entry(command, lines)
        previous_content, previous_eol = _split_eol(lines[value_lines[-2]])
        tail = _CONTINUATION_TAIL.search(previous_content)
        gap = tail.group(1) if tail else " "
        indent = re.match(r"[ \t]*", content).group(0)  # type: ignore[union-attr]
        lines[last] = content.rstrip(" \t") + gap + "\\" + (eol or previous_eol)
        lines.insert(last + 1, indent + addition + eol)
        return self._with_entry(command, lines)

    def _with_entry(self, command: _Command, lines: list[str]) -> UnitFile:
        section = self.sections[command.section_index]
        items = list(section.items)
        items[command.item_index] = Entry(command.entry.key, tuple(lines), command.entry.first_line, "")
        sections = list(self.sections)
        sections[command.section_index] = Section(section.name, section.header, section.first_line, tuple(items))
        return UnitFile.parse(UnitFile(self.preamble, tuple(sections)).text)


# -------------------------------------------------------------------- helpers
def _logical_value(lines: tuple[str, ...] | list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Joins an entry's physical lines the way systemd does: the value after "=", each trailing backslash
    replaced by a space, comment lines inside the continuation skipped. Also returns, for each character,
    its (line index, column) so word spans map back to the file."""
    chars: list[str] = []
    where: list[tuple[int, int]] = []
    for index, line in enumerate(lines):
        content, _ = _split_eol(line)
        if index > 0 and _is_comment(content):
            continue
        start = content.index("=") + 1 if index == 0 else 0
        body_end = len(content) - 1 if _continues(content) else len(content)
        for col in range(start, body_end):
            chars.append(content[col])
            where.append((index, col))
        if _continues(content):
            chars.append(" ")
            where.append((index, body_end))
    where.append(where[-1] if where else (0, 0))  # sentinel for end offsets
    return "".join(chars), where


def _bare(name: str) -> str:
    return name[2:] if name.startswith("--") else name


def _canonical(name: str) -> str:
    from specdec_tui.core.flags import (
        canonical_name,  # late import: flags.apply_fix uses this module
    )

    return canonical_name(name)


def _is_list_flag(name: str) -> bool:
    from specdec_tui.core.flags import spec_for

    spec = spec_for(name)
    return spec is not None and spec.type == "int_list"


def _occurrences(words: list[Word]) -> list[_Occurrence]:
    result: list[_Occurrence] = []
    k = 1
    while k < len(words):
        value = words[k].value
        if not _is_flag(value):
            k += 1
            continue
        if "=" in value:
            written, inline = value[2:].split("=", 1)
            result.append(_Occurrence(written, k, (), inline))
            k += 1
            continue
        j = k + 1
        while j < len(words) and not _is_flag(words[j].value):
            j += 1
        result.append(_Occurrence(value[2:], k, tuple(range(k + 1, j)), None))
        k = j
    return result


def _is_flag(word: str) -> bool:
    return word.startswith("--") and len(word) > 2


def _occurrence_value(words: list[Word], occ: _Occurrence) -> str | None:
    if occ.inline_value is not None:
        return occ.inline_value
    if not occ.values:
        return None
    return " ".join(words[k].value for k in occ.values)


def _render_value(value: str, *, multi: bool) -> str:
    if multi and value.split():
        return " ".join(quote_arg(part) for part in value.split())
    return quote_arg(value)


def _replace(line: str, start: int, end: int, new: str) -> str:
    return line[:start] + new + line[end:]


def _delete_words(command: _Command, indices: list[int]) -> list[str]:
    """Removes the given words. A continuation line left without words is dropped whole; otherwise the
    words go with the blanks before them (or after them when they opened the line, keeping its indent)."""
    lines = list(command.entry.lines)
    by_line: dict[int, list[tuple[int, int]]] = {}
    for k in indices:
        line, start, end = command.span(command.words[k])
        by_line.setdefault(line, []).append((start, end))
    words_on_line: dict[int, int] = {}
    for word in command.words:
        words_on_line[command.position(word.start)[0]] = words_on_line.get(command.position(word.start)[0], 0) + 1
    dropped: list[int] = []
    for line, spans in by_line.items():
        if line > 0 and words_on_line.get(line, 0) == len(spans):
            dropped.append(line)
            continue
        content, eol = _split_eol(lines[line])
        for start, end in sorted(spans, reverse=True):
            before = content[:start]
            if before.rstrip(" \t") and not before.endswith("="):
                start = len(before.rstrip(" \t"))
            else:
                after = content[end:]
                gap = len(after) - len(after.lstrip(" \t"))
                if after[gap:] not in ("\\", ""):
                    end += gap
            content = content[:start] + content[end:]
        lines[line] = content + eol
    if not dropped:
        return lines
    value_lines = [i for i, line in enumerate(lines) if i == 0 or not _is_comment(_split_eol(line)[0])]
    survivors = [i for i in value_lines if i not in dropped]
    if value_lines[-1] in dropped:  # the old last line goes: the new last one must stop continuing
        new_last = survivors[-1]
        content, _ = _split_eol(lines[new_last])
        _, last_eol = _split_eol(lines[value_lines[-1]])
        lines[new_last] = _CONTINUATION_TAIL.sub("", content) + last_eol
    return [line for i, line in enumerate(lines) if i not in set(dropped)]


def flag_changes(old: UnitFile, new: UnitFile) -> list[FlagChange]:
    """Flags added, removed or changed from `old` to `new` (switches reported as ""), by canonical name."""
    def table(unit: UnitFile) -> dict[str, tuple[str, str]]:
        return {_canonical(k): (k, "" if v is None else v) for k, v in unit.flags().items()}

    before, after = table(old), table(new)
    changes = []
    for key in list(before) + [k for k in after if k not in before]:
        b, a = before.get(key), after.get(key)
        old_value = None if b is None else b[1]
        new_value = None if a is None else a[1]
        if old_value != new_value or (b is None) != (a is None):
            changes.append(FlagChange((a or b)[0], old_value, new_value))  # type: ignore[index]
    return changes


def unified_diff(old: str, new: str, old_name: str = "running", new_name: str = "edited") -> str:
    """A unified diff of two unit texts ("" when equal); marks a missing final newline like diff(1)."""
    out: list[str] = []
    for line in difflib.unified_diff(_physical_lines(old), _physical_lines(new), old_name, new_name):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
