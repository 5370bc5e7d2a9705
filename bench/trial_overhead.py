"""Per-trial overhead of the workflow: what a trial costs beyond the server's own start and the benchmark.

Runs `TrialLoop.run_trial` on the demo host (the simulated SGLang server, `--time-scale` fast) with a
small benchmark, alternating two flag sets so every trial really pushes and restarts. For each trial:

  total      Phase("push") → run_trial returned
  start      restart call → the server's own "ready to roll" journal line (its time-to-ready)
  bench      first LevelStarted → last LevelDone (the measuring itself)
  overhead   total − start − bench: push, daemon-reload, stopping the old process, noticing READY,
             fetching server facts, starting the bench thread, session saves

    python bench/trial_overhead.py                 # 12 trials at time scale 50
    python bench/trial_overhead.py --trials 30 --time-scale 100
Target: overhead p50 ≤ 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from specdec_tui.bench.events import LevelDone, LevelStarted
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.events import BenchUpdate, Phase
from specdec_tui.loop.trial import TrialLoop

READY_LINE = "ready to roll"
PROFILE = BenchProfile(name="overhead", concurrency=(1, 4), requests=8, max_tokens=32, temperature=0.0,
                       ignore_eos=True, prompts="repetitive", warmup=0)


@dataclass
class Marks:
    """Wall-clock (time.time) marks of one trial, filled from its events."""

    at: dict[str, float] = field(default_factory=dict)
    level_started: list[float] = field(default_factory=list)
    level_done: list[float] = field(default_factory=list)

    def on_event(self, event: object) -> None:
        now = time.time()
        if isinstance(event, BenchUpdate):  # the loop hands the benchmark's own events on inside these
            event = event.event
        if isinstance(event, Phase):
            self.at.setdefault(event.name, now)
        elif isinstance(event, LevelStarted):
            self.level_started.append(now)
        elif isinstance(event, LevelDone):
            self.level_done.append(now)


async def ready_line_time(host: LocalHost, after: float) -> float | None:
    """The journal timestamp of the server's ready line logged after `after` (wall clock)."""
    found = None
    async for record in host.journal(follow=False, lines=400):
        stamp = record.timestamp.timestamp() if isinstance(record.timestamp, datetime) else None
        if stamp is not None and stamp >= after and READY_LINE in record.message:
            found = stamp
    return found


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--time-scale", type=float, default=50.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="specdec-overhead-") as tmp:
        ws = ensure_demo_workspace(Path(tmp) / "ws", time_scale=args.time_scale)
        host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
        runner = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name, profile=PROFILE),
                             profile=PROFILE, base_url=ws.base_url, session_path=Path(tmp) / "session.toml",
                             healthy_timeout_s=120)
        base = await runner.read_running()
        rows: list[tuple[float, float, float, float]] = []
        try:
            for i in range(args.trials):
                steps = 1 + i % 2
                text = UnitFile.parse(base).set_flags({"speculative-num-steps": str(steps),
                                                       "speculative-num-draft-tokens": str(steps + 1)}).text
                marks = Marks()
                began = time.time()
                trial = await runner.run_trial(text, on_event=marks.on_event)
                ended = time.time()
                if trial.status != "ok":
                    print(f"  trial {trial.id} {trial.status}: {trial.failure}")
                    continue
                restart_at = marks.at["restart"]
                ready_at = await ready_line_time(host, restart_at)
                if ready_at is None or not marks.level_started:
                    print(f"  trial {trial.id}: no ready line or no bench events; skipped")
                    continue
                total = ended - began
                start = ready_at - restart_at
                bench = marks.level_done[-1] - marks.level_started[0]
                rows.append((total, start, bench, total - start - bench))
        finally:
            await host.close()
    if not rows:
        print("no trial measured")
        return
    overhead = [r[3] * 1000 for r in rows]
    print(f"trial overhead on the demo host, time scale {args.time_scale:g}, {len(rows)} trials "
          f"(profile: c={','.join(map(str, PROFILE.concurrency))}, {PROFILE.requests} requests × {PROFILE.max_tokens} tokens)")
    for name, k in (("total", 0), ("server start", 1), ("bench", 2)):
        vals = [r[k] * 1000 for r in rows]
        print(f"  {name:13s} p50 {pct(vals, 50):7.0f} ms   min {min(vals):7.0f} ms   max {max(vals):7.0f} ms")
    verdict = "OK" if pct(overhead, 50) <= 1000 else "OVER TARGET"
    print(f"  {'overhead':13s} p50 {pct(overhead, 50):7.0f} ms   p90 {pct(overhead, 90):7.0f} ms   "
          f"mean {statistics.fmean(overhead):7.0f} ms   (target p50 ≤ 1000 ms) {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
