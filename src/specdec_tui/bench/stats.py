"""Turns one level's raw request records into the `LevelResult` the operator reads.

The level's acceptance is the server's own when it gave one (its counters over the level, else its
per-request details), else the stream's tokens per chunk, labelled an estimate (see server_stats).

Per-request figures come from measured, successful requests. The aggregate rate counts every token
(warm-up requests included: they load the server just the same) that arrived inside the measured
window, divided by the window length; achieved concurrency is the time-average of requests in flight
inside that window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from specdec_tui.bench.client import RequestRecord
from specdec_tui.bench.server_stats import accept_from_details, level_acceptance
from specdec_tui.bench.usage_check import BAD_USAGE
from specdec_tui.bench.validity import content_warnings
from specdec_tui.core.metrics import (
    NS_PER_S,
    dist,
    overlap_ns,
    request_stats,
    resolve_chunk_tokens,
    tokens_in_window,
)
from specdec_tui.core.results import AcceptSource, LevelResult
from specdec_tui.core.slo import RequestLatency, SloMetric, SloTarget, level_meets, meets

STREAM_ACCEPT_WARNING = (
    "acceptance estimated from the stream (tokens per chunk): the server gave neither its counters "
    "(--enable-metrics) nor per-request speculative details"
)
SAMPLES_KEPT = 256  # per-request tok/s kept per level for confidence intervals (a bounded session file)
ESTIMATED_WARNING = (
    "the server sent no usage in the stream: tokens were counted as one per chunk, which undercounts "
    "under speculative decoding (several tokens per chunk); figures are estimates"
)


@dataclass(slots=True)
class LevelInputs:
    """Everything besides the records that shapes a level's result."""

    concurrency: int
    duration_s: float | None = None  # the level ran for this long (window = duration), else by count
    temperature: float = 0.0
    ignore_eos: bool = False
    repetitive_prompts: bool = False
    accept_from_counters: float | None = None  # the server's counters over exactly this level, if it has them
    server_avg_accept_length: float | None = None  # /server_info's lifetime mean after the level, shown beside it
    warnings: list[str] = field(default_factory=list)
    slo: tuple[SloTarget, ...] = ()  # goodput counts the measured requests meeting every one


def measured_window(records: Sequence[RequestRecord], duration_s: float | None) -> tuple[int, int] | None:
    measured = [r for r in records if r.measured and r.start_ns]
    if not measured:
        return None
    w0 = min(r.start_ns for r in measured)
    last_end = max(r.end_ns for r in measured)
    if duration_s is not None:
        return w0, min(w0 + int(duration_s * NS_PER_S), max(last_end, w0))
    return w0, last_end


@dataclass
class _Samples:
    """The ok requests' figures, folded in one pass (`_fold_requests`)."""

    ttft: list[float] = field(default_factory=list)
    e2e: list[float] = field(default_factory=list)
    tpot: list[float] = field(default_factory=list)
    rate: list[float] = field(default_factory=list)
    itl: list[float] = field(default_factory=list)
    chunk_itl: list[float] = field(default_factory=list)
    output_tokens: int = 0
    decode_tokens: int = 0
    decode_chunks: int = 0
    good: int = 0
    good_tokens: int = 0


def build_level_result(records: Sequence[RequestRecord], inp: LevelInputs) -> LevelResult:
    """One level's result from its requests: counts, latency distributions, acceptance, the measured window's
    throughput, goodput against the SLO, and the warnings that qualify the figures."""
    measured = [r for r in records if r.measured]
    ok = [r for r in measured if r.ok]
    failed = [r for r in measured if not r.ok]
    res = LevelResult(concurrency=inp.concurrency, requests=len(measured), errors=len(failed),
                      server_avg_accept_length=inp.server_avg_accept_length)
    res.error_kinds = dict(Counter(r.error or "unknown" for r in failed))
    res.finish_reasons = dict(Counter(r.finish_reason or "none" for r in ok))
    resolved, res.estimated = _resolve_tokens(records)
    samples = _fold_requests(ok, resolved, inp)
    res.output_tokens = samples.output_tokens
    res.ttft_ms, res.e2e_ms, res.tpot_ms = dist(samples.ttft), dist(samples.e2e), dist(samples.tpot)
    res.per_request_tok_s, res.itl_ms, res.chunk_itl_ms = dist(samples.rate), dist(samples.itl), dist(samples.chunk_itl)
    stride = -(-len(samples.rate) // SAMPLES_KEPT) or 1
    res.tok_s_samples = [round(x, 2) for x in samples.rate[::stride]]
    if samples.decode_chunks and not res.estimated:
        res.accept_length_client = samples.decode_tokens / samples.decode_chunks
    # warm-ups included, as in the counters' window: they ran on the same server under the same load
    details = accept_from_details(counts for r in records if r.ok and (counts := r.spec_counts) is not None)
    acceptance = level_acceptance(inp.accept_from_counters, details, res.accept_length_client)
    if acceptance.source is not None:
        res.accept_length_source = acceptance.source.value
        if acceptance.source is not AcceptSource.STREAM_ESTIMATE:
            res.accept_length_server = acceptance.value
    _apply_window(res, records, resolved, inp.duration_s)
    if inp.slo:
        _apply_slo(res, samples, inp.slo)
    res.warnings = [*inp.warnings, *_level_warnings(records, failed, ok, inp, res.estimated, acceptance.source, details)]
    res.round_as_stored()  # shown live as the session file will show it
    return res


def _resolve_tokens(records: Sequence[RequestRecord]) -> tuple[dict[int, list[int]], bool]:
    """Each ok request's tokens per chunk (by `id` of its record), and whether any measured one was estimated."""
    resolved: dict[int, list[int]] = {}
    estimated = False
    for r in records:
        if r.ok:
            ks, est = resolve_chunk_tokens(r.deltas, r.usage_total)
            resolved[id(r)] = ks
            estimated = estimated or (est and r.measured)
    return resolved, estimated


def _fold_requests(ok: Sequence[RequestRecord], resolved: dict[int, list[int]], inp: LevelInputs) -> _Samples:
    samples = _Samples()
    for r in ok:
        st = request_stats(r.start_ns, r.first_content_ns, r.end_ns, r.times, resolved[id(r)])
        samples.output_tokens += st.tokens
        if inp.slo and meets(RequestLatency(st.ttft_ms, st.e2e_ms, st.itl_ms, st.tokens), inp.slo):
            samples.good, samples.good_tokens = samples.good + 1, samples.good_tokens + st.tokens
        if st.ttft_ms is not None:
            samples.ttft.append(st.ttft_ms)
        if st.e2e_ms is not None:
            samples.e2e.append(st.e2e_ms)
        if st.decode_tok_s is not None and st.tpot_ms is not None:  # set together by request_stats
            samples.rate.append(st.decode_tok_s)
            samples.tpot.append(st.tpot_ms)
        samples.itl.extend(st.itl_ms)
        samples.chunk_itl.extend(st.chunk_itl_ms)
        if st.chunks >= 2:
            samples.decode_tokens += st.tokens - st.first_chunk_tokens
            samples.decode_chunks += st.chunks - 1
    return samples


def _apply_window(res: LevelResult, records: Sequence[RequestRecord], resolved: dict[int, list[int]],
                  duration_s: float | None) -> None:
    """Throughput and achieved concurrency over the measured window (tokens that arrived inside it only)."""
    window = measured_window(records, duration_s)
    if window is None or window[1] <= window[0]:
        return
    w0, w1 = window
    span = w1 - w0
    res.duration_s = span / NS_PER_S
    in_window = sum(tokens_in_window(r.times, resolved[id(r)], w0, w1) for r in records if r.ok)
    res.output_tok_s = in_window * NS_PER_S / span
    busy = sum(overlap_ns(r.start_ns, r.end_ns, w0, w1) for r in records if r.start_ns)
    res.achieved_concurrency = busy / span


def _apply_slo(res: LevelResult, samples: _Samples, slo: tuple[SloTarget, ...]) -> None:
    res.good_requests = samples.good
    if res.duration_s > 0:
        res.goodput_req_s, res.goodput_tok_s = samples.good / res.duration_s, samples.good_tokens / res.duration_s
    res.slo_missed = level_meets({SloMetric.TTFT: samples.ttft, SloMetric.E2E: samples.e2e, SloMetric.ITL: samples.itl,
                                  SloMetric.TPOT: samples.tpot}, slo)


def _level_warnings(records: Sequence[RequestRecord], failed: Sequence[RequestRecord], ok: Sequence[RequestRecord],
                    inp: LevelInputs, estimated: bool, source: AcceptSource | None, details: float | None) -> list[str]:
    """What qualifies the level's figures, in the order a reader needs it."""
    warnings: list[str] = []
    if lies := [r for r in failed if r.error == BAD_USAGE]:
        warnings.append(f"{len(lies)} request(s) failed: the server's usage contradicts its stream "
                        f"({lies[0].error_detail}); their tokens are not counted")
    if estimated:
        warnings.append(ESTIMATED_WARNING)
    if source is AcceptSource.STREAM_ESTIMATE:
        warnings.append(STREAM_ACCEPT_WARNING)
    if inp.accept_from_counters is not None and details is not None and abs(inp.accept_from_counters / details - 1) > 0.05:
        warnings.append(
            f"the server's counters give accept length {inp.accept_from_counters:.2f} over this level but its "
            f"details for the benchmark's own requests give {details:.2f}: other traffic reached the server"
        )
    warmup_errors = Counter(r.error for r in records if not r.measured and not r.ok and r.error != "cancelled")
    if warmup_errors:
        kinds = ", ".join(f"{k} ×{n}" for k, n in warmup_errors.items())
        warnings.append(f"warm-up requests failed ({kinds}); they are not in the error count")
    texts = ["".join(r.text_parts) for r in ok]
    warnings.extend(content_warnings(inp.temperature, inp.ignore_eos, inp.repetitive_prompts, texts))
    return warnings
