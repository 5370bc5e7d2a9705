"""The lines where SGLang reports its own settings: a flag it changed, what bound
max_running_requests, a deprecated flag or endpoint. Few per start, so plain regexes; `parse` dispatches here."""

from __future__ import annotations

import re
from collections.abc import Callable

from specdec_tui.core.sglang.fields import parse_value
from specdec_tui.core.sglang.records import (
    AdjustRecord,
    ConcurrencyLimitRecord,
    DeprecationRecord,
    LineBase,
    LogRecord,
    Value,
)

__all__ = ["ADJUST_HINTS", "parse_adjust", "parse_concurrency_limit", "parse_deprecation"]


# upstream: mem_cache/concurrency_limit.py `format_concurrency_report`: the reduced form (logged at WARNING) and
# the plain one (INFO); `detail` never holds a parenthesis, `other limits` never a full stop.
_CONCURRENCY = re.compile(
    r"^max_running_requests(?: reduced from the requested (?P<requested>\d+) to |=)(?P<value>\d+)"
    r"(?: \(per dp worker\))?, bound by (?P<bound>\w+)(?: \((?P<detail>[^()]*)\))?"
    r"(?:; other limits: (?P<others>[^.]*))?\.?(?:\s*To raise it: (?P<remedy>.*?)\.?)?\s*$"
)
_OTHER_LIMIT = re.compile(r"(\w+)=(\d+)")


def parse_concurrency_limit(message: str, base: LineBase) -> LogRecord | None:
    match = _CONCURRENCY.match(message)
    if not match:
        return None
    return ConcurrencyLimitRecord(
        **base,
        value=int(match["value"]),
        requested=int(match["requested"]) if match["requested"] else None,
        bound=match["bound"],
        detail=match["detail"] or "",
        other_limits={name: int(number) for name, number in _OTHER_LIMIT.findall(match["others"] or "")},
        remedy=match["remedy"] or "",
    )


# upstream: server_args.py `print_deprecated_warning` (flags, wrapped in ANSI bold yellow, which `prefix` strips)
# and entrypoints/http_server.py (`Endpoint '/get_server_info' is deprecated … Please use '/server_info' instead.`).
_DEPRECATED = re.compile(
    r"^(?:Endpoint |The command line argument )?'(?P<name>[^']+)' is deprecated\b"
    r"(?:.*?\b[Uu]se '(?P<replacement>[^']+)' instead)?"
)


def parse_deprecation(message: str, base: LineBase) -> LogRecord | None:
    match = _DEPRECATED.match(message)
    if not match:
        return None
    return DeprecationRecord(**base, name=match["name"], replacement=match["replacement"] or "")


ValueFromMatch = Callable[[re.Match[str]], Value]


def _const(value: Value) -> ValueFromMatch:
    return lambda _match: value


def _group(name: str) -> ValueFromMatch:
    return lambda match: parse_value(match[name])[0]


# (pattern, setting, value-from-match) for SGLang's own "I changed your flag" notices
# (server_args.py `_handle_speculative_decoding` and friends); first match wins.
_ADJUST_RULES: tuple[tuple[re.Pattern[str], str, ValueFromMatch], ...] = (
    # upstream: arg_groups/speculative_hook.py: which speculative path (v1, or v2 with the overlap scheduler) runs;
    # SGLANG_ENABLE_SPEC_V2 is the knob. "Overlap scheduler is disabled when spec v2 is off" stays an overlap rule.
    # 0.5.23 has no v1/v2 knob (spec v2 always runs); this warning says the overlap scheduler is off, so v2 runs
    # synchronously. upstream: arg_groups/speculative_hook.py `_handle_eagle_family`.
    (re.compile(r"^Non-overlap \(synchronous\) spec v2 is used\b"), "disable_overlap_schedule", _const(True)),
    (re.compile(r"^Spec v1 is used for "), "SGLANG_ENABLE_SPEC_V2", _const(False)),
    (re.compile(r"\b[Ss]pec v2 is (?:enabled|used)\b"), "SGLANG_ENABLE_SPEC_V2", _const(True)),
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


def parse_adjust(message: str, base: LineBase) -> LogRecord | None:
    for pattern, setting, get_value in _ADJUST_RULES:
        match = pattern.search(message)
        if match:
            name = setting or match.groupdict().get("name") or ""
            return AdjustRecord(**base, setting=name, value=get_value(match))
    return None


ADJUST_HINTS = (  # each `_ADJUST_RULES` pattern contains one of these (lower-cased), so `parse` can skip them cheaply
    "spec v1 is used", "spec v2 is", "is adjusted", "is reset", "is disabled", "is incompatible", "is turned on",
    "forced as chunk cache", "page_size", "overriding", "is set", "is changed", "is forced", "is automatically set",
)
