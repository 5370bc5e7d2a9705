"""Rolling state folded from a stream of SGLang log records: the numbers the health pane shows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
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

__all__ = ["LogStats", "RankFigures", "spec_accept_rate"]


def spec_accept_rate(accept_len: float, num_draft_tokens: int) -> float:
    """Upstream's accept rate: correct drafts over drafts proposed, (accept len - 1) / (draft tokens - 1).

    upstream: python/sglang/srt/managers/scheduler_components/metrics_reporter.py `report_decode_stats` (the bonus
    token counts in accept len but was never a draft)."""
    drafts = num_draft_tokens - 1
    return (accept_len - 1.0) / drafts if drafts > 0 else 0.0


# What a decode batch's line tells, kept as the latest live figures (a prefill line tells the last three).
DECODE_FIGURES = ("accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req", "token_usage")
PREFILL_FIGURES = ("running_req", "queue_req", "token_usage")
# A DP rank whose last batch line is this much older than the newest one has gone idle: its figures stop counting
# in the sums (SGLang logs a batch only while the rank serves, so its last line would otherwise count forever).
RANK_IDLE_S = 10.0


@dataclass(slots=True)
class RankFigures:
    """One data-parallel rank's latest batch figures. With attention DP (or DP replicas) every rank's scheduler
    logs its own decode line (`[… DP1 TP4] Decode batch, …`); each tells its own rank only.
    upstream: observability/metrics_collector.py `is_stats_logging_rank` (attn_tp_rank 0 of every DP rank)."""

    accept_len: float | None = None
    accept_rate: float | None = None
    gen_throughput: float | None = None
    running_req: int | None = None
    queue_req: int | None = None
    token_usage: float | None = None
    live_at: datetime | None = None


def _sum(values: list[int | float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _accept(ranks: list[RankFigures]) -> tuple[float | None, float | None]:
    """The whole server's accept len and rate from its ranks': tokens over verify forwards, each rank's forwards
    being its throughput over its accept len (the ranks log over the same interval)."""
    forwards = [(f, f.gen_throughput / f.accept_len) for f in ranks
                if f.accept_len and f.gen_throughput is not None and f.gen_throughput > 0]
    total = sum(n for _, n in forwards)
    if total <= 0:
        lens = [f.accept_len for f in ranks if f.accept_len is not None]
        rates = [f.accept_rate for f in ranks if f.accept_rate is not None]
        return (sum(lens) / len(lens) if lens else None), (sum(rates) / len(rates) if rates else None)
    accept_len = sum(f.gen_throughput or 0.0 for f, _ in forwards) / total
    rated = [(f.accept_rate, n) for f, n in forwards if f.accept_rate is not None]
    weight = sum(n for _, n in rated)
    return accept_len, (sum(r * n for r, n in rated) / weight if weight else None)


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
    ranks: dict[int, RankFigures] = field(default_factory=dict)  # by DP rank, when the lines carry one
    decode_lines: int = 0
    error_lines: int = 0
    _restarted: bool = False  # a start began since last_error was set: the next error replaces it

    def _forget_live(self) -> None:
        for name in (*DECODE_FIGURES, "live_at"):
            setattr(self, name, None)
        self.ranks.clear()

    def _fold_rank(
        self, rank: int, record: DecodeRecord | PrefillRecord, names: tuple[str, ...], derived_rate: float | None = None
    ) -> None:
        """One rank's line updates that rank; the live figures become the server's: throughput, requests and
        queues summed over the ranks still serving, token usage the fullest rank's pool, accept len and rate
        over all their verify forwards."""
        figures = self.ranks.setdefault(rank, RankFigures())
        figures.live_at = record.timestamp or figures.live_at
        for name in names:
            value = getattr(record, name)
            if value is not None:
                setattr(figures, name, value)
        figures.accept_rate = derived_rate if derived_rate is not None else figures.accept_rate
        newest = record.timestamp
        serving = [f for f in self.ranks.values()
                   if newest is None or f.live_at is None or (newest - f.live_at).total_seconds() <= RANK_IDLE_S]
        gen = _sum([f.gen_throughput for f in serving])
        running, queue = _sum([f.running_req for f in serving]), _sum([f.queue_req for f in serving])
        self.gen_throughput = gen if gen is not None else self.gen_throughput
        self.running_req = int(running) if running is not None else self.running_req
        self.queue_req = int(queue) if queue is not None else self.queue_req
        usages = [f.token_usage for f in serving if f.token_usage is not None]
        self.token_usage = max(usages) if usages else self.token_usage
        accept_len, accept_rate = _accept(serving)
        self.accept_len = accept_len if accept_len is not None else self.accept_len
        self.accept_rate = accept_rate if accept_rate is not None else self.accept_rate

    def per_rank(self, name: str) -> list[tuple[int, float]]:
        """(DP rank, figure) of every rank that logged `name` (one of DECODE_FIGURES), by rank; empty when the
        lines carry no DP rank or only one."""
        if len(self.ranks) < 2:
            return []
        return [(rank, float(value)) for rank, figures in sorted(self.ranks.items())
                if (value := getattr(figures, name)) is not None]

    def update(self, record: LogRecord) -> None:
        """Folds one record in, by its kind (`_FOLDERS`). A `Load weight begin` means a (re)start: old readiness
        is void."""
        if record.timestamp is not None:
            self.last_timestamp = record.timestamp
        folder = _FOLDERS.get(type(record))
        if folder is None:
            folder = _FOLDERS[type(record)] = next(
                (_FOLDERS[kind] for kind in type(record).__mro__ if kind in _FOLDERS), LogStats._ignore)
        folder(self, record)

    def _ignore(self, record: LogRecord) -> None:
        """Lines that change no figure (access log, text, deprecations)."""

    def _fold_decode(self, record: LogRecord) -> None:
        assert isinstance(record, DecodeRecord)
        self.decode_lines += 1
        self.live_at = record.timestamp or self.live_at
        derived_rate = None
        if record.accept_len is not None and record.accept_rate is None and self.num_draft_tokens:
            derived_rate = spec_accept_rate(record.accept_len, self.num_draft_tokens)  # older lines lack it
        if (rank := record.tags.get("DP")) is not None:
            self._fold_rank(rank, record, DECODE_FIGURES, derived_rate)
            return
        self._take(record, DECODE_FIGURES)
        self.accept_rate = derived_rate if derived_rate is not None else self.accept_rate

    def _fold_prefill(self, record: LogRecord) -> None:
        assert isinstance(record, PrefillRecord)
        self.live_at = record.timestamp or self.live_at
        if (rank := record.tags.get("DP")) is not None:
            self._fold_rank(rank, record, PREFILL_FIGURES)
        else:
            self._take(record, PREFILL_FIGURES)

    def _take(self, record: DecodeRecord | PrefillRecord, names: tuple[str, ...]) -> None:
        """The figures the line carries replace the server's (a line without DP rank speaks for all of it)."""
        for name in names:
            value = getattr(record, name)
            if value is not None:
                setattr(self, name, value)

    def _fold_startup_summary(self, record: LogRecord) -> None:
        assert isinstance(record, StartupSummaryRecord)
        self.phase = "starting the HTTP server"
        self.max_running_requests = record.max_running_requests or self.max_running_requests
        self.max_total_num_tokens = record.max_total_num_tokens or self.max_total_num_tokens
        self.context_len = record.context_len or self.context_len

    def _fold_kv_cache(self, record: LogRecord) -> None:
        assert isinstance(record, KVCacheRecord)
        if record.pool.upper() == "KV":
            self.phase = "allocating the KV cache"
            self.kv_cache_tokens = record.tokens

    def _fold_server_args(self, record: LogRecord) -> None:
        assert isinstance(record, ServerArgsRecord)
        self.num_draft_tokens = record.speculative_num_draft_tokens

    def _fold_concurrency_limit(self, record: LogRecord) -> None:
        assert isinstance(record, ConcurrencyLimitRecord)
        self.concurrency_limit = record
        if isinstance(record.value, int):
            self.max_running_requests = record.value
        if record.reduced:
            self.adjustments.append(record)

    def _fold_load_weight(self, record: LogRecord) -> None:
        assert isinstance(record, LoadWeightRecord)
        if record.phase == "end":
            self.phase = "weights loaded"
        elif record.phase == "begin":
            self.phase = "loading weights"
            self.ready = False
            self._restarted = True
            self.last_error = None  # the stopped server's: a fresh start showed it in red as if it were its own
            self._forget_live()  # the server that logged them has stopped: none of them is this start's
            self.concurrency_limit = None  # the new start resolves it again

    def _fold_cuda_graph(self, record: LogRecord) -> None:
        assert isinstance(record, CudaGraphRecord)
        graphs = record.graph.replace("cuda", "CUDA") + "s"
        self.phase = f"capturing {graphs}" if record.phase == "begin" else f"{graphs} captured"

    def _fold_ready(self, record: LogRecord) -> None:
        self.phase = "ready"
        self.ready = True

    def _fold_error(self, record: LogRecord) -> None:
        assert isinstance(record, ErrorRecord)
        self.error_lines += 1
        if self.last_error is None or self._restarted or cause_rank(record) < cause_rank(self.last_error):
            self.last_error = record
        self._restarted = False

    def _fold_adjust(self, record: LogRecord) -> None:
        assert isinstance(record, AdjustRecord)
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


# Which method folds a record of each kind in (`LogStats.update`); a kind not named here is looked up by its bases
# once, then cached. A table, not a ladder of isinstance: one lookup per line on the journal's hot path.
_FOLDERS: dict[type[LogRecord], Callable[[LogStats, LogRecord], None]] = {
    DecodeRecord: LogStats._fold_decode, PrefillRecord: LogStats._fold_prefill,
    StartupSummaryRecord: LogStats._fold_startup_summary, KVCacheRecord: LogStats._fold_kv_cache,
    ServerArgsRecord: LogStats._fold_server_args, ConcurrencyLimitRecord: LogStats._fold_concurrency_limit,
    LoadWeightRecord: LogStats._fold_load_weight, CudaGraphRecord: LogStats._fold_cuda_graph,
    ReadyRecord: LogStats._fold_ready, ErrorRecord: LogStats._fold_error, AdjustRecord: LogStats._fold_adjust,
}
