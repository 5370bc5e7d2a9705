"""SGLang's generic `key: value` / `key=value` lists → typed values, and the converters the rules use.

Metric lines drift between versions, so they are read as lists of pairs and mapped onto known fields
(`take_fields`); whatever is left stays in a record's `extra`."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from specdec_tui.core.sglang.records import Value

# `int` names the first branch, so `lastgroup` tells an integer from a float in one fullmatch
_NUMBER = re.compile(r"(?P<int>[-+]?\d+)|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_UNIT = re.compile(r"^(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>GB|GiB|MB|MiB|ms|s|%)$")
_KEY_ALIASES = {
    "token": "tokens",
    "full_token": "full_tokens",
    "swa_token": "swa_tokens",
    "gpu_token": "gpu_tokens",  # HiSparse device tier
    "cpu_token": "cpu_tokens",  # HiSparse host tier
    "accept_length": "accept_len",
    "accept_ratio": "accept_rate",
    "cpu_graph": "cuda_graph",
    "npu_graph": "cuda_graph",
    "musa_graph": "cuda_graph",  # upstream's graph flag is named after the device (metrics_reporter.py)
}


_BRACKET_OR_COMMA = re.compile(r"[,()\[\]{}]")
_COMMALESS_GROUP = re.compile(r"[(\[{][^,()\[\]{}]*[)\]}]")  # `(token/s)`: no comma, nothing nested
_PARENTHESISED = re.compile(r"\([^)]*\)")
_NON_KEY_CHARS = re.compile(r"[^a-z0-9]+")
_KEY_AND_NUMBER = re.compile(r"^(?P<key>.*\D)\s+(?P<value>[-+]?[\d.]+%?)$")


def _top_level_pieces(text: str) -> list[str]:
    """Splits on commas outside (), [] and {} — SGLang values like `[1, 2]` contain commas.
    Pieces are not stripped and may be empty.

    A plain `str.split` unless a comma really sits inside brackets (`(token/s)` has none)."""
    pieces = text.split(",")
    if len(pieces) > 1 and ("(" in text or "[" in text or "{" in text) and _comma_in_brackets(text):
        pieces = _rejoin_bracketed(pieces)
    return pieces


def _split_top_level(text: str) -> list[str]:
    """`_top_level_pieces`, stripped, without the empty ones."""
    return [part for part in (piece.strip() for piece in _top_level_pieces(text)) if part]


def _bracket_depth(depth: int, char: str) -> int:
    """Depth after one bracket character; a stray closing bracket at depth 0 is ignored."""
    if char in "([{":
        return depth + 1
    return depth - 1 if depth else 0


# Comma-free groups SGLang writes in its metric keys (`gen throughput (token/s)`): removed with a plain
# `str.replace` before the general test, which then sees no bracket at all on a batch line.
_KEY_GROUPS = ("(token/s)",)


def _comma_in_brackets(text: str) -> bool:
    # A comma-free innermost group leaves every comma's depth unchanged (its closing bracket is never a stray one):
    # drop the known ones with a plain replace, then the rest.
    for group in _KEY_GROUPS:
        text = text.replace(group, "")
    if "(" not in text and "[" not in text and "{" not in text:
        return False
    text = _COMMALESS_GROUP.sub("", text)
    if "(" not in text and "[" not in text and "{" not in text:
        return False
    depth = 0
    for char in _BRACKET_OR_COMMA.findall(text):
        if char != ",":
            depth = _bracket_depth(depth, char)
        elif depth:
            return True
    return False


def _rejoin_bracketed(pieces: list[str]) -> list[str]:
    """Glues back the pieces whose separating comma sat inside brackets."""
    joined: list[str] = []
    depth = 0
    current: str | None = None
    for piece in pieces:
        current = piece if current is None else current + "," + piece
        for char in _BRACKET_OR_COMMA.findall(piece):
            depth = _bracket_depth(depth, char)
        if depth == 0:
            joined.append(current)
            current = None
    if current is not None:
        joined.append(current)
    return joined


@lru_cache(maxsize=2048)  # keys repeat on every batch line
def _normalize_key(key: str) -> str:
    """`#running-req` → running_req, `gen throughput (token/s)` → gen_throughput."""
    key = _PARENTHESISED.sub("", key).replace("#", "").strip().lower()
    key = _NON_KEY_CHARS.sub("_", key).strip("_")
    return _KEY_ALIASES.get(key, key)


def parse_value(text: str) -> tuple[Value, str]:
    """Typed value and its unit ("" if none): `0.50`→0.5, `7`→7, `True`→True, `78.00 GB`→(78.0, "gb"), `78 GB`→(78, "gb")."""
    text = text.strip()
    if text.isdecimal():  # the common cases first, as `_NUMBER` reads them (`\d` is `str.isdecimal`)
        return int(text), ""
    whole, dot, fraction = text.partition(".")
    if dot and whole.isdecimal() and (not fraction or fraction.isdecimal()):
        return float(text), ""
    number = _NUMBER.fullmatch(text)
    if number is None:
        text = text.rstrip(".").strip()  # `mem usage=0.93 GB.` ends a sentence
        if text in ("True", "true"):
            return True, ""
        if text in ("False", "false"):
            return False, ""
        number = _NUMBER.fullmatch(text)
    if number is not None:
        return (int(text) if number.lastgroup == "int" else float(text)), ""
    match = _UNIT.match(text)
    if match:
        unit = match["unit"].lower()
        if unit == "%":
            return float(match["num"]) / 100.0, ""
        # an integer stays one (`78 GB` → 78), as a bare number does; typed fields convert as they need
        number = _NUMBER.fullmatch(match["num"])
        amount: int | float = int(match["num"]) if number is not None and number.lastgroup == "int" else float(match["num"])
        return amount, {"gib": "gb", "mib": "mb"}.get(unit, unit)
    if text.startswith("[") and text.endswith("]"):
        return [parse_value(item)[0] for item in _split_top_level(text[1:-1])], ""
    return text, ""


_PAIR_CACHE_SIZE = 8192
# separator → {raw piece → (key, value) or None}: `#running-req: 1`, `token usage: 0.03`, `cuda graph: True`
# recur on thousands of lines. List values are mutable, so they are never cached.
_PAIR_CACHES: dict[str, dict[str, tuple[str, Value] | None]] = {}
_UNSEEN = object()


def parse_pairs(text: str, sep: str) -> dict[str, Value]:
    """`a: 1, b c: 2.5, flag: True` → {"a": 1, "b_c": 2.5, "flag": True}; units join the key."""
    pairs: dict[str, Value] = {}
    cache = _PAIR_CACHES.setdefault(sep, {})
    for piece in _top_level_pieces(text):
        pair = cache.get(piece, _UNSEEN)
        if pair is _UNSEEN:
            pair = _parse_pair(piece.strip(), sep)
            if pair is None or type(pair[1]) is not list:
                if len(cache) >= _PAIR_CACHE_SIZE:
                    cache.clear()
                cache[piece] = pair
        if pair is not None:
            pairs[pair[0]] = pair[1]  # type: ignore[index]
    return pairs


def _parse_pair(piece: str, sep: str) -> tuple[str, Value] | None:
    """`gen throughput (token/s): 186.04` → ("gen_throughput", 186.04); None when it holds no pair."""
    if not piece:
        return None
    if sep in piece:
        raw_key, _, raw_value = piece.partition(sep)
    else:
        # `accept-len 2.50` (no colon) in some forks: a trailing number is the value.
        match = _KEY_AND_NUMBER.match(piece)
        if not match:
            return None
        raw_key, raw_value = match["key"], match["value"]
    key = _normalize_key(raw_key)
    if not key:
        return None
    value, unit = parse_value(raw_value)
    if unit and not key.endswith(f"_{unit}"):
        key = f"{key}_{unit}"
    return key, value


def as_int(value: Value | None) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def as_float(value: Value | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _as_bool(value: Value | None) -> bool | None:
    return value if isinstance(value, bool) else None


def _as_str(value: Value | None) -> str | None:
    return None if value is None else str(value)


_CONVERTERS = {int: as_int, float: as_float, bool: _as_bool, str: _as_str}


def take_fields(pairs: dict[str, Value], spec: dict[str, tuple[str, type]]) -> dict[str, Any]:
    """Moves the keys named in `spec` (pair key → (field, type)) out of `pairs`, typed."""
    out: dict[str, Any] = {}
    for key, (field_name, kind) in spec.items():
        if key in pairs:
            value = pairs[key]
            # already the right type (the common case): the converter would return it unchanged
            converted = value if type(value) is kind else _CONVERTERS[kind](value)
            if converted is not None:
                out[field_name] = converted
                del pairs[key]
    return out

