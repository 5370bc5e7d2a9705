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

The layout (lines, sections, entries) lives in `unit_syntax`, the ExecStart words and flag occurrences in
`exec_start`, the comparison of two units (`flag_changes`, `unified_diff`) in `unit_diff`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from specdec_tui.core.exec_start import (
    Command,
    ExecStart,
    Occurrence,
    delete_words,
    occurrence_value,
    occurrences,
    render_value,
    replace_span,
)
from specdec_tui.core.flag_table import canonical_name, takes_list
from specdec_tui.core.systemd_quote import quote_arg, split_prefixes, split_words
from specdec_tui.core.unit_errors import UnitEditError, UnitSyntaxError
from specdec_tui.core.unit_syntax import (
    CONTINUATION_TAIL,
    Entry,
    Section,
    Trivia,
    continues,
    is_comment,
    logical_value,
    parse_layout,
    render_layout,
    split_eol,
)

__all__ = ["UnitEditError", "UnitFile", "UnitSyntaxError"]  # the errors are what UnitFile's methods raise


class UnitFile:
    """A parsed unit. `str(unit)` and `unit.text` give back the exact input until an edit is made."""

    def __init__(self, preamble: tuple[Trivia, ...], sections: tuple[Section, ...]) -> None:
        self.preamble = preamble
        self.sections = sections

    # ---------------------------------------------------------------- parsing and rendering
    @classmethod
    def parse(cls, text: str) -> UnitFile:
        """Reads unit text; raises UnitSyntaxError (with its line number) on lines systemd would reject."""
        preamble, sections = parse_layout(text)
        return cls(preamble, sections)

    @property
    def text(self) -> str:
        return render_layout(self.preamble, self.sections)

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
    def _command(self) -> Command:
        found: tuple[int, int, Entry] | None = None
        commands: list[Entry] = []
        for si, s in enumerate(self.sections):
            if s.name != "Service":
                continue
            for ii, item in enumerate(s.items):
                if isinstance(item, Entry) and item.key == "ExecStart":
                    found = (si, ii, item) if item.value else None  # an empty ExecStart= resets the list
                    commands = [*commands, item] if item.value else []
        if found is None:
            raise UnitSyntaxError("the unit has no ExecStart= line in its [Service] section")
        kind = self.get("Service", "Type") or "simple"
        if len(commands) > 1 and kind != "oneshot":
            raise UnitSyntaxError(
                f"ExecStart= is set {len(commands)} times (lines {', '.join(str(e.first_line) for e in commands)}) "
                f"in a Type={kind} service: systemd refuses to start it (only Type=oneshot may have several); "
                "keep one", commands[1].first_line)
        si, ii, entry = found
        logical, where = logical_value(entry.lines)
        try:
            words = split_words(logical)
        except UnitSyntaxError as err:
            line, col = where[(err.column or 1) - 1]
            raise UnitSyntaxError(f"ExecStart= has an {err.message[:1].lower()}{err.message[1:]}",
                                  entry.first_line + line, col + 1) from None
        return Command(entry, si, ii, words, where)

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
        for occ in occurrences(command.words):
            result[occ.written_name] = occurrence_value(command.words, occ)
        return result

    def get_flag(self, name: str) -> str | None:
        """The flag's value; None for a switch or an absent flag (tell them apart with has_flag)."""
        command = self._command()
        occ = self._find(command, name)
        return None if occ is None else occurrence_value(command.words, occ)

    def has_flag(self, name: str) -> bool:
        return self._find(self._command(), name) is not None

    def _find(self, command: Command, name: str) -> Occurrence | None:
        """The flag's last occurrence (the one argparse keeps), by canonical name."""
        hits = self._find_all(command, name)
        return hits[-1] if hits else None

    def _find_all(self, command: Command, name: str) -> list[Occurrence]:
        wanted = canonical_name(name)
        return [o for o in occurrences(command.words) if canonical_name(o.written_name) == wanted]

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
            lines[line] = replace_span(lines[line], start, end, new_word)
            return self._with_entry(command, lines)
        if value is None:
            return self._with_entry(command, delete_words(command, list(occ.values)))
        rendered = render_value(value, multi=len(occ.values) > 1 or _is_list_flag(name))
        if occ.form == "bool":
            line, _, end = command.span(words[occ.flag])
            lines[line] = replace_span(lines[line], end, end, " " + rendered)
            return self._with_entry(command, lines)
        line, start, _ = command.span(words[occ.values[0]])
        elsewhere = [k for k in occ.values if command.span(words[k])[0] != line]
        if elsewhere:  # values spread over several lines: drop the far ones, then edit the first line
            return self._with_entry(command, delete_words(command, elsewhere)).set_flag(name, value)
        end = command.span(words[occ.values[-1]])[2]
        lines[line] = replace_span(lines[line], start, end, rendered)
        return self._with_entry(command, lines)

    def remove_flag(self, name: str) -> UnitFile:
        """Removes every occurrence of the flag (and its values); a line left with no words goes entirely."""
        command = self._command()
        hits = self._find_all(command, _bare(name))
        if not hits:
            return self
        doomed = [k for occ in hits for k in (occ.flag, *occ.values)]
        return self._with_entry(command, delete_words(command, doomed))

    def set_flags(self, mapping: Mapping[str, str | None], unset: Iterable[str] = ()) -> UnitFile:
        """Applies several set_flag calls, then remove_flag for each name in `unset`."""
        unit = self
        for name, value in mapping.items():
            unit = unit.set_flag(name, value)
        for name in unset:
            unit = unit.remove_flag(name)
        return unit

    def _append_flag(self, command: Command, name: str, value: str | None) -> UnitFile:
        addition = f"--{name}" + ("" if value is None else " " + render_value(value, multi=_is_list_flag(name)))
        lines = list(command.entry.lines)
        value_lines = [i for i, line in enumerate(lines) if i == 0 or not is_comment(split_eol(line)[0])]
        last = value_lines[-1]
        content, eol = split_eol(lines[last])
        if continues(content):  # file ended inside a continuation: finish the open line
            lines[last] = content + addition + eol
            return self._with_entry(command, lines)
        if len(value_lines) == 1:
            lines[last] = content.rstrip(" \t") + " " + addition + content[len(content.rstrip(" \t")):] + eol
            return self._with_entry(command, lines)
        previous_content, previous_eol = split_eol(lines[value_lines[-2]])
        tail = CONTINUATION_TAIL.search(previous_content)
        gap = tail.group(1) if tail else " "
        indent = content[: len(content) - len(content.lstrip(" \t"))]
        lines[last] = content.rstrip(" \t") + gap + "\\" + (eol or previous_eol)
        lines.insert(last + 1, indent + addition + eol)
        return self._with_entry(command, lines)

    def _with_entry(self, command: Command, lines: list[str]) -> UnitFile:
        section = self.sections[command.section_index]
        items = list(section.items)
        items[command.item_index] = Entry(command.entry.key, tuple(lines), command.entry.first_line, "")
        sections = list(self.sections)
        sections[command.section_index] = Section(section.name, section.header, section.first_line, tuple(items))
        return UnitFile.parse(UnitFile(self.preamble, tuple(sections)).text)


def _bare(name: str) -> str:
    return name[2:] if name.startswith("--") else name


def _is_list_flag(name: str) -> bool:
    return takes_list(name)
