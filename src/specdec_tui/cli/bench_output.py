"""What `specdec-tui bench` prints as a run goes: a live table (rich) or JSON lines, one per finished level then a
summary. `cli.bench_cmd` runs the benchmark and feeds its events here; `level_json` is shared with the rate search."""

from __future__ import annotations

import dataclasses
from typing import Any

from specdec_tui.cli.common import rounded
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.number_format import fmt_fixed
from specdec_tui.core.results import SERVER_AVG_LABEL, Dist, LevelResult, ServerFacts, accept_source_legend


def _dist(d: Dist) -> dict[str, float | None]:
    return {k: (round(v, 4) if v is not None else None) for k, v in dataclasses.asdict(d).items()}


def level_json(lv: LevelResult) -> dict[str, Any]:
    return {
        "concurrency": lv.concurrency,
        "rate": lv.rate,
        "peak_in_flight": lv.peak_in_flight,
        "good_requests": lv.good_requests,
        "goodput_req_s": None if lv.goodput_req_s is None else round(lv.goodput_req_s, 4),
        "goodput_tok_s": None if lv.goodput_tok_s is None else round(lv.goodput_tok_s, 3),
        "slo_missed": lv.slo_missed,
        "workload": lv.workload,
        "requests": lv.requests,
        "errors": lv.errors,
        "error_kinds": lv.error_kinds,
        "output_tokens": lv.output_tokens,
        "duration_s": round(lv.duration_s, 4),
        "output_tok_s": round(lv.output_tok_s, 3),
        "achieved_concurrency": round(lv.achieved_concurrency, 3),
        "per_request_tok_s": _dist(lv.per_request_tok_s),
        "ttft_ms": _dist(lv.ttft_ms),
        "tpot_ms": _dist(lv.tpot_ms),
        "itl_ms": _dist(lv.itl_ms),
        "chunk_itl_ms": _dist(lv.chunk_itl_ms),
        "e2e_ms": _dist(lv.e2e_ms),
        "accept_length": {"server": lv.accept_length_server, "client": lv.accept_length_client,
                          "source": lv.accept_length_source,
                          # the server's mean since it started, as SGLang's bench_serving prints it
                          "server_info_avg_spec_accept_length": lv.server_avg_accept_length},
        "finish_reasons": lv.finish_reasons,
        "estimated": lv.estimated,
        "warnings": lv.warnings,
    }


class JsonOut:
    """--json: one line per level, then a summary line whose best is the one best (`core.latency.pick`)."""

    def __init__(self, profile: BenchProfile) -> None:
        from specdec_tui.core.latency import LatencyLimit

        self.profile = profile
        self.limit = LatencyLimit(None, profile.ttft_limit_s)

    def set_facts(self, facts: ServerFacts | None) -> None:
        from specdec_tui.core.latency import LatencyLimit

        self.limit = LatencyLimit.of(facts, self.profile)

    def __enter__(self) -> JsonOut:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def on_event(self, ev: object) -> None:
        from specdec_tui.bench.events import LevelDone, RunDone
        from specdec_tui.core.json_out import json_text
        from specdec_tui.core.latency import pick
        from specdec_tui.loop.events import unwrap_bench

        ev = unwrap_bench(ev)  # the trial loop wraps each benchmark event with its run number
        if isinstance(ev, LevelDone):
            print(json_text(rounded(level_json(ev.result))), flush=True)
        elif isinstance(ev, RunDone):
            chosen = pick(ev.levels, self.limit)  # the one "best" (core.latency), named in best_rule
            best, peak = chosen.best, chosen.peak
            summary = {
                "summary": True,
                "levels": len(ev.levels),
                "cancelled": ev.cancelled,
                "error": ev.error,
                "errors": sum(lv.errors for lv in ev.levels),
                "best_rule": f"highest output tok/s with {self.limit.limit_words}",
                "best_output_tok_s": best.output_tok_s if best else None,
                "best_concurrency": best.concurrency if best else None,
                "peak_output_tok_s": peak.output_tok_s if peak else None,
                "peak_concurrency": peak.concurrency if peak else None,
                "failed_concurrency": list(chosen.failed),
                "single_request_tok_s": next(
                    (lv.per_request_tok_s.p50 for lv in ev.levels if lv.concurrency == 1 and lv.measured), None
                ),
            }
            print(json_text(rounded(summary)), flush=True)

    def finish_cancelled(self) -> None:
        print('{"summary": true, "cancelled": true}', flush=True)


def distinct_warnings(rows: list[LevelResult]) -> list[tuple[list[int], str]]:
    """Each distinct warning once, in first-seen order, with the concurrency levels that gave it
    (most warnings, such as temperature 0 with ignore_eos, apply to every level alike)."""
    seen: dict[str, list[int]] = {}
    for lv in rows:
        for w in lv.warnings:
            levels = seen.setdefault(w, [])
            if lv.concurrency not in levels:
                levels.append(lv.concurrency)
    return [(levels, w) for w, levels in seen.items()]


class LiveTable:
    """A rich table redrawn as events arrive; finished rows stay, the running row shows progress."""

    def __init__(self, profile: BenchProfile) -> None:
        from specdec_tui.cli.render import make_console
        from specdec_tui.core.latency import LatencyLimit

        self.profile = profile
        self.limit = LatencyLimit(None, profile.ttft_limit_s)  # the server's capacity, when known (set_facts)
        self.console = make_console()  # a pipe gets the full table, not one squeezed to 80 columns
        self.rows: list[LevelResult] = []
        self.current: str = ""
        self.live: Any = None

    def __enter__(self) -> LiveTable:
        from rich.live import Live

        self.live = Live(self.render(), console=self.console, refresh_per_second=4, transient=False)
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)
        self.console.print()
        if self.rows:
            from specdec_tui.core.latency import pick

            self.console.print(pick(self.rows, self.limit).summary(), markup=False)
        for levels, w in distinct_warnings(self.rows):
            self.console.print(f"c={','.join(map(str, levels))}: {w}", style="yellow", markup=False)

    def on_event(self, ev: object) -> None:
        from specdec_tui.bench.events import (
            LevelDone,
            LevelProgress,
            LevelStarted,
            RunDone,
        )
        from specdec_tui.loop.events import unwrap_bench

        ev = unwrap_bench(ev)  # the trial loop wraps each benchmark event with its run number
        if isinstance(ev, LevelStarted):
            planned = f"{ev.planned} requests" if ev.planned else f"{ev.duration_s:g} s"
            self.current = f"{f'c={ev.concurrency}' if ev.concurrency else 'open loop'}: starting ({planned})"
        elif isinstance(ev, LevelProgress):
            self.current = f"c={ev.concurrency}: {ev.done} done, {ev.errors} errors, {ev.tok_s:.0f} tok/s"
            if ev.concurrency == 0:  # open loop: at a rate, or a trace at its own times
                load = f"r={self.profile.rate:g}/s" if self.profile.rate is not None else "trace"
                self.current = f"{load}: {ev.done} done, {ev.in_flight} in flight, {ev.errors} errors"
        elif isinstance(ev, LevelDone):
            self.rows.append(ev.result)
            self.current = ""
        elif isinstance(ev, RunDone):
            self.current = "cancelled" if ev.cancelled else (ev.error or "")
        self.live.update(self.render())

    def set_facts(self, facts: ServerFacts | None) -> None:
        """The server's capacity (from /server_info): levels above its max running requests queue."""
        from specdec_tui.core.latency import LatencyLimit

        self.limit = LatencyLimit.of(facts, self.profile)

    def finish_cancelled(self) -> None:
        self.console.print("benchmark cancelled", style="yellow")

    def render(self) -> Any:
        from rich.table import Table

        p = self.profile
        t = Table(
            title=f"{p.endpoint} · max_tokens {p.max_tokens} · temperature {p.temperature:g}"
            + (" · ignore_eos" if p.ignore_eos else "")
            + (f" · workload {p.workload} seed {p.seed}" if p.workload else f" · prompts {p.prompts}"),
            caption=" · ".join(c for c in (self.current, accept_source_legend(self.rows)) if c) or None,
        )
        for col in ("conc", "reqs", "err", "out tok/s", "req tok/s p50", "TTFT p50/p99 ms", "TPOT p50 ms",
                    "ITL p50/p99 ms", "accept srv/cli", SERVER_AVG_LABEL, "notes"):
            if col == "notes":  # "queues: >17 running"
                t.add_column(col, justify="left", min_width=19, overflow="fold")
            else:
                t.add_column(col, justify="right")
        for lv in self.rows:
            notes = " ".join(
                [f"{kind}×{n}" for kind, n in lv.error_kinds.items()]
                + (["estimated"] if lv.estimated else [])
                + (["⚠ inflated"] if any("inflated" in w for w in lv.warnings) else [])
                + ([note] if lv.rate is None and (note := self.limit.note(lv.concurrency)) else [])
                + ([f"goodput {lv.goodput_req_s:.2f} req/s"] if lv.goodput_req_s is not None else [])
                + [f"missed {m}" for m in lv.slo_missed]
            )
            t.add_row(
                lv.load_label if lv.rate is not None else str(lv.concurrency),
                str(lv.requests),
                str(lv.errors) if not lv.errors else f"[red]{lv.errors}[/]",
                fmt_fixed(lv.output_tok_s),
                fmt_fixed(lv.per_request_tok_s.p50),
                f"{fmt_fixed(lv.ttft_ms.p50, 0)}/{fmt_fixed(lv.ttft_ms.p99, 0)}",
                fmt_fixed(lv.tpot_ms.p50, 2),
                f"{fmt_fixed(lv.itl_ms.p50, 2)}/{fmt_fixed(lv.itl_ms.p99, 2)}",
                f"{fmt_fixed(lv.accept_length_server, 2)}/{fmt_fixed(lv.accept_length_client, 2)}"
                + (f" {src.short}" if (src := lv.accept_source) else ""),
                fmt_fixed(lv.server_avg_accept_length, 2),
                notes.strip(),
            )
        return t
