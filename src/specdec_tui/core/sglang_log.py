"""One SGLang server log line → one typed record, so panes show numbers instead of text.

SGLang's wording drifts between versions (`Decode batch.` vs `Decode batch,`, hybrid-model
token fields, PD-disaggregation queues, `npu graph`...), so the metric lines are parsed as
generic `key: value` lists and mapped onto a few well-known fields; every other key is kept
in `extra`. `parse_line` never raises: anything it cannot read becomes a `TextRecord`.

The records live in `sglang_records`, the rolling `LogStats` in `sglang_stats`; both are
re-exported here so `from specdec_tui.core.sglang_log import …` keeps working.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any, Iterable

from specdec_tui.core.sglang_records import (
    CAUSE_CATEGORIES,
    FATAL_ERROR_CATEGORIES,
    AccessRecord,
    AdjustRecord,
    CudaGraphRecord,
    DecodeRecord,
    ErrorRecord,
    KVCacheRecord,
    LoadWeightRecord,
    LogRecord,
    PrefillRecord,
    ReadyRecord,
    StartupSummaryRecord,
    TextRecord,
    Value,
    cause_rank,
)
from specdec_tui.core.sglang_stats import LogStats

__all__ = [
    "LogRecord",
    "DecodeRecord",
    "PrefillRecord",
    "StartupSummaryRecord",
    "LoadWeightRecord",
    "KVCacheRecord",
    "CudaGraphRecord",
    "ReadyRecord",
    "ErrorRecord",
    "AccessRecord",
    "AdjustRecord",
    "TextRecord",
    "FATAL_ERROR_CATEGORIES",
    "CAUSE_CATEGORIES",
    "cause_rank",
    "LogStats",
    "parse_line",
    "parse_lines",
]


# ---------------------------------------------------------------------------------------------
# Prefixes: journald/syslog, then SGLang's `[YYYY-MM-DD HH:MM:SS DP0 TP0 EP0] `

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_SYSLOG_SHORT = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [^\s:\[]+(?:\[\d+\])?: ")
_SYSLOG_ISO = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:Z|[+-]\d{2}:?\d{2})? \S+ [^\s:\[]+(?:\[\d+\])?: "
)
_SGLANG_PREFIX = re.compile(
    r"^\[?(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)(?P<tags>(?:\s+[A-Z][A-Z_]*\s?\d+)*)\s*\]\s?"
)
_TAG = re.compile(r"([A-Z][A-Z_]*)\s?(\d+)")
_OLD_INNER_TAG = re.compile(r"^\[(?:gpu=(?P<gpu>\d+)|TP ?(?P<tp>\d+))\]\s*")
_LEVEL = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::\s*|\s+)")


@lru_cache(maxsize=4096)  # a flood repeats the same second thousands of times; strptime is slow
def _parse_timestamp(text: str) -> datetime | None:
    text = text.replace("T", " ").replace(",", ".")
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


@lru_cache(maxsize=256)
def _tag_items(tags_text: str) -> tuple[tuple[str, int], ...]:
    """`" DP0 TP0 EP0"` → (("DP", 0), ("TP", 0), ("EP", 0)); cached, a server has few distinct rank prefixes."""
    return tuple((name, int(num)) for name, num in _TAG.findall(tags_text))


_LEVEL_HEADS = ("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL")


def _strip_prefixes(line: str) -> tuple[str, datetime | None, dict[str, int], str | None]:
    """Returns (message, timestamp, tags, level) with every known prefix removed.

    Each regex runs only when the line's first character can start its match (cheap rejects)."""
    text = (_ANSI.sub("", line) if "\x1b" in line else line).rstrip("\r\n")
    timestamp: datetime | None = None
    tags: dict[str, int] = {}
    level: str | None = None
    first = text[:1]
    if first.isdecimal():  # the same characters as the regexes' `\d`
        match = _SYSLOG_ISO.match(text)
        if match:
            timestamp = _parse_timestamp(match["ts"])
            text = text[match.end() :]
            first = text[:1]
    elif "A" <= first <= "Z":
        match = _SYSLOG_SHORT.match(text)
        if match:
            text = text[match.end() :]
            first = text[:1]
    if first == "[" or first.isdecimal():
        match = _SGLANG_PREFIX.match(text)
        if match:
            timestamp = _parse_timestamp(match["ts"]) or timestamp
            tags = dict(_tag_items(match["tags"]))
            text = text[match.end() :]
    if text.startswith("["):
        match = _OLD_INNER_TAG.match(text)
        if match:
            tags.setdefault("GPU" if match["gpu"] is not None else "TP", int(match["gpu"] or match["tp"]))
            text = text[match.end() :]
    match = _LEVEL.match(text) if text.startswith(_LEVEL_HEADS) else None
    if match:
        level = "WARNING" if match["level"] == "WARN" else match["level"]
        text = text[match.end() :]
    return text.strip(), timestamp, tags, level


# ---------------------------------------------------------------------------------------------
# Generic `key: value` / `key=value` lists

# `int` names the first branch, so `lastgroup` tells an integer from a float in one fullmatch
_NUMBER = re.compile(r"(?P<int>[-+]?\d+)|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_UNIT = re.compile(r"^(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>GB|GiB|MB|MiB|ms|s|%)$")
_KEY_ALIASES = {
    "token": "tokens",
    "full_token": "full_tokens",
    "swa_token": "swa_tokens",
    "accept_length": "accept_len",
    "accept_ratio": "accept_rate",
    "cpu_graph": "cuda_graph",
    "npu_graph": "cuda_graph",
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


def _comma_in_brackets(text: str) -> bool:
    # A comma-free innermost group leaves every comma's depth unchanged: drop those first.
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


def _parse_value(text: str) -> tuple[Value, str]:
    """Typed value and its unit ("" if none): `0.50`→0.5, `True`→True, `78.00 GB`→(78.0, "gb")."""
    text = text.strip()
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
        number = float(match["num"])
        unit = match["unit"].lower()
        if unit == "%":
            return number / 100.0, ""
        return number, {"gib": "gb", "mib": "mb"}.get(unit, unit)
    if text.startswith("[") and text.endswith("]"):
        return [_parse_value(item)[0] for item in _split_top_level(text[1:-1])], ""
    return text, ""


_PAIR_CACHE_SIZE = 8192
# separator → {raw piece → (key, value) or None}: `#running-req: 1`, `token usage: 0.03`, `cuda graph: True`
# recur on thousands of lines. List values are mutable, so they are never cached.
_PAIR_CACHES: dict[str, dict[str, tuple[str, Value] | None]] = {}
_UNSEEN = object()


def _parse_pairs(text: str, sep: str) -> dict[str, Value]:
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
    value, unit = _parse_value(raw_value)
    if unit and not key.endswith(f"_{unit}"):
        key = f"{key}_{unit}"
    return key, value


def _as_int(value: Value | None) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _as_float(value: Value | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _as_bool(value: Value | None) -> bool | None:
    return value if isinstance(value, bool) else None


def _as_str(value: Value | None) -> str | None:
    return None if value is None else str(value)


_CONVERTERS = {int: _as_int, float: _as_float, bool: _as_bool, str: _as_str}


def _take(pairs: dict[str, Value], spec: dict[str, tuple[str, type]]) -> dict[str, Any]:
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


# ---------------------------------------------------------------------------------------------
# Line kinds

_BATCH = re.compile(r"^(?P<which>Decode|Prefill) batch(?:\s*\[(?P<iter>\d+)\])?\s*[.,]?\s*(?P<rest>.*)$")
_DECODE_FIELDS = {
    "running_req": ("running_req", int),
    "tokens": ("tokens", int),
    "token_usage": ("token_usage", float),
    "accept_len": ("accept_len", float),
    "accept_rate": ("accept_rate", float),
    "cuda_graph": ("cuda_graph", bool),
    "gen_throughput": ("gen_throughput", float),
    "queue_req": ("queue_req", int),
}
_PREFILL_FIELDS = {
    "new_seq": ("new_seq", int),
    "new_token": ("new_token", int),
    "cached_token": ("cached_token", int),
    "token_usage": ("token_usage", float),
    "running_req": ("running_req", int),
    "queue_req": ("queue_req", int),
    "input_throughput": ("input_throughput", float),
}


def _hybrid_fallbacks(fields: dict[str, Any], extra: dict[str, Value]) -> None:
    """Hybrid (SWA / Mamba) models log `#full token` / `full token usage` instead of the plain keys."""
    if "token_usage" not in fields:
        usages = [_as_float(extra.get(k)) for k in ("full_token_usage", "swa_token_usage")]
        usages = [u for u in usages if u is not None]
        if usages:
            fields["token_usage"] = max(usages)
    if "tokens" not in fields:
        counts = [_as_int(extra.get(k)) for k in ("full_tokens", "swa_tokens")]
        counts = [c for c in counts if c is not None]
        if counts:
            fields["tokens"] = max(counts)


def _parse_batch(message: str, base: dict[str, Any]) -> LogRecord | None:
    match = _BATCH.match(message)
    if not match:
        return None
    pairs = _parse_pairs(match["rest"], ":")
    forward_iter = int(match["iter"]) if match["iter"] else None
    if match["which"] == "Decode":
        fields = _take(pairs, _DECODE_FIELDS)
        _hybrid_fallbacks(fields, pairs)
        return DecodeRecord(**base, **fields, forward_iter=forward_iter, extra=pairs)
    fields = _take(pairs, _PREFILL_FIELDS)
    _hybrid_fallbacks(fields, pairs)
    return PrefillRecord(**base, **fields, forward_iter=forward_iter, extra=pairs)


_STARTUP_FIELDS = {
    "max_total_num_tokens": ("max_total_num_tokens", int),
    "chunked_prefill_size": ("chunked_prefill_size", int),
    "max_prefill_tokens": ("max_prefill_tokens", int),
    "max_running_requests": ("max_running_requests", int),
    "context_len": ("context_len", int),
    "available_gpu_mem_gb": ("available_gpu_mem_gb", float),
    "available_cpu_mem_gb": ("available_gpu_mem_gb", float),
}


def _parse_startup_summary(message: str, base: dict[str, Any]) -> LogRecord | None:
    if not message.startswith("max_total_num_tokens="):
        return None
    pairs = _parse_pairs(message, "=")
    fields = _take(pairs, _STARTUP_FIELDS)
    return StartupSummaryRecord(**base, **fields, extra=pairs)


_LOAD_WEIGHT = re.compile(r"^Load weight (?P<phase>begin|end)\.?\s*(?P<rest>.*)$")
_LOAD_FIELDS = {
    "elapsed_s": ("elapsed_s", float),
    "type": ("model_type", str),
    "dtype": ("dtype", str),
    "avail_mem_gb": ("avail_mem_gb", float),
    "mem_usage_gb": ("mem_usage_gb", float),
}


def _parse_load_weight(message: str, base: dict[str, Any]) -> LogRecord | None:
    match = _LOAD_WEIGHT.match(message)
    if not match:
        return None
    pairs = _parse_pairs(match["rest"].rstrip("."), "=")
    fields = _take(pairs, _LOAD_FIELDS)
    return LoadWeightRecord(**base, phase=match["phase"], **fields, extra=pairs)


_CACHE_ALLOCATED = re.compile(r"^(?P<pool>[\w-]+) Cache is allocated\.\s*(?P<rest>.*)$", re.IGNORECASE)
_KV_FIELDS = {
    "tokens": ("tokens", int),
    "k_size_gb": ("k_size_gb", float),
    "v_size_gb": ("v_size_gb", float),
    "kv_size_gb": ("kv_size_gb", float),
}


def _parse_kv_cache(message: str, base: dict[str, Any]) -> LogRecord | None:
    match = _CACHE_ALLOCATED.match(message)
    if not match:
        return None
    pairs = _parse_pairs(match["rest"], ":")
    fields = _take(pairs, _KV_FIELDS)
    if "kv_size_gb" not in fields and "k_size_gb" in fields and "v_size_gb" in fields:
        fields["kv_size_gb"] = fields["k_size_gb"] + fields["v_size_gb"]
    return KVCacheRecord(**base, pool=match["pool"], **fields, extra=pairs)


_CAPTURE = re.compile(r"^Capture (?P<graph>.*?graph) (?P<phase>begin|end)\b\.?(?P<rest>.*)$", re.IGNORECASE)
_ELAPSED = re.compile(r"(?:Time elapsed:|elapsed=)\s*(?P<v>[\d.]+)\s*s\b", re.IGNORECASE)
_MEM_USAGE = re.compile(r"mem usage=\s*(?P<v>[\d.]+)\s*GB", re.IGNORECASE)
_AVAIL_MEM = re.compile(r"avail mem=\s*(?P<v>[\d.]+)\s*GB", re.IGNORECASE)


def _search_float(pattern: re.Pattern[str], text: str) -> float | None:
    match = pattern.search(text)
    if not match:
        return None
    try:
        return float(match["v"].rstrip("."))
    except ValueError:
        return None


def _parse_cuda_graph(message: str, base: dict[str, Any]) -> LogRecord | None:
    match = _CAPTURE.match(message)
    if not match:
        return None
    rest = match["rest"]
    return CudaGraphRecord(
        **base,
        phase=match["phase"].lower(),
        graph=match["graph"],
        elapsed_s=_search_float(_ELAPSED, rest),
        mem_usage_gb=_search_float(_MEM_USAGE, rest),
        avail_mem_gb=_search_float(_AVAIL_MEM, rest),
    )


def _parse_ready(message: str, base: dict[str, Any]) -> LogRecord | None:
    if "The server is fired up and ready to roll" in message:
        return ReadyRecord(**base)
    return None


_ACCESS = re.compile(
    r'(?P<client>\S+) - "(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+" (?P<status>\d{3})\b'
)


def _parse_access(message: str, base: dict[str, Any]) -> LogRecord | None:
    match = _ACCESS.search(message)
    if not match:
        return None
    return AccessRecord(
        **base,
        client=match["client"],
        method=match["method"],
        path=match["path"],
        status=int(match["status"]),
    )


# (category, pattern) in priority order: the first match wins.
_ERROR_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("not_enough_memory", re.compile(r"Not enough (?:host )?memory", re.IGNORECASE)),
    ("cuda_graph_failed", re.compile(r"Capture .*graph failed", re.IGNORECASE)),
    ("cuda_oom", re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory", re.IGNORECASE)),
    ("kv_pool_full", re.compile(r"KV cache pool is full|Decode out of memory happened", re.IGNORECASE)),
    ("scheduler_exception", re.compile(r"Scheduler hit an exception|scheduler is dead", re.IGNORECASE)),
    ("init_failed", re.compile(r"Initialization failed|init(?:ialization)? failed|failed to initialize", re.IGNORECASE)),
    ("child_failed", re.compile(r"Received sigquit|SIGQUIT received|child process .*(?:died|failed)", re.IGNORECASE)),
    ("bad_arguments", re.compile(r": error: (?:unrecognized arguments|argument )|unrecognized arguments:")),
    ("cuda_error", re.compile(r"CUDA error|NCCL error|illegal memory access", re.IGNORECASE)),
    ("traceback", re.compile(r"^Traceback \(most recent call last\)")),
    ("exception", re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception): ")),
    ("exception", re.compile(r"hit an exception")),
)
_RETRACT_PAIRS = re.compile(r"Retract requests\.\s*(?P<rest>.*)$|happened\.\s*(?P<rest2>.*)$")


def _parse_error(message: str, base: dict[str, Any]) -> LogRecord | None:
    for category, pattern in _ERROR_RULES:
        if pattern.search(message):
            extra: dict[str, Value] = {}
            if category == "kv_pool_full":
                match = _RETRACT_PAIRS.search(message)
                if match:
                    extra = _parse_pairs(match["rest"] or match["rest2"] or "", ":")
            return ErrorRecord(**base, category=category, detail=message, extra=extra)
    return None


def _const(value: Value) -> Any:
    return lambda _match: value


def _group(name: str) -> Any:
    return lambda match: _parse_value(match[name])[0]


# (pattern, setting, value-from-match) for SGLang's own "I changed your flag" notices
# (server_args.py `_handle_speculative_decoding` and friends); first match wins.
_ADJUST_RULES: tuple[tuple[re.Pattern[str], str, Any], ...] = (
    (
        re.compile(r"speculative_num_draft_tokens is adjusted to speculative_num_steps \+ 1"),
        "speculative_num_draft_tokens",
        _const("speculative_num_steps + 1"),
    ),
    (
        re.compile(r"Max running requests is reset to (?P<v>\d+)", re.IGNORECASE),
        "max_running_requests",
        _group("v"),
    ),
    (re.compile(r"Overlap schedul\w+ is disabled", re.IGNORECASE), "disable_overlap_schedule", _const(True)),
    (re.compile(r"is incompatible with overlap schedule", re.IGNORECASE), "disable_overlap_schedule", _const(True)),
    (re.compile(r"overlap schedule is turned on", re.IGNORECASE), "disable_overlap_schedule", _const(False)),
    (re.compile(r"Mixed chunked prefill is disabled", re.IGNORECASE), "enable_mixed_chunk", _const(False)),
    (re.compile(r"Cuda graph is disabled", re.IGNORECASE), "disable_cuda_graph", _const(True)),
    (re.compile(r"Radix cache is disabled|forced as chunk cache", re.IGNORECASE), "disable_radix_cache", _const(True)),
    (
        re.compile(r"change(?:ing)? page_size (?:from \d+ )?to (?P<v>\d+)", re.IGNORECASE),
        "page_size",
        _group("v"),
    ),
    (
        re.compile(r"expert parallel size is adjusted to be the same as the tensor parallel size\s*\[(?P<v>\d+)\]"),
        "ep_size",
        _group("v"),
    ),
    (
        re.compile(r"overriding (?P<name>[a-z_]+)=\S+ to (?P<v>[\w.]+)", re.IGNORECASE),
        "",
        _group("v"),
    ),
    (
        re.compile(r"\b(?P<name>[a-z][a-z0-9_]+) is (?:adjusted|reset|set|changed|forced|automatically set) to (?P<v>[\w.+-]+)"),
        "",
        _group("v"),
    ),
)


def _parse_adjust(message: str, base: dict[str, Any]) -> LogRecord | None:
    for pattern, setting, get_value in _ADJUST_RULES:
        match = pattern.search(message)
        if match:
            name = setting or match.groupdict().get("name") or ""
            return AdjustRecord(**base, setting=name, value=get_value(match))
    return None


# Cheap necessary conditions, so most lines skip most regexes. Case-insensitive rules are gated on the
# lower-cased ASCII line; a non-ASCII line runs them all (Unicode case folding is not just `lower()`).
_BATCH_HEADS = ("Decode batch", "Prefill batch")
_ERROR_HINTS = (  # each `_ERROR_RULES` pattern contains one of these (lower-cased)
    "memory", "fail", "error", "exception", "pool is full", "scheduler is dead", "sigquit", "child process",
    "unrecognized arguments", "traceback",
)
_ADJUST_HINTS = (  # each `_ADJUST_RULES` pattern contains one of these (lower-cased)
    "is adjusted", "is reset", "is disabled", "is incompatible", "is turned on", "forced as chunk cache",
    "page_size", "overriding", "is set", "is changed", "is forced", "is automatically set",
)


def _mentions(folded: str | None, hints: tuple[str, ...]) -> bool:
    """False only when `folded` (a lower-cased ASCII message) contains none of `hints`."""
    if folded is None:
        return True
    for hint in hints:
        if hint in folded:
            return True
    return False


def _dispatch(text: str, base: dict[str, Any]) -> LogRecord | None:
    """The first parser that reads `text`, in priority order: metric lines first (most frequent),
    errors before the generic adjust rules. A gate that fails means its parser would return None."""
    if text.startswith(_BATCH_HEADS):
        record = _parse_batch(text, base)
        if record is not None:
            return record
    if text.startswith("max_total_num_tokens="):
        return _parse_startup_summary(text, base)
    folded = text.lower() if text.isascii() else None
    record = None
    if text.startswith("Load weight "):
        record = _parse_load_weight(text, base)
    if record is None and (folded is None or " cache is allocated." in folded):
        record = _parse_kv_cache(text, base)
    if record is None and (folded is None or folded.startswith("capture ")):
        record = _parse_cuda_graph(text, base)
    if record is None:
        record = _parse_ready(text, base)
    if record is None and ' - "' in text and " HTTP/" in text:
        record = _parse_access(text, base)
    if record is None and _mentions(folded, _ERROR_HINTS):
        record = _parse_error(text, base)
    if record is None and _mentions(folded, _ADJUST_HINTS):
        record = _parse_adjust(text, base)
    return record


def parse_line(message: str) -> LogRecord:
    """One raw line (journald, log file or pasted) → its record. Never raises."""
    raw = message if isinstance(message, str) else str(message)
    try:
        text, timestamp, tags, level = _strip_prefixes(raw)
        base: dict[str, Any] = {"raw": raw, "message": text, "timestamp": timestamp, "tags": tags, "level": level}
        return _dispatch(text, base) or TextRecord(**base)
    except Exception:  # a parser bug must never take the journal pane down
        return TextRecord(raw=raw, message=raw.strip())


def parse_lines(lines: Iterable[str]) -> list[LogRecord]:
    return [parse_line(line) for line in lines]
