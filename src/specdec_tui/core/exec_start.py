"""The words of a unit's ExecStart= and the `--flag [value...]` occurrences among them.

`ExecStart` is the parsed command (systemd prefixes, argv, the python module it runs). `Command` keeps the
words with a map from logical offsets back to (physical line, column), so `delete_words` and the edits
in `unit.UnitFile` rewrite only the bytes of the words they touch. `Command.span` raises UnitEditError
for a quoted argument that spans a line continuation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from specdec_tui.core.flag_table import spec_for
from specdec_tui.core.systemd_quote import Word, quote_arg
from specdec_tui.core.unit_errors import UnitEditError
from specdec_tui.core.unit_syntax import CONTINUATION_TAIL, Entry, is_comment, split_eol


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
class Occurrence:
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
class Command:
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


ENV_WORD = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")  # what systemd expands later


def value_words(name: str) -> int | None:
    """How many words after `--name` argparse takes as its value: 0 for a switch, 1 for a one-value flag,
    None for a list (nargs="+") or a flag the table does not know."""
    spec = spec_for(name)
    if spec is None or spec.type == "int_list":
        return None
    return 0 if spec.is_switch else 1


def _takes(word: str, taken: int, limit: int | None) -> bool:
    """Whether the next word is still the flag's value. An environment expansion ($EXTRA_ARGS, ${OPTS}) is the
    value only of a one-value flag that has none yet (`--model-path $MODEL`), as argparse would take it; after a
    value, a switch or a list it is words of their own (more flags, often), which an edit of the flag keeps.
    Other words up to the next flag stay the flag's, so a stray word (`--tp 2 3`, `--enable-metrics 1`) is
    seen and refused by the checks, as SGLang would refuse it."""
    if is_flag(word):
        return False
    if ENV_WORD.fullmatch(word):
        return limit == 1 and taken == 0
    return True


def occurrences(words: list[Word]) -> list[Occurrence]:
    """Each `--flag [value...]` with the words that are its value (`_takes`)."""
    result: list[Occurrence] = []
    k = 1
    while k < len(words):
        value = words[k].value
        if not is_flag(value):
            k += 1
            continue
        if "=" in value:
            written, inline = value[2:].split("=", 1)
            result.append(Occurrence(written, k, (), inline))
            k += 1
            continue
        j = k + 1
        limit = value_words(value[2:])
        while j < len(words) and _takes(words[j].value, j - k - 1, limit):
            j += 1
        result.append(Occurrence(value[2:], k, tuple(range(k + 1, j)), None))
        k = j
    return result


def is_flag(word: str) -> bool:
    return word.startswith("--") and len(word) > 2


def occurrence_value(words: list[Word], occ: Occurrence) -> str | None:
    if occ.inline_value is not None:
        return occ.inline_value
    if not occ.values:
        return None
    return " ".join(words[k].value for k in occ.values)


def render_value(value: str, *, multi: bool) -> str:
    if multi and value.split():
        return " ".join(quote_arg(part) for part in value.split())
    return quote_arg(value)


def replace_span(line: str, start: int, end: int, new: str) -> str:
    return line[:start] + new + line[end:]


def delete_words(command: Command, indices: list[int]) -> list[str]:
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
        content, eol = split_eol(lines[line])
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
    value_lines = [i for i, line in enumerate(lines) if i == 0 or not is_comment(split_eol(line)[0])]
    survivors = [i for i in value_lines if i not in dropped]
    if value_lines[-1] in dropped:  # the old last line goes: the new last one must stop continuing
        new_last = survivors[-1]
        content, _ = split_eol(lines[new_last])
        _, last_eol = split_eol(lines[value_lines[-1]])
        lines[new_last] = CONTINUATION_TAIL.sub("", content) + last_eol
    return [line for i, line in enumerate(lines) if i not in set(dropped)]
