"""A long session: 200 trials of realistic data — how long does each thing an operator does take?

Generates a session like a day of sweeping (the demo unit with varied speculative flags, five levels a
trial with full latency distributions, server facts, a few failed trials), then times, best of `--repeat`:
load, save, summary rows, compare two trials, export Markdown / CSV / JSON. Then, when the UI exists,
opens the app offline on that session under `App.run_test()` and times opening, switching to the chart
(Bench tab) and selecting a trial in the Trials tab.

    python bench/long_session.py               # 200 trials
    python bench/long_session.py --trials 500 --no-ui
Target: < 300 ms per action.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from specdec_tui.core.compare import change_label, compare_trials, summary_rows
from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import Dist, LevelResult, ServerFacts
from specdec_tui.core.session import Session, Trial, load_session, save_session
from specdec_tui.core.session_export import to_csv, to_json, to_markdown
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import demo_unit_text

TARGET_MS = 300.0
LEVELS = (1, 4, 16, 32, 64)


def dist(rng: random.Random, center: float) -> Dist:
    p50 = center * rng.uniform(0.9, 1.1)
    return Dist(mean=p50 * 1.03, p50=p50, p90=p50 * 1.4, p99=p50 * 2.1)


def make_session(n_trials: int, seed: int = 4) -> Session:
    """A session shaped like the seed's: single-request decode rises with steps while MRR falls."""
    rng = random.Random(seed)
    base = demo_unit_text(30000)
    profile = BenchProfile(name="default", concurrency=LEVELS)
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    session = Session(host="gpu-box", unit="sglang-qwen.service", profile=profile, created=start)
    previous: dict[str, str | None] | None = None
    for i in range(1, n_trials + 1):
        steps, topk = rng.choice((1, 2, 3, 4, 5)), rng.choice((1, 1, 2))
        draft = steps + 1 if topk == 1 else rng.choice((4, 6, 8))
        mem = rng.choice(("0.80", "0.85", "0.88"))
        flags = {"speculative-num-steps": str(steps), "speculative-eagle-topk": str(topk),
                 "speculative-num-draft-tokens": str(draft), "mem-fraction-static": mem}
        unit = UnitFile.parse(base).set_flags(flags)
        failed = rng.random() < 0.05
        trial = Trial(id=i, unit_text=unit.text, flags=unit.flags(), profile=profile,
                      started_at=start + timedelta(minutes=4 * i), pushed_at=start + timedelta(minutes=4 * i, seconds=2),
                      status="failed" if failed else "ok", label=change_label(previous, unit.flags()))
        if failed:
            trial.failure = "the server failed while starting: unit failed (exit-code, exit status 1) — journal: " \
                            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
        else:
            mrr = max(8, 26 - 3 * (steps - 1))
            trial.facts = ServerFacts(model="qwen", max_running_requests=mrr, max_total_num_tokens=180000 + 1000 * steps,
                                      context_len=262144, speculative={"algorithm": "NEXTN", "num_steps": steps,
                                                                       "eagle_topk": topk, "num_draft_tokens": draft})
            single = 123 + 37 * min(steps, 3) + rng.uniform(-5, 5)
            for c in LEVELS:
                per_req = single / (1 + 0.05 * c)
                trial.levels.append(LevelResult(
                    concurrency=c, requests=32, errors=rng.choice((0, 0, 0, 1)), output_tokens=32 * 256,
                    duration_s=256 / per_req * 32 / c, output_tok_s=per_req * min(c, mrr),
                    per_request_tok_s=dist(rng, per_req), ttft_ms=dist(rng, 40 + 4 * c), tpot_ms=dist(rng, 1000 / per_req),
                    itl_ms=dist(rng, 1000 / per_req), chunk_itl_ms=dist(rng, 1000 / per_req * steps),
                    e2e_ms=dist(rng, 256 * 1000 / per_req), achieved_concurrency=min(c, mrr) * 0.98,
                    accept_length_server=1 + steps * 0.7, accept_length_client=1 + steps * 0.68,
                    finish_reasons={"length": 32}, error_kinds={} if rng.random() < 0.8 else {"stall": 1}))
            previous = unit.flags()
        session.trials.append(trial)
    return session


def best_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        action()
        times.append((time.perf_counter() - t0) * 1000)
    return min(times)


def report(name: str, ms: float, note: str = "") -> None:
    verdict = "OK" if ms < TARGET_MS else "SLOW"
    print(f"  {name:34s} {ms:8.1f} ms  {verdict}{'  ' + note if note else ''}")


async def ui_times(session: Session, path: Path) -> dict[str, float] | None:
    """Milliseconds for: open offline, switch to the chart, select a trial (one key down + enter)."""
    try:
        from specdec_tui.ui.app import make_app
    except ImportError as err:
        print(f"  (UI not available: {err})")
        return None
    from journal_flood import KeyLatency, type_key  # bench/: one owner for the key-to-screen measurement

    app = make_app(Config(), None, session, session_path=path)
    timing = KeyLatency(app)
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    async with app.run_test(size=(160, 48), message_hook=timing.hook) as pilot:
        await pilot.pause()
        times["UI: open offline, first screen"] = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        await pilot.press("4")  # the Bench tab holds the tok/s chart
        await pilot.pause()
        times["UI: switch to the chart (Bench tab)"] = (time.perf_counter() - t1) * 1000
        await pilot.press("5")
        await pilot.pause()
        t2 = time.perf_counter()
        await pilot.press("down", "enter")
        await pilot.pause()
        times["UI: select a trial (down + enter)"] = (time.perf_counter() - t2) * 1000
        # The same switches as a terminal types them, timed key → the frame that shows them (`pilot.press` also
        # waits for every widget to go idle: ~100 ms a key on a loaded 2-core machine, any key, any session)
        switches: list[float] = []
        for key in ("2", "4", "5", "4", "3", "4"):
            shown = len(timing.t1)
            timing.pressed()
            type_key(app, key)
            while len(timing.t1) == shown:
                await asyncio.sleep(0.005)
            await pilot.pause()
            last = list(timing.t0)[-1]  # the key just typed
            if key == "4":
                switches.append((timing.t1[last] - timing.t0[last]) * 1000)
        times["UI: switch to the chart, key to screen (median of 3)"] = sorted(switches)[len(switches) // 2]
    return times


async def time_ui(session: Session, path: Path) -> None:
    """The app on the long session, next to the same app on a one-trial session: the difference is
    what the trial count costs, the rest is Textual and Pilot (each key waits for the app to idle)."""
    small = Session(host=session.host, unit=session.unit, profile=session.profile, trials=session.trials[:1])
    baseline = await ui_times(small, path.with_name("one.toml"))
    long = await ui_times(session, path)
    if baseline is None or long is None:
        return
    for name, ms in long.items():
        report(name, ms, f"(1-trial session: {baseline[name]:.0f} ms)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-ui", action="store_true")
    args = parser.parse_args()
    session = make_session(args.trials)
    with tempfile.TemporaryDirectory(prefix="specdec-long-") as tmp:
        path = Path(tmp) / "session.toml"
        save_session(session, path)
        size_kb = path.stat().st_size / 1024
        print(f"long session: {args.trials} trials, {size_kb:.0f} KiB on disk; best of {args.repeat} (target < {TARGET_MS:.0f} ms)")
        report("load", best_ms(lambda: load_session(path), args.repeat))
        report("save", best_ms(lambda: save_session(session, path), args.repeat))
        report("summary rows", best_ms(lambda: summary_rows(session), args.repeat))
        a, b = session.trials[10], session.trials[-10]
        report("compare two trials", best_ms(lambda: compare_trials(a, b), args.repeat))
        report("export markdown", best_ms(lambda: to_markdown(session), args.repeat))
        report("export csv", best_ms(lambda: to_csv(session), args.repeat))
        report("export json", best_ms(lambda: to_json(session), args.repeat))
        if not args.no_ui:
            await time_ui(load_session(path), path)


if __name__ == "__main__":
    asyncio.run(main())
