"""The start's `server_args=…` line: every resolved setting, so nothing SGLang resolved is guessed afterwards.

SGLang 0.5.23 logs a dict (`logger.info(f"server_args={_server_args_for_logging(server_args)}")`, the
`resolved_dict()` of its ServerArgs: `{'model_path': 'Qwen/…', 'speculative_num_draft_tokens': 4, …}`); older
releases logged the dataclass repr (`ServerArgs(model_path='…', …)`). Both are Python reprs. A value that is no
literal (an enum's `<X.Y: 'y'>`, a namedtuple) is kept as its text, so one odd value never loses the others.
upstream: python/sglang/srt/entrypoints/engine.py `_server_args_for_logging`, server_args.py `resolved_dict`.
"""

from __future__ import annotations

import ast
import re

from specdec_tui.core.sglang.fields import parse_value, take_fields
from specdec_tui.core.sglang.records import ArgValue, LineBase, LogRecord, ServerArgsRecord, Value

__all__ = ["ArgValue", "parse_server_args", "read_args"]

MAX_LINE = 400_000  # a resolved dict is a few KB; past this the text is not a server_args line worth a parse
_OPEN = "([{<"
_CLOSE = ")]}>"

_TYPED = {
    "speculative_algorithm": ("speculative_algorithm", str),
    "speculative_num_steps": ("speculative_num_steps", int),
    "speculative_num_draft_tokens": ("speculative_num_draft_tokens", int),
    "max_running_requests": ("max_running_requests", int),
    "mem_fraction_static": ("mem_fraction_static", float),
}


def _top_level_split(text: str, sep: str) -> list[str]:
    """Splits on `sep` outside quotes and brackets (a repr's strings may hold commas, colons and brackets)."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    i = 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _literal(text: str) -> ArgValue:
    """A value's repr as a Python literal; its text when it is none (an enum, an object)."""
    text = text.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, (int, float, bool, str, list, dict, tuple)) or value is None else text


def _pairs(inner: str, sep: str) -> dict[str, ArgValue]:
    """`'a': 1, 'b': 'x'` (sep `:`) or `a=1, b='x'` (sep `=`) → {a: 1, b: 'x'}, value by value."""
    args: dict[str, ArgValue] = {}
    for item in _top_level_split(inner, ","):
        key_text, found, value_text = item.partition(sep)
        if not found:
            continue
        key = key_text.strip().strip("'\"")
        if key.isidentifier():
            args[key] = _literal(value_text)
    return args


# The typed settings found by name wherever they sit, so a truncated or garbled line still gives them.
_TYPED_VALUE = re.compile(
    r"[(,{] ?'?(?P<name>" + "|".join(_TYPED) + r")'?(?:=|: )(?P<value>'[^']*'|None|[\d.]+)"
)


def read_args(text: str) -> dict[str, ArgValue] | None:
    """The settings in `{…}` (0.5.23) or `ServerArgs(…)` (older); None when the text is neither.
    A line cut short (or ending in a full stop) still gives the settings before the cut."""
    text = text.strip().removesuffix(".")
    if len(text) > MAX_LINE:
        return None
    if text.startswith("{"):
        whole = _literal(text) if text.endswith("}") else None
        if isinstance(whole, dict):
            return {str(k): v for k, v in whole.items()}
        return _pairs(text[1:].removesuffix("}"), ":")
    if text.startswith("ServerArgs("):
        return _pairs(text[len("ServerArgs(") :].removesuffix(")"), "=")
    return None


def parse_server_args(message: str, base: LineBase) -> LogRecord | None:
    if not message.startswith("server_args="):
        return None
    args = read_args(message[len("server_args=") :])
    if args is None:
        return None
    flat: dict[str, Value] = {
        k: v for k, v in args.items()
        if k in _TYPED and isinstance(v, str if _TYPED[k][1] is str else (int, float)) and not isinstance(v, bool)
    }
    for match in _TYPED_VALUE.finditer(message):
        value = match["value"]
        if match["name"] not in flat and value != "None":
            flat[match["name"]] = value.strip("'") if value.startswith("'") else parse_value(value)[0]
    return ServerArgsRecord(**base, **take_fields(flat, _TYPED), args=args)
