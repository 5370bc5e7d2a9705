"""Rich renderers shared by the headless commands: levels of one run, all trials of a session, two trials
side by side, a sweep's curves and a replay's drift. They build `rich` objects and print nothing, so
`session show`, `sweep`, `bench` and `demo` show the same numbers the same way.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from specdec_tui.cli.safe_console import SafeConsole
from specdec_tui.core.compare import (
    TrialComparison,
    best_of,
    concurrencies_of,
    shown_label,
    summary_rows,
)
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.latency import BEST_HEADER, QUEUE_LEGEND, LatencyLimit, pick, queue_mark, trial_limit, trial_pick
from specdec_tui.core.number_format import fmt_delta, fmt_fixed
from specdec_tui.core.profile_words import Profiled, distinct_profiles, short_settings, told_apart
from specdec_tui.core.results import SERVER_AVG_LABEL, LevelResult, accept_source_legend
from specdec_tui.core.session import Session
from specdec_tui.core.session_index import TrialHeadline
from specdec_tui.core.status_tone import Tone, rich_style, status_tone
from specdec_tui.core.sweep_rules import CurvePoint, SweepChoice, spread_words

if TYPE_CHECKING:
    from specdec_tui.loop.replay import ReplayOutcome


def make_console(*, stderr: bool = False) -> Console:
    """A console that does not squeeze tables to 80 columns when the output is a pipe or a file, and writes no
    escape code or control character that came in the text it prints (SafeConsole)."""
    stream = sys.stderr if stderr else sys.stdout
    wide = None if stream.isatty() else 160
    return SafeConsole(file=stream, width=wide, soft_wrap=False)


def status_text(status: str) -> str:
    return f"[{rich_style(status_tone(status))}]{status}[/]"


def accept_cell(lv: LevelResult) -> str:
    """The level's acceptance and, in short, its source (ctr: server counters, req: per-request details,
    est: estimated from the stream)."""
    source = lv.accept_source
    return fmt_fixed(lv.accept_length, 2) + (f" {source.short}" if source is not None else "")


def levels_table(levels: Sequence[LevelResult], title: str | None = None, limit: LatencyLimit | None = None) -> Table:
    """One benchmark run, one row per concurrency; levels above the server's max running requests say
    they queue, and the caption names the best level within the TTFT limit (core.latency)."""
    limit = limit or LatencyLimit()
    caption = [c for c in (pick(levels, limit).summary() if levels else "", accept_source_legend(levels)) if c]
    table = Table(title=title, caption="\n".join(caption) or None)
    for name in ("conc", "reqs", "err", "out tok/s", "req tok/s p50", "TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms",
                 "ITL p50 ms", "accept", SERVER_AVG_LABEL, "queueing"):
        table.add_column(name, justify="right" if name != "queueing" else "left")
    for lv in levels:
        table.add_row(str(lv.concurrency), str(lv.requests), f"[red]{lv.errors}[/]" if lv.errors else "0",
                      fmt_fixed(lv.output_tok_s), fmt_fixed(lv.per_request_tok_s.p50), fmt_fixed(lv.ttft_ms.p50, 0),
                      fmt_fixed(lv.ttft_ms.p99, 0), fmt_fixed(lv.tpot_ms.p50, 2), fmt_fixed(lv.itl_ms.p50, 2), accept_cell(lv),
                      fmt_fixed(lv.server_avg_accept_length, 2),
                      f"[yellow]{note}[/]" if (note := limit.note(lv.concurrency)) else "")
    return table


def session_table(session: Session, title: str | None = None) -> Table:
    """Every trial: label, status, the settings it ran with, capacity, acceptance, output tok/s per concurrency
    (q>N where requests queued) and its best level within its TTFT limit."""
    cs = concurrencies_of(session)
    queued = False
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("trial")
    table.add_column("status")
    table.add_column("ran with")
    table.add_column("max run req", justify="right")
    table.add_column("accept len", justify="right")
    for c in cs:
        table.add_column(f"c={c} tok/s", justify="right")
    table.add_column(BEST_HEADER, justify="right")
    table.add_column("errors", justify="right")
    for row in summary_rows(session):
        trial = row.trial
        limit = trial_limit(trial)
        label = shown_label(trial) + (f" (replay of {trial.replay_of})" if trial.replay_of else "")
        cells = []
        for c in cs:
            mark = limit.mark(c) if row.tok_s[c] is not None else ""
            queued = queued or bool(mark)
            cells.append(fmt_fixed(row.tok_s[c]) + (f" [yellow]{mark}[/]" if mark else ""))
        table.add_row(str(trial.id), escape(label), status_text(trial.status), escape(short_settings(trial.profile)),
                      str(row.max_running_requests or "–"), fmt_fixed(row.accept_length, 2), *cells,
                      trial_pick(trial).best_words(), str(row.errors))
    if queued:
        table.caption = QUEUE_LEGEND
    return table


def settings_lines(trials: Sequence[Profiled]) -> list[str]:
    """When trials ran different settings, which trials ran which (the header cannot name one profile)."""
    profiles = distinct_profiles(trials)
    if len(profiles) < 2:
        return []
    return [f"{_trials_word(trials, p)}: {told_apart(p, profiles)}" for p in profiles]


def _trials_word(trials: Sequence[Profiled], profile: BenchProfile) -> str:
    ids = [str(t.id) for t in trials if t.profile == profile]
    return ("trial " if len(ids) == 1 else "trials ") + ", ".join(ids)


def best_lines(trials: Sequence[TrialHeadline]) -> list[str]:
    """"best at c=1: trial 3 steps=3 at 234.0 tok/s" for the lowest and highest concurrency of every trial."""
    cs = sorted({lv.concurrency for t in trials for lv in t.levels})
    lines = []
    for c in dict.fromkeys(cs[:1] + cs[-1:]):
        best = best_of(trials, c)
        if best is not None and (lv := best.level(c)):
            lines.append(f"best at c={c}: trial {best.id} {shown_label(best)} at {fmt_fixed(lv.output_tok_s)} tok/s")
    return lines or ["no successful trial with results yet"]


def comparison_table(cmp: TrialComparison) -> Table:
    """Two trials per concurrency: tok/s, per-request tok/s and TTFT, each with its change in percent, and
    which side queued there (more requests than its server runs at once)."""
    a, b = cmp.a, cmp.b
    table = Table(title=escape(f"trial {a.id} {shown_label(a)}  →  trial {b.id} {shown_label(b)}"))
    for name in ("conc", "A tok/s", "B tok/s", "Δ tok/s", "A req tok/s", "B req tok/s", "Δ req",
                 "A TTFT ms", "B TTFT ms", "Δ TTFT", "B TTFT p99 ms", "queueing"):
        table.add_column(name, justify="right" if name != "queueing" else "left")
    for lc in cmp.levels:
        queue = cmp.queueing(lc)
        table.add_row(
            str(lc.concurrency),
            fmt_fixed(lc.a.output_tok_s if lc.a else None), fmt_fixed(lc.b.output_tok_s if lc.b else None),
            fmt_delta(lc.tok_s_delta_pct),
            fmt_fixed(lc.a.per_request_tok_s.p50 if lc.a else None), fmt_fixed(lc.b.per_request_tok_s.p50 if lc.b else None),
            fmt_delta(lc.per_request_delta_pct),
            fmt_fixed(lc.a.ttft_ms.p50 if lc.a else None, 0), fmt_fixed(lc.b.ttft_ms.p50 if lc.b else None, 0),
            fmt_delta(lc.ttft_delta_pct), fmt_fixed(lc.b.ttft_ms.p99 if lc.b else None, 0),
            f"[yellow]{escape(queue)}[/]" if queue else "",
        )
    return table


def comparison_lines(cmp: TrialComparison) -> list[str]:
    """The flag changes, the capacity change and each side's best level within its TTFT limit, in words,
    to print above the table."""
    lines = [d.describe() for d in cmp.flags] or ["the two trials ran the same flags"]
    mrr_a, mrr_b = cmp.max_running_requests
    lines.append(f"max_running_requests: {mrr_a or '–'} → {mrr_b or '–'}")
    lines.extend(cmp.latency_lines())
    for t in (cmp.a, cmp.b):
        if t.status != "ok":
            lines.append(f"trial {t.id} is {t.status}" + (f": {t.failure}" if t.failure else ""))
    return lines


def sweep_table(flag: str, points: Iterable[CurvePoint], choice: SweepChoice | None, *, number: int = 0,
                levels: Sequence[int] = ()) -> Table:
    """One row per swept value: the seed's trade-off (speed of one request vs capacity vs throughput)
    and the verdict of the choice rules. `levels`: the concurrencies the sweep set out to measure, which name
    the columns while nothing is measured yet (mid-sweep); `number`: the sweep's number in its session."""
    stats = {s.value: s for s in (choice.stats if choice else [])}
    points = list(points)
    low = next((p.low_c for p in points if p.low_c is not None), min(levels, default=None))
    high = next((p.high_c for p in points if p.high_c is not None), max(levels, default=None))
    table = Table(title=f"sweep {number} of --{flag}" if number else f"sweep of --{flag}")
    table.add_column(flag.removeprefix("speculative-"), justify="right")
    table.add_column("runs ok/failed", justify="right")
    table.add_column("max run req", justify="right")
    table.add_column("accept len", justify="right")
    table.add_column(f"req tok/s c={low}", justify="right")
    table.add_column(f"tok/s c={low}", justify="right")
    table.add_column(f"tok/s c={high}", justify="right")
    table.add_column(f"TTFT p99 c={high} ms", justify="right")
    table.add_column("score (median−1.48·MAD)", justify="right")
    table.add_column("spread")
    table.add_column("verdict")
    for p in points:
        s = stats.get(p.value)
        mark = choice.mark(p.value) if choice else ""  # "★ winner" only when its interval excludes the runner-up's
        verdict = (f"[{rich_style(Tone.GOOD, bold=True) if choice and choice.clear else 'yellow'}]{escape(mark)}[/]" if mark
                   else (f"[yellow]{escape(s.rejected)}[/]" if s and s.rejected else ""))
        ttft = statistics.median(s.high_c_ttft_p99_ms) if s and s.high_c_ttft_p99_ms else None
        queue = f" [yellow]{queue_mark(p.max_running_requests)}[/]" if (p.max_running_requests and high
                                                                and high > p.max_running_requests) else ""
        table.add_row(escape(p.value), f"{p.ok}/{p.failed}", str(p.max_running_requests or "–"), fmt_fixed(p.accept_length, 2),
                      fmt_fixed(p.per_request_tok_s), fmt_fixed(p.low_c_tok_s), fmt_fixed(p.high_c_tok_s) + queue, fmt_fixed(ttft, 0),
                      fmt_fixed(s.conservative if s else None), spread_words(s) if s and s.scores else "–", verdict)
    return table


def replay_table(outcome: ReplayOutcome, tolerance_pct: float) -> Table:
    """Each replayed trial: status then and now, output tok/s per concurrency then → now (drift)."""
    cs = sorted({c for p in outcome.pairs for c in p.drift})
    table = Table(title="replay")
    table.add_column("trial")
    table.add_column("status then → now")
    for c in cs:
        table.add_column(f"c={c} tok/s then → now", justify="right")
    table.add_column("verdict")
    for p in outcome.pairs:
        cells = []
        for c in cs:
            a, b = p.original.level(c), p.replay.level(c)
            cells.append(f"{fmt_fixed(a.output_tok_s if a else None)} → {fmt_fixed(b.output_tok_s if b else None)} "
                         f"({fmt_delta(p.drift.get(c))})")
        verdict = p.verdict(tolerance_pct)
        style = rich_style(Tone.GOOD if p.reproduces(tolerance_pct) and not p.failed_again else Tone.BAD)
        table.add_row(escape(f"{p.original.id} → {p.replay.id} {shown_label(p.original)}"),
                      f"{p.original.status} → {status_text(p.replay.status)}", *cells, f"[{style}]{escape(verdict)}[/]")
    return table
