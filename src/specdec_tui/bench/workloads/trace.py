"""A recorded trace as a workload: each line is one request with its arrival time and lengths, replayed open loop
at the times it arrived (or time-scaled to a rate).

A line is a trace entry when it carries an arrival time: "timestamp" in milliseconds (the Mooncake traces SGLang's
bench_serving replays) or "arrival_s" in seconds. Lengths: "input_len" / "input_length" (tokens of the prompt sent
where the server counts them, /v1/tokenize; else words) and "output_len" / "output_length" (max_tokens). A "prompt"
or "messages" is sent as given; without one the prompt is made up to `input_len`, built from its "hash_ids" blocks
when it has them (entries naming the same blocks share that prefix, as the trace's requests did), else from words
of its own (no accidental shared prefix).
"""

from __future__ import annotations

import math
from typing import Any

from specdec_tui.core.lengths import MAX_LEN, fit_words

TIME_KEYS = ("timestamp", "arrival_s")
BLOCK_WORDS = 32  # words per hash_ids block of a synthesized prompt
_VOCAB = (
    "the of and to in is that for it as with was on be at by this had not are but from or have an they which one "
    "you were her all she there would their we him been has when who will more no if out so said what up its about "
    "into than them can only other new some could time these two may then do first any my now such like our over"
).split()


class TraceError(ValueError):
    """A trace line that cannot be replayed, in words."""


def is_trace_line(obj: dict[str, Any]) -> bool:
    return any(k in obj for k in TIME_KEYS)


def arrival_s(obj: dict[str, Any], where: str) -> float:
    """The line's arrival time in seconds (from the trace's own origin)."""
    key = "timestamp" if "timestamp" in obj else "arrival_s"
    v = obj.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
        raise TraceError(f"{where}: {key} must be a number ≥ 0")
    return v / 1000.0 if key == "timestamp" else float(v)


def length(obj: dict[str, Any], names: tuple[str, str], where: str) -> int | None:
    key = next((k for k in names if k in obj), None)
    if key is None:
        return None
    v = obj[key]
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_LEN:
        raise TraceError(f"{where}: {key} must be a whole number from 1 to {MAX_LEN}")
    return v


def synthetic_prompt(index: int, words: int, hash_ids: object) -> str:
    """`words` words: the entry's hash_ids blocks in order (shared blocks, shared text), else its own words."""
    ids = [h for h in hash_ids if isinstance(h, int) and not isinstance(h, bool)] if isinstance(hash_ids, list) else []
    blocks = ids or [-(index + 1)]  # negative: never one of a trace's own block ids
    text = " ".join(_block(h) for h in blocks)
    return fit_words(text, words) if ids else fit_words(f"request {index}: {text}", words)


def _block(h: int) -> str:
    n = len(_VOCAB)
    return " ".join(_VOCAB[(h * 131 + j * 17 + (h >> 7)) % n] for j in range(BLOCK_WORDS)) + f" b{h}"


def offsets(times: list[float]) -> tuple[float, ...]:
    """Arrival times as offsets from the first arrival, ascending (the lines are sorted by time beforehand)."""
    first = times[0] if times else 0.0
    return tuple(t - first for t in times)


def mean_rate(offs: tuple[float, ...] | list[float]) -> float | None:
    """The trace's own mean arrival rate (requests/s); None for fewer than two arrivals or no time between them."""
    if len(offs) < 2 or offs[-1] <= 0:
        return None
    return (len(offs) - 1) / offs[-1]


def cut_offsets(offs: list[float], requests: int | None, duration_s: float | None) -> list[float]:
    """The part of a (scaled) trace a run was asked for: its arrivals before `duration_s` s, else its first
    `requests` (at least the first arrival either way)."""
    if duration_s:
        return [o for o in offs if o < duration_s] or offs[:1]
    if requests:
        return offs[: max(1, requests)]
    return offs


def cut_words(requests: int | None, duration_s: float | None) -> str:
    """How a trace was cut, as the trial's workload facts keep it."""
    return f"arrivals before {duration_s:g} s" if duration_s else f"first {requests} requests"


def scaled(offs: tuple[float, ...] | list[float], rate: float | None) -> list[float]:
    """The trace's offsets as recorded (`rate` None), or time-scaled so its mean rate is `rate`: the same pattern of
    gaps and bursts, faster or slower."""
    own = mean_rate(offs)
    if rate is None or own is None:
        return list(offs)
    k = own / rate
    return [o * k for o in offs]
