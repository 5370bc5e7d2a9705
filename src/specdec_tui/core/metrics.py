"""Pure statistics for the benchmark: percentiles, `Dist` summaries and one request's timeline maths.

Kept free of IO and asyncio so the exact definitions (TTFT, decode rate, ITL split over multi-token
chunks) can be tested on hand-made timelines. Times are integer nanoseconds from one monotonic clock.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from specdec_tui.core.results import Dist

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default) of already sorted values; q in [0, 100]."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("percentile of no samples")
    if n == 1:
        return float(sorted_values[0])
    pos = (n - 1) * (q / 100.0)
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return float(sorted_values[lo]) + (float(sorted_values[hi]) - float(sorted_values[lo])) * frac


def dist(values: Iterable[float]) -> Dist:
    """mean/p50/p90/p99 of the samples; an empty Dist (all None) when there are none."""
    s = sorted(values)
    if not s:
        return Dist()
    return Dist(
        mean=math.fsum(s) / len(s),
        p50=percentile(s, 50),
        p90=percentile(s, 90),
        p99=percentile(s, 99),
    )


def resolve_chunk_tokens(ks: Sequence[int], usage_total: int | None) -> tuple[list[int], bool]:
    """Token count per content chunk, and whether it is estimated.

    `ks[i]` is the change in the server's cumulative `completion_tokens` at chunk i, or -1 when that
    chunk carried no usage. With per-chunk usage everything is exact. With only a final usage total,
    the total is exact and the tokens not accounted for are spread evenly over the chunks without usage.
    With no usage at all each content chunk counts as one token and the result is marked estimated
    (which undercounts under speculative decoding, where one chunk carries several tokens).
    """
    unknown = [i for i, k in enumerate(ks) if k < 0]
    if not unknown:
        return list(ks), False
    out = [k if k >= 0 else 0 for k in ks]
    if usage_total is None:
        for i in unknown:
            out[i] = 1
        return out, True
    remainder = max(0, usage_total - sum(out))
    base, extra = divmod(remainder, len(unknown))
    for j, i in enumerate(unknown):
        out[i] = base + (1 if j < extra else 0)
    return out, False


@dataclass(slots=True)
class RequestStats:
    """What one finished request contributes to its level (milliseconds and tokens/s)."""

    tokens: int
    chunks: int  # content chunks that carried at least one token
    first_chunk_tokens: int
    ttft_ms: float | None
    e2e_ms: float | None
    decode_tok_s: float | None  # tokens after the first chunk / (t_last - t_first)
    tpot_ms: float | None
    itl_ms: list[float] = field(default_factory=list)  # one sample per token after the first chunk
    chunk_itl_ms: list[float] = field(default_factory=list)  # one sample per gap between chunks


def request_stats(
    start_ns: int,
    first_content_ns: int | None,
    end_ns: int | None,
    times_ns: Sequence[int],
    tokens: Sequence[int],
) -> RequestStats:
    """Timeline maths for one request.

    `times_ns`/`tokens` are the content chunks (arrival time, tokens carried); chunks carrying no token
    are skipped, so a gap that produced only held-back text is merged into the next token's gap.
    Decode rate counts the tokens that arrived after the first chunk: when the first chunk already
    carries k > 1 tokens, those were produced before t_first and are excluded ((n - k) rather than
    (n - 1), identical when k = 1). Each later chunk's gap is split evenly over its tokens for ITL.
    """
    tl = [(t, k) for t, k in zip(times_ns, tokens, strict=False) if k > 0]
    n = sum(k for _, k in tl)
    if first_content_ns is None and tl:
        first_content_ns = tl[0][0]
    if end_ns is None and tl:
        end_ns = tl[-1][0]
    ttft = (first_content_ns - start_ns) / NS_PER_MS if first_content_ns is not None else None
    e2e = (end_ns - start_ns) / NS_PER_MS if end_ns is not None else None
    k0 = tl[0][1] if tl else 0
    decode = tpot = None
    itl: list[float] = []
    chunk_itl: list[float] = []
    if len(tl) >= 2:
        span_ns = tl[-1][0] - tl[0][0]
        after_first = n - k0
        if span_ns > 0 and after_first > 0:
            decode = after_first * NS_PER_S / span_ns
            tpot = span_ns / after_first / NS_PER_MS
        prev = tl[0][0]
        for t, k in tl[1:]:
            gap_ms = (t - prev) / NS_PER_MS
            chunk_itl.append(gap_ms)
            per = gap_ms / k
            itl.extend([per] * k)
            prev = t
    return RequestStats(
        tokens=n,
        chunks=len(tl),
        first_chunk_tokens=k0,
        ttft_ms=ttft,
        e2e_ms=e2e,
        decode_tok_s=decode,
        tpot_ms=tpot,
        itl_ms=itl,
        chunk_itl_ms=chunk_itl,
    )


def tokens_in_window(times_ns: Sequence[int], tokens: Sequence[int], w0_ns: int, w1_ns: int) -> int:
    """Tokens whose chunk arrived inside [w0, w1] (times sorted ascending)."""
    lo = bisect_left(times_ns, w0_ns)
    hi = bisect_right(times_ns, w1_ns)
    return sum(tokens[lo:hi]) if hi > lo else 0


def overlap_ns(a0: int, a1: int, w0: int, w1: int) -> int:
    """Length of the overlap of [a0, a1] with the window [w0, w1]; 0 when they do not meet."""
    return max(0, min(a1, w1) - max(a0, w0))
