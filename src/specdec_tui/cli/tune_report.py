"""What `specdec-tui tune` prints: one progress line per launch on stderr, then the choice, its confidence and
the schedule (or, with --json, one object on the last stdout line). The adaptive-config JSON is written beside
the session when the schedule names steps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from specdec_tui.cli.common import progress
from specdec_tui.core.number_format import fmt_count
from specdec_tui.core.tune_objective import LaunchResult, Point, objective, point_label
from specdec_tui.loop.correctness_gate import verdict_lines
from specdec_tui.loop.sweep_plan import OnHost
from specdec_tui.loop.tune import AdaptiveCheckStarted, LaunchLanded, LaunchStarted, TuneOutcome, TuneStarted
from specdec_tui.loop.tune_adaptive import AdaptiveCheck
from specdec_tui.loop.tune_search import Standing


class Printer:
    """Progress on stderr: what is launched next and why, what it measured, the standing."""

    def __init__(self, several: bool, phase_line: Callable[[object], str | None]) -> None:
        self.several, self.phase_line = several, phase_line
        self.slo: Any = None

    def __call__(self, event: object) -> None:
        if isinstance(event, TuneStarted):
            resumed = f"; {event.resumed} launch(es) resumed from the session" if event.resumed else ""
            progress(f"{event.candidates} configurations to search, {len(event.refused)} refused by the release's "
                     f"rules{resumed}")
            for number, result in enumerate(event.prior, 1):  # each as a new launch is listed: the whole search
                progress(f"[{number}/{event.budget}] {point_label(result.point)} (resumed from the session)")
                progress("  " + landed_line(result))
            if event.standing is not None:
                self._standing(event.standing)
        elif isinstance(event, LaunchStarted):
            on = f" on {event.host}" if self.several else ""
            again = " (again)" if event.repeat else ""
            progress(f"[{event.number}/{event.budget}] {event.candidate.label}{again}{on}: {event.why}")
        elif isinstance(event, LaunchLanded):
            progress("  " + landed_line(event.result))
            if event.spared:
                progress(f"  predicted to fail, not launched: {', '.join(c.label for c in event.spared)}")
            if event.standing is not None:
                self._standing(event.standing)
        elif isinstance(event, AdaptiveCheckStarted):
            progress(f"checking the schedule as adaptive speculation ({event.config_file}) with one more launch")
        elif isinstance(event, AdaptiveCheck):
            progress(f"  {event.words()}")
        elif isinstance(event, OnHost):
            if (line := self.phase_line(event.event)) is not None:
                progress(line.replace("  · ", f"  · {event.host}: ", 1))
        elif (line := self.phase_line(event)) is not None:
            progress(line)


    @staticmethod
    def _standing(s: Standing) -> None:
        progress(f"  best so far: {point_label(s.point)} {s.goodput:,.1f} tok/s at c={s.level}")


def landed_line(r: LaunchResult) -> str:
    head = f"{point_label(r.point)}" + (f" on {r.host}" if r.host else "")
    if r.failed:
        return f"{head}: failed to start ({r.failure_kind.value if r.failure_kind else 'other'}): {r.failure}"
    levels = ", ".join(f"c={lv.concurrency} {lv.tok_s:,.0f} tok/s"
                       + (f" (accept {lv.accept_length:.2f})" if lv.accept_length else "") for lv in r.levels)
    mrr = f", max_running_requests {r.max_running_requests}" if r.max_running_requests else ""
    return f"{head}: {levels}{mrr}"


def _flags(point: Point | None) -> dict[str, str] | None:
    return dict(point) if point is not None else None


def _check_json(outcome: TuneOutcome) -> dict[str, Any] | None:
    check = outcome.adaptive_check
    if check is None:
        return None
    return {"ok": check.ok, "words": check.words(),
            "levels": {str(lv.concurrency): round(lv.tok_s, 3) for lv in check.result.levels},
            "collapsed": [c for c, _, _ in check.collapsed]}


def result_json(outcome: TuneOutcome, session: Path, adaptive_path: Path | None) -> dict[str, Any]:
    s = outcome.standing
    best_level = None
    if s is not None:
        runs = [r for r in outcome.results if r.point == s.point and not r.failed]
        best_level = objective(runs[-1].levels, outcome.plan.slo)[1] if runs else s.level
    gate = outcome.gate
    return {
        "best": {"flags": _flags(outcome.promoted), "objective": round(s.goodput, 3) if s else 0.0,
                 "level": best_level},
        "promoted": outcome.promoted is not None,
        "correctness": {"passed": gate.passed, "divergences": len(gate.divergences), "note": gate.note}
        if gate is not None else None,
        "rejected": _flags(s.point) if s is not None and outcome.promoted is None else None,
        "objective": round(s.goodput, 3) if s else 0.0,
        "level": best_level,
        "confidence": s.confidence if s else "no configuration met the SLO",
        "launches": outcome.launches,
        "resumed": outcome.resumed,
        "found_at": outcome.found_at,
        "failed": [dict(p) for p in outcome.failed],
        "retried_failures": outcome.retried_failures,
        "predicted_to_fail": [dict(c.point) for c, _ in outcome.predicted_failures],
        "refused": len(outcome.refused),
        "schedule": [{"concurrency": c.concurrency, "flags": _flags(c.point), "tok_s": round(c.tok_s, 3)}
                     for c in outcome.schedule],
        "adaptive_config": outcome.adaptive.to_json() if outcome.adaptive else None,
        "adaptive_config_file": str(adaptive_path) if adaptive_path else None,
        "adaptive_check": _check_json(outcome),
        "adaptive_shipped": dict(outcome.adaptive_shipped) or None,
        "adaptive_note": outcome.adaptive_note or None,
        "stopped": outcome.stopped,
        "session": str(session),
    }


def print_result(outcome: TuneOutcome, session: Path, *, as_json: bool) -> None:
    adaptive_path = outcome.adaptive_file
    if as_json:
        from specdec_tui.core.json_out import json_text

        print(json_text(result_json(outcome, session, adaptive_path)), flush=True)
        return
    s = outcome.standing
    if s is None:
        print(f"no configuration met {outcome.plan.slo.words()} at any level "
              f"({fmt_count(outcome.launches, 'launch', 'launches')}); session {session}")
        return
    gate = outcome.gate
    if gate is not None and not gate.passed:
        for line in verdict_lines(gate):
            print(line)
    what = "best" if outcome.promoted is not None else "measured best, NOT promoted"
    print(f"{what}: {point_label(s.point)}: {s.goodput:,.1f} tok/s at c={s.level} under {outcome.plan.slo.words()}")
    if gate is not None and gate.passed:
        print(verdict_lines(gate)[0])
    print(f"confidence: {s.confidence}")
    print(f"launches: {outcome.launches} (the answer at launch {outcome.found_at}; {outcome.resumed} resumed), "
          f"failed to start: {len(outcome.failed)}, relaunched failures: {outcome.retried_failures}, "
          f"predicted to fail and skipped: {len(outcome.predicted_failures)}")
    print("schedule:")
    for c in outcome.schedule:
        what = f"{point_label(c.point)} ({c.tok_s:,.1f} tok/s)" if c.point else "nothing meets the SLO"
        print(f"  c={c.concurrency}: {what}")
    if adaptive_path is not None:
        print(f"adaptive config (--speculative-adaptive-config): {adaptive_path}")
    if outcome.adaptive_check is not None:
        print(f"adaptive check (one more launch across the tiers): {outcome.adaptive_check.words()}")
    for name, where in outcome.adaptive_shipped.items():
        print(f"adaptive tiers shipped beside the unit on {name}: {where}")
    if outcome.adaptive_note:
        print(f"adaptive tiers: {outcome.adaptive_note}")
    print(f"stopped: {outcome.stopped}; session {session}")
