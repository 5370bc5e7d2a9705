"""Rolling state folded from a stream of SGLang log records: the numbers the health pane shows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from specdec_tui.core.sglang.records import (
    AdjustRecord,
    ConcurrencyLimitRecord,
    CudaGraphRecord,
    DecodeRecord,
    ErrorRecord,
    KVCacheRecord,
    LoadWeightRecord,
    LogRecord,
    PrefillRecord,
    ReadyRecord,
    ServerArgsRecord,
    StartupSummaryRecord,
    cause_rank,
)

__all__ = ["LogStats", "spec_accept_rate"]


def spec_accept_rate(accept_len: float, num_draft_tokens: int) -> float:
    """Upstream's accept rate: correct drafts over drafts proposed, (accept len - 1) / (draft tokens - 1).

    upstream: python/sglang/srt/managers/scheduler_components/metrics_reporter.py `report_decode_stats` (the bonus
    token counts in accept len but was never a draft)."""
    drafts = num_draft_tokens - 1
    return (accept_len - 1.0) / drafts if drafts > 0 else 0.0


# What a decode batch's line tells, kept as the latest live figures (a prefill line tells the last three).
DECODE_FIGURES = ("accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req", "token_usage")


@dataclass(slots=True)
class LogStats:
    """The latest numbers a stream of records has shown: what the health pane displays."""

    accept_len: float | None = None
    accept_rate: float | None = None
    gen_throughput: float | None = None
    running_req: int | None = None
    queue_req: int | None = None
    token_usage: float | None = None
    max_running_requests: int | None = None
    concurrency_limit: ConcurrencyLimitRecord | None = None  # what bound max_running_requests, since the last start
    num_draft_tokens: int | None = None  # from the start's server_args line
    max_total_num_tokens: int | None = None
    context_len: int | None = None
    kv_cache_tokens: int | None = None
    ready: bool = False
    phase: str = ""  # the start-up's latest step in words ("loading weights", "capturing CUDA graphs", "ready")
    last_error: ErrorRecord | None = None  # the most telling error since the server last started
    last_timestamp: datetime | None = None
    live_at: datetime | None = None  # when the last decode or prefill batch was logged: the live figures' age
    adjustments: list[AdjustRecord] = field(default_factory=list)
    decode_lines: int = 0
    error_lines: int = 0
    _restarted: bool = False  # a start began since last_error was set: the next error replaces it

    def _forget_live(self) -> None:
        for name in (*DECODE_FIGURES, "live_at"):
            setattr(self, name, None)

    def update(self, record: LogRecord) -> None:
        """Folds one record in. A `Load weight begin` means a (re)start: old readiness is void."""
        if record.timestamp is not None:
            self.last_timestamp = record.timestamp
        if isinstance(record, DecodeRecord):
            self.decode_lines += 1
            self.live_at = record.timestamp or self.live_at
            for name in DECODE_FIGURES:
                value = getattr(record, name)
                if value is not None:
                    setattr(self, name, value)
            if record.accept_len is not None and record.accept_rate is None and self.num_draft_tokens:
                self.accept_rate = spec_accept_rate(record.accept_len, self.num_draft_tokens)  # older lines lack it
        elif isinstance(record, PrefillRecord):
            self.live_at = record.timestamp or self.live_at
            for name in ("running_req", "queue_req", "token_usage"):
                value = getattr(record, name)
                if value is not None:
                    setattr(self, name, value)
        elif isinstance(record, StartupSummaryRecord):
            self.phase = "starting the HTTP server"
            self.max_running_requests = record.max_running_requests or self.max_running_requests
            self.max_total_num_tokens = record.max_total_num_tokens or self.max_total_num_tokens
            self.context_len = record.context_len or self.context_len
        elif isinstance(record, KVCacheRecord) and record.pool.upper() == "KV":
            self.phase = "allocating the KV cache"
            self.kv_cache_tokens = record.tokens
        elif isinstance(record, ServerArgsRecord):
            self.num_draft_tokens = record.speculative_num_draft_tokens
        elif isinstance(record, ConcurrencyLimitRecord):
            self.concurrency_limit = record
            if isinstance(record.value, int):
                self.max_running_requests = record.value
            if record.reduced:
                self.adjustments.append(record)
        elif isinstance(record, LoadWeightRecord) and record.phase == "end":
            self.phase = "weights loaded"
        elif isinstance(record, CudaGraphRecord):
            graphs = record.graph.replace("cuda", "CUDA") + "s"
            self.phase = f"capturing {graphs}" if record.phase == "begin" else f"{graphs} captured"
        elif isinstance(record, LoadWeightRecord) and record.phase == "begin":
            self.phase = "loading weights"
            self.ready = False
            self._restarted = True
            self._forget_live()  # the server that logged them has stopped: none of them is this start's
            self.concurrency_limit = None  # the new start resolves it again
        elif isinstance(record, ReadyRecord):
            self.phase = "ready"
            self.ready = True
        elif isinstance(record, ErrorRecord):
            self.error_lines += 1
            if self.last_error is None or self._restarted or cause_rank(record) < cause_rank(self.last_error):
                self.last_error = record
            self._restarted = False
        elif isinstance(record, AdjustRecord):
            self.adjustments.append(record)

    def max_running_bound(self, value: int | None) -> str:
        """What bound `value` in words ("mamba state"), when the journal's concurrency line resolved to it; else ""."""
        limit = self.concurrency_limit
        if limit is None or value is None or limit.value != value:
            return ""
        return limit.bound_words

    def feed(self, lines: Iterable[str]) -> LogStats:
        from specdec_tui.core.sglang.parse import parse_line  # the regex tables: not for a panel that reads no journal yet

        for line in lines:
            self.update(parse_line(line))
        return self

    @classmethod
    def from_records(cls, records: Iterable[LogRecord]) -> LogStats:
        stats = cls()
        for record in records:
            stats.update(record)
        return stats
