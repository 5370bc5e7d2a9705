"""Split and quote ExecStart= command lines the way systemd does (man systemd.service, "Command lines").

Why our own: shlex follows POSIX shell rules, systemd does not (C escapes such as \\x41 and \\s work inside
and outside quotes, `$VAR`/`%i` are expanded by systemd later, not by a shell). Words keep their source span so
the unit model can rewrite one argument and leave every other byte alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from specdec_tui.core.unit_errors import UnitSyntaxError

WHITESPACE = " \t\n\r"
# Executable prefixes, in any order before the program path: "-", "@", ":", and one of "+", "!", "!!".
PREFIX_CHARS = "-@:+!"

_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", '"': '"', "'": "'", "s": " ", ";": ";",
}
_QUOTE_BACK = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}
_HEX = "0123456789abcdefABCDEF"


@dataclass(frozen=True)
class Word:
    """One argument: its unquoted value and its [start, end) span in the source text."""

    value: str
    start: int
    end: int


def _unescape(text: str, i: int) -> tuple[str, int]:
    """Decodes the escape whose backslash is at text[i]; returns (decoded, index after it).

    Unknown escapes keep the backslash (systemd would reject some of them; keeping them loses nothing).
    """
    if i + 1 >= len(text):
        return "\\", i + 1
    c = text[i + 1]
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c], i + 2
    for lead, width in (("x", 2), ("u", 4), ("U", 8)):
        if c == lead:
            digits = text[i + 2 : i + 2 + width]
            if len(digits) == width and all(d in _HEX for d in digits):
                code = int(digits, 16)
                if 0 < code <= 0x10FFFF:
                    return chr(code), i + 2 + width
            return "\\" + c, i + 2
    if c in "0123":
        digits = text[i + 1 : i + 4]
        if len(digits) == 3 and all(d in "01234567" for d in digits) and int(digits, 8) > 0:
            return chr(int(digits, 8)), i + 4
    return "\\" + c, i + 2


def split_words(text: str) -> list[Word]:
    """Splits a command line into words, honouring "..." / '...' quotes and C escapes.

    Raises UnitSyntaxError (line 0, column = 1-based offset of the opening quote) for an unterminated quote.
    """
    words: list[Word] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in WHITESPACE:
            i += 1
        if i >= n:
            return words
        start, out, quote, quote_at = i, [], "", 0
        while i < n:
            c = text[i]
            if quote:
                if c == quote:
                    quote = ""
                    i += 1
                elif c == "\\":
                    piece, i = _unescape(text, i)
                    out.append(piece)
                else:
                    out.append(c)
                    i += 1
            elif c in WHITESPACE:
                break
            elif c in "\"'":
                quote, quote_at = c, i
                i += 1
            elif c == "\\":
                piece, i = _unescape(text, i)
                out.append(piece)
            else:
                out.append(c)
                i += 1
        if quote:
            kind = "double" if quote == '"' else "single"
            raise UnitSyntaxError(f"unterminated {kind} quote in the command line", 0, quote_at + 1)
        words.append(Word("".join(out), start, i))


def split_prefixes(first: str) -> tuple[str, str]:
    """Separates systemd's executable prefixes ("-", "@", ":", "+", "!", "!!") from the program path."""
    k = 0
    while k < len(first) and first[k] in PREFIX_CHARS:
        k += 1
    return first[:k], first[k:]


def split_command(text: str) -> tuple[str, list[str]]:
    """Returns (prefixes, argv) for an ExecStart= value. Raises UnitSyntaxError on unterminated quotes."""
    words = split_words(text)
    if not words:
        return "", []
    prefixes, program = split_prefixes(words[0].value)
    return prefixes, [program] + [w.value for w in words[1:]]


def _needs_quotes(arg: str) -> bool:
    if not arg:
        return True
    return any(c in WHITESPACE or c in "\"'\\" or not c.isprintable() for c in arg)


def quote_arg(arg: str) -> str:
    """Quotes one argument minimally: as-is when safe, else in double quotes with C escapes."""
    if arg == ";":  # a lone ";" separates commands; systemd reads "\\;" as the literal
        return "\\;"
    if not _needs_quotes(arg):
        return arg
    out = []
    for c in arg:
        if c in _QUOTE_BACK:
            out.append(_QUOTE_BACK[c])
        elif not c.isprintable() and c != " ":
            code = ord(c)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def join_args(args: list[str]) -> str:
    """Joins arguments into one command line that split_words reads back as the same list."""
    return " ".join(quote_arg(a) for a in args)
