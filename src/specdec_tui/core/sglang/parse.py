"""One SGLang server log line → one typed record, so panes show numbers instead of text.

SGLang's wording drifts between versions (`Decode batch.` vs `Decode batch,`, hybrid-model
token fields, PD-disaggregation queues, `npu graph`...), so the metric lines are parsed as
generic `key: value` lists (`fields`) and mapped onto a few well-known fields; every other key is
kept in `extra`. `parse_line` never raises: anything it cannot read becomes a `TextRecord`.
The records are in `records`, the prefixes in `prefix`, the start's resolved settings in `server_args_line`,
the lines where SGLang reports its own settings (flags it changed, the concurrency bound, deprecations) in
`settings_lines`, the rolling `LogStats` in `stats`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from specdec_tui.core.sglang.crash_lines import CRASH_HINTS, parse_crash
from specdec_tui.core.sglang.fields import (
    as_float,
    as_int,
    parse_pairs,
    parse_value,
    take_fields,
)
from specdec_tui.core.sglang.prefix import strip_prefixes
from specdec_tui.core.sglang.records import (
    AccessRecord,
    CudaGraphRecord,
    DecodeRecord,
    ErrorRecord,
    KVCacheRecord,
    LineBase,
    LoadWeightRecord,
    LogRecord,
    PrefillRecord,
    ReadyRecord,
    StartupSummaryRecord,
    TextRecord,
    Value,
)
from specdec_tui.core.sglang.server_args_line import parse_server_args
from specdec_tui.core.sglang.settings_lines import (
    ADJUST_HINTS,
    parse_adjust,
    parse_concurrency_limit,
    parse_deprecation,
)

__all__ = ["parse_line", "parse_lines"]


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


# Pool keys as `fields` names them (`#full token` → full_tokens, `mamba usage` → mamba_usage, `#gpu token` →
# gpu_tokens). upstream: managers/scheduler_components/pool_stats_observer.py, `PoolStats`.
_POOL_USAGES = ("full_token_usage", "swa_token_usage", "mamba_usage")
_POOL_COUNTS = ("full_tokens", "swa_tokens")


def _hybrid_fallbacks(fields: dict[str, Any], extra: dict[str, Value]) -> None:
    """Hybrid (SWA / Mamba) and HiSparse servers log per-pool keys instead of `#token` / `token usage`.

    token usage is the fullest pool, mamba included, as upstream's `token_usage` gauge is
    (`PoolStats.get_max_pool_usage`); the token count is the larger KV pool, mamba excluded
    (`get_kv_token_stats`). A HiSparse line names only its GPU/CPU tiers: the GPU tier is the pool."""
    if "token_usage" not in fields:
        usages = [u for k in _POOL_USAGES if (u := as_float(extra.get(k))) is not None]
        if not usages and (gpu := as_float(extra.get("gpu_token_usage"))) is not None:
            usages = [gpu]
        if usages:
            fields["token_usage"] = max(usages)
    if "tokens" not in fields:
        counts = [c for k in _POOL_COUNTS if (c := as_int(extra.get(k))) is not None]
        if not counts and (gpu_tokens := as_int(extra.get("gpu_tokens"))) is not None:
            counts = [gpu_tokens]
        if counts:
            fields["tokens"] = max(counts)


def _parse_batch(message: str, base: LineBase) -> LogRecord | None:
    match = _BATCH.match(message)
    if not match:
        return None
    pairs = parse_pairs(match["rest"], ":")
    forward_iter = int(match["iter"]) if match["iter"] else None
    if match["which"] == "Decode":
        fields = take_fields(pairs, _DECODE_FIELDS)
        _hybrid_fallbacks(fields, pairs)
        return DecodeRecord(**base, **fields, forward_iter=forward_iter, extra=pairs)
    fields = take_fields(pairs, _PREFILL_FIELDS)
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


def _parse_startup_summary(message: str, base: LineBase) -> LogRecord | None:
    if not message.startswith("max_total_num_tokens="):
        return None
    pairs = parse_pairs(message, "=")
    fields = take_fields(pairs, _STARTUP_FIELDS)
    return StartupSummaryRecord(**base, **fields, extra=pairs)


_LOAD_WEIGHT = re.compile(r"^Load weight (?P<phase>begin|end)\.?\s*(?P<rest>.*)$")
_LOAD_FIELDS = {
    "elapsed_s": ("elapsed_s", float),
    "type": ("model_type", str),
    "dtype": ("dtype", str),
    "avail_mem_gb": ("avail_mem_gb", float),
    "mem_usage_gb": ("mem_usage_gb", float),
}


def _parse_load_weight(message: str, base: LineBase) -> LogRecord | None:
    match = _LOAD_WEIGHT.match(message)
    if not match:
        return None
    pairs = parse_pairs(match["rest"].rstrip("."), "=")
    fields = take_fields(pairs, _LOAD_FIELDS)
    return LoadWeightRecord(**base, phase=match["phase"], **fields, extra=pairs)


# 0.5.23 names a labelled pool before "KV" (`MiniMax MSA-v1 main NVFP4 KV Cache is allocated.`) and, after a
# capture that resized the pool, says `KV Cache VA upper bound.` (memory_pool.py `_finalize_allocation_log`)
_CACHE_ALLOCATED = re.compile(
    r"^(?:(?P<pool>[\w-]+) Cache (?:is allocated|VA upper bound)\.|(?-i:(?P<label>[A-Z][\w.-]*(?: [\w.-]+)*) KV) "
    r"Cache is allocated\.)\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_KV_FIELDS = {
    "tokens": ("tokens", int),
    "k_size_gb": ("k_size_gb", float),
    "v_size_gb": ("v_size_gb", float),
    "kv_size_gb": ("kv_size_gb", float),
}


def _parse_kv_cache(message: str, base: LineBase) -> LogRecord | None:
    match = _CACHE_ALLOCATED.match(message)
    if not match:
        return None
    pairs = parse_pairs(match["rest"], ":")
    fields = take_fields(pairs, _KV_FIELDS)
    if "kv_size_gb" not in fields and "k_size_gb" in fields and "v_size_gb" in fields:
        fields["kv_size_gb"] = fields["k_size_gb"] + fields["v_size_gb"]
    pool = match["pool"] or f"{match['label']} KV"
    return KVCacheRecord(**base, pool=pool, **fields, extra=pairs)


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


def _parse_cuda_graph(message: str, base: LineBase) -> LogRecord | None:
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


_READY = "The server is fired up and ready to roll"


_ACCESS = re.compile(
    r'(?P<client>\S+) - "(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+" (?P<status>\d{3})\b'
)


def _parse_access(message: str, base: LineBase) -> LogRecord | None:
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
    ("health_check_failed", re.compile(r"^Health check failed\b")),  # upstream: entrypoints/http_server.py
    ("not_enough_memory", re.compile(r"Not enough (?:host )?memory", re.IGNORECASE)),
    # upstream 0.5.23: kv_cache_configurator.py `_profile_available_bytes` (names the minimum viable fraction)
    ("not_enough_memory", re.compile(r"Loaded weights leave no GPU memory for the KV cache")),
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


# upstream: http_server.py `Health check failed. Server couldn't get a response from detokenizer for last
# {HEALTH_CHECK_TIMEOUT} seconds. tic start time: {H:M:S}. last_heartbeat time: {H:M:S}`
_HEALTH_CHECK = re.compile(
    r"for last (?P<timeout>\d+) seconds\.(?: tic start time: (?P<tic>[\d:]+)\.)?(?: last_heartbeat time: (?P<beat>[\d:]+))?"
)
# upstream: MemoryPoolConfig.__post_init__ `Not enough memory. … Current value: mem_fraction_static={value}`
_MEM_FRACTION = re.compile(r"mem_fraction_static=(?P<v>\d+(?:\.\d+)?)")


def _error_extra(category: str, message: str) -> dict[str, Value]:
    """The numbers an error line carries, typed (an integer stays an int)."""
    if category == "kv_pool_full":
        match = _RETRACT_PAIRS.search(message)
        return parse_pairs(match["rest"] or match["rest2"] or "", ":") if match else {}
    if category == "not_enough_memory":
        fraction = _MEM_FRACTION.search(message)
        return {"mem_fraction_static": parse_value(fraction["v"])[0]} if fraction else {}
    if category == "health_check_failed":
        health = _HEALTH_CHECK.search(message)
        if not health:
            return {}
        extra: dict[str, Value] = {"timeout_s": int(health["timeout"])}
        if health["tic"]:
            extra["tic_start_time"] = health["tic"]
        if health["beat"]:
            extra["last_heartbeat_time"] = health["beat"]
        return extra
    return {}


def _parse_error(message: str, base: LineBase) -> LogRecord | None:
    for category, pattern in _ERROR_RULES:
        if pattern.search(message):
            return ErrorRecord(**base, category=category, detail=message, extra=_error_extra(category, message))
    return None


# Cheap necessary conditions, so most lines skip most regexes. Case-insensitive rules are gated on the
# lower-cased ASCII line; a non-ASCII line runs them all (Unicode case folding is not just `lower()`).
_BATCH_HEADS = ("Decode batch", "Prefill batch")
_SETTINGS_HEADS = ("max_total_num_tokens=", "max_running_requests", "server_args=")
_ERROR_HINTS = (  # each `_ERROR_RULES` pattern contains one of these (lower-cased)
    "memory", "fail", "error", "exception", "pool is full", "scheduler is dead", "sigquit", "child process",
    "unrecognized arguments", "traceback",
)


def _mentions(folded: str | None, hints: tuple[str, ...]) -> bool:
    """False only when `folded` (a lower-cased ASCII message) contains none of `hints`."""
    if folded is None:
        return True
    for hint in hints:
        if hint in folded:
            return True
    return False


def _parse_settings(text: str, base: LineBase) -> LogRecord | None:
    """The concurrency limit or server_args line (the other `_SETTINGS_HEADS`), or None: the other rules try it."""
    if text.startswith("max_running_requests"):
        return parse_concurrency_limit(text, base)
    if text.startswith("server_args="):
        return parse_server_args(text, base)
    return None


def _dispatch(text: str, base: LineBase) -> LogRecord | None:
    """The first parser that reads `text`, in priority order: metric lines first (most frequent),
    errors before the generic adjust rules. A gate that fails means its parser would return None."""
    if text.startswith(_BATCH_HEADS):
        record = _parse_batch(text, base)
        if record is not None:
            return record
    if text.startswith(_SETTINGS_HEADS):  # one test for the three heads (most lines have none of them)
        if text.startswith("max_total_num_tokens="):
            return _parse_startup_summary(text, base)
        record = _parse_settings(text, base)
        if record is not None:
            return record
    folded = text.lower() if text.isascii() else None
    record = None
    if text.startswith("Load weight "):
        record = _parse_load_weight(text, base)
    if record is None and (folded is None or " cache is allocated." in folded or " cache va upper bound." in folded):
        record = _parse_kv_cache(text, base)
    if record is None and (folded is None or folded.startswith("capture ")):
        record = _parse_cuda_graph(text, base)
    if record is None and _READY in text:
        record = ReadyRecord(**base)
    if record is None and ' - "' in text and " HTTP/" in text:
        record = _parse_access(text, base)
    if record is None and (folded is None or " is deprecated" in folded):
        record = parse_deprecation(text, base)
    if record is None and _mentions(folded, CRASH_HINTS):
        record = parse_crash(text, base)
    if record is None and _mentions(folded, _ERROR_HINTS):
        record = _parse_error(text, base)
    if record is None and _mentions(folded, ADJUST_HINTS):
        record = parse_adjust(text, base)
    return record


def parse_line(message: str) -> LogRecord:
    """One raw line (journald, log file or pasted) → its record. Never raises."""
    raw = message if isinstance(message, str) else str(message)
    try:
        text, timestamp, tags, level = strip_prefixes(raw)
        base: LineBase = {"raw": raw, "message": text, "timestamp": timestamp, "tags": tags, "level": level}
        return _dispatch(text, base) or TextRecord(**base)
    except Exception:  # a parser bug must never take the journal pane down
        return TextRecord(raw=raw, message=raw.strip())


def parse_lines(lines: Iterable[str]) -> list[LogRecord]:
    return [parse_line(line) for line in lines]
