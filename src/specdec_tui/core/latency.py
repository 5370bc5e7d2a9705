"""What a level's throughput costs in latency: which levels queue, and the best level a user would accept.

The peak tok/s of a run usually comes from levels with more requests in flight than the server runs at
once (`max_running_requests`): the rest wait in its queue, so their first token takes seconds. Every
view that names a "best" level (the panel's bench table, the headless tables, compare and the exports)
asks this module, so they agree on which level that is and say the same words about queueing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult, ServerFacts
from specdec_tui.core.session import Trial

DEFAULT_TTFT_LIMIT_S = BenchProfile().ttft_limit_s


def queue_note(max_running_requests: int) -> str:
    """The mark of a queueing level, with the server's own number: "queues: >17 running"."""
    return f"queues: >{max_running_requests} running"


def queue_mark(max_running_requests: int) -> str:
    """The short mark for cells beside a figure: "q>17" (legend: QUEUE_LEGEND)."""
    return f"q>{max_running_requests}"


QUEUE_LEGEND = "q>N: more requests in flight than the server runs at once (N), the rest queue"
BEST_HEADER = "best, TTFT p99 ≤ limit"  # the column of LatencyPick.best_words


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


@dataclass(frozen=True, slots=True)
class LatencyLimit:
    """What a level is judged by: the server's capacity (None: not known) and the profile's TTFT p99 limit."""

    max_running_requests: int | None = None
    ttft_limit_s: float = DEFAULT_TTFT_LIMIT_S

    @classmethod
    def of(cls, facts: ServerFacts | None, profile: BenchProfile | None) -> LatencyLimit:
        return cls(facts.max_running_requests if facts else None,
                   profile.ttft_limit_s if profile else DEFAULT_TTFT_LIMIT_S)

    def queues(self, concurrency: int) -> bool:
        """More requests in flight than the server runs at once: the rest wait in its queue."""
        return self.max_running_requests is not None and concurrency > self.max_running_requests

    def note(self, concurrency: int) -> str | None:
        """"queues: >17 running" for a queueing level, else None."""
        return queue_note(self.max_running_requests) if self.max_running_requests and self.queues(concurrency) else None

    def mark(self, concurrency: int) -> str:
        """"q>17" for a queueing level, else ""."""
        return queue_mark(self.max_running_requests) if self.max_running_requests and self.queues(concurrency) else ""

    def within(self, level: LevelResult) -> bool:
        """TTFT p99 measured and at or under the limit (a level that measured none is not vouched for)."""
        p99 = level.ttft_ms.p99
        return p99 is not None and p99 <= self.ttft_limit_s * 1000

    @property
    def limit_words(self) -> str:
        return f"TTFT p99 ≤ {self.ttft_limit_s:g} s"


@dataclass(frozen=True, slots=True)
class LatencyPick:
    """The best level within the TTFT limit and the peak level, with the words the summaries use."""

    limit: LatencyLimit
    best: LevelResult | None  # highest tok/s among levels within the limit
    peak: LevelResult | None  # highest tok/s of all
    measured: bool = True  # some level has a TTFT p99 (files from before it was measured may have none)
    failed: tuple[int, ...] = ()  # the levels where every request failed: no tok/s was measured there

    def _cost(self, level: LevelResult) -> str:
        parts = ["queueing"] if self.limit.queues(level.concurrency) else []
        if level.ttft_ms.p99 is not None:
            parts.append(f"TTFT p99 {_seconds(level.ttft_ms.p99)}")
        return f" ({', '.join(parts)})" if parts else ""

    def best_words(self) -> str:
        """For a table cell: "402.1 at c=16", or "none ≤ 2 s" when no level stays within the limit."""
        if self.best is None:
            return f"none ≤ {self.limit.ttft_limit_s:g} s" if self.measured else "– (no TTFT p99)"
        return f"{self.best.output_tok_s:,.1f} at c={self.best.concurrency}"

    def summary(self) -> str:
        """"Best within TTFT p99 ≤ 2 s: 402.1 tok/s at c=16; peak 426.2 at c=64 (queueing, TTFT p99 14.1 s)"."""
        peak, best = self.peak, self.best
        if peak is None:
            if self.failed:
                return f"Every request failed at c={','.join(map(str, self.failed))}: no tok/s was measured."
            return "No level finished."
        return self._peak_words(peak, best) + (f"; every request failed at c={','.join(map(str, self.failed))}"
                                               if self.failed else "")

    def _peak_words(self, peak: LevelResult, best: LevelResult | None) -> str:
        if not self.measured:
            return f"Peak {peak.output_tok_s:,.1f} tok/s at c={peak.concurrency}{self._cost(peak)}; TTFT p99 not measured"
        if best is None:
            return (f"No level within {self.limit.limit_words}; "
                    f"peak {peak.output_tok_s:,.1f} tok/s at c={peak.concurrency}{self._cost(peak)}")
        head = f"Best within {self.limit.limit_words}: {best.output_tok_s:,.1f} tok/s at c={best.concurrency}"
        if best is peak:
            return head + " (also the peak)"
        return head + f"; peak {peak.output_tok_s:,.1f} at c={peak.concurrency}{self._cost(peak)}"


def pick(levels: Iterable[LevelResult], limit: LatencyLimit) -> LatencyPick:
    """The one choice of "best level" every view shows (ties go to the lower concurrency)."""
    ordered = sorted(levels, key=lambda lv: lv.concurrency)
    failed = tuple(lv.concurrency for lv in ordered if not lv.measured)
    served = [lv for lv in ordered if lv.concurrency not in failed]  # "0.0 tok/s" there would be no measurement
    peak = max(served, key=lambda lv: lv.output_tok_s, default=None)
    best = max((lv for lv in served if limit.within(lv)), key=lambda lv: lv.output_tok_s, default=None)
    return LatencyPick(limit, best, peak, measured=any(lv.ttft_ms.p99 is not None for lv in served), failed=failed)


def trial_limit(trial: Trial) -> LatencyLimit:
    """A trial's own limit: its server's capacity and the profile it really ran with."""
    return LatencyLimit.of(trial.facts, trial.profile)


def trial_pick(trial: Trial) -> LatencyPick:
    return pick(trial.levels, trial_limit(trial))
