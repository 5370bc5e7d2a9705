"""A long session: 200 trials of realistic data — how long does each thing an operator does take?

Generates a session like a day of sweeping (the demo unit with varied speculative flags, five levels a
trial with full latency distributions, server facts, a few failed trials), then times, best of `--repeat`:
load, save, summary rows, compare two trials, export Markdown / CSV / JSON. Then opens the panel offline on
that file as the program does, each run a process of its own beside the same panel on the newest trial alone and
the minimal Textual app, and times opening (judged by what the trial count adds: the panel's own start is
cold_start.py's), the first switch to the chart (Bench tab) and later ones, key to the frame that shows it, and
selecting a trial in the Trials tab (bench/README.md says why each is timed as it is).

    python bench/long_session.py               # 200 trials
    python bench/long_session.py --trials 500 --no-ui
Target: < 300 ms per action.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
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


UI_ROUNDS = 3  # each UI run a process of its own, the three kinds interleaved; the median is judged


async def ui_times(path: Path | None) -> dict[str, float]:
    """Milliseconds, in this process, for the panel opened on the session file at `path` as `specdec-tui --session
    FILE` opens it: `cli.session_arg.resolve_panel_session` (the newest trial first, the rest loaded on a thread
    after the first frame), the collector held until the panel settles (`ui.gc_policy`, as `cli.tui_cmd` runs it).
    `path` None: the minimal Textual app of bench/minimal_app.py, opened the same way (the harness's own floor)."""
    from journal_flood import KeyLatency, type_key  # bench/: one owner for the key-to-screen measurement
    from textual.widgets import TabbedContent

    from specdec_tui.cli.session_arg import resolve_panel_session
    from specdec_tui.ui.app import SpecdecApp, make_app
    from specdec_tui.ui.gc_policy import hold_collections, resume_collections

    times: dict[str, float] = {}
    hold_collections()  # as the real program: from before the panel is built until it settles
    t0 = time.perf_counter()
    if path is None:
        from minimal_app import MinimalApp

        resume_collections()
        async with MinimalApp().run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            times[OPEN] = (time.perf_counter() - t0) * 1000
        return times
    session, session_path, to_load = resolve_panel_session(str(path), "offline", "")
    app: SpecdecApp = make_app(Config(), None, session, session_path=session_path)
    app.trials_to_load = to_load
    app.settles_heap = True
    timing = KeyLatency(app)
    try:
        async with app.run_test(size=(160, 48), message_hook=timing.hook) as pilot:
            await pilot.pause()
            times[OPEN] = (time.perf_counter() - t0) * 1000
            while app.session_load is not None and not app.session_load.done:
                await pilot.pause(0.01)
            await pilot.pause()
            times[LISTED] = (time.perf_counter() - t0) * 1000
            await pilot.pause(0.5)  # an operator reads the first screen before a key
            # Each switch as a terminal types it (`pilot.press` would also wait for every widget to go idle: ~100 ms
            # a key on a loaded 2-core machine, any key, any session), timed to the first frame after it that shows
            # the tab: the screen's layout refresh (Textual's public `screen_layout_refresh_signal`, published once
            # the frame is written). KeyLatency's end, the refresh after the key's last handler, comes before that
            # frame for a tab switch (the layout waits for the screen's update timer): 4-10 ms where the frame came
            # 17-84 ms after the key. The first "4" shows the Bench tab and draws its table and chart for the first
            # time in this process.
            tabs = app.screen.query_one(TabbedContent)
            frames: list[tuple[float, str]] = []  # (when, the tab shown): a frame of the old tab is not the answer
            app.screen.screen_layout_refresh_signal.subscribe(
                app.screen, lambda _: frames.append((time.perf_counter(), tabs.active)), immediate=True)
            switches: list[float] = []
            for key in ("4", "2", "4", "5", "4", "3", "4"):
                shown = len(timing.t1)
                timing.pressed()
                typed = time.perf_counter()
                type_key(app, key)
                while len(timing.t1) == shown:
                    await asyncio.sleep(0.005)
                await pilot.pause()
                if key == "4":
                    assert tabs.active == "bench", f"key 4 showed the {tabs.active} tab"
                    after = [when for when, shown_tab in frames if when > typed and shown_tab == "bench"]
                    switches.append((after[0] - typed) * 1000 if after else float("nan"))
            times[FIRST_SWITCH] = switches[0]
            times[SWITCH] = sorted(switches[1:])[len(switches[1:]) // 2]
            await pilot.press("5")  # the Trials tab
            await pilot.pause()
            t2 = time.perf_counter()
            await pilot.press("down", "enter")
            await pilot.pause()
            times[SELECT] = (time.perf_counter() - t2) * 1000
    finally:
        resume_collections()
    return times


OPEN = "UI: open offline, first screen"
LISTED = "UI: open offline, every trial listed"
FIRST_SWITCH = "UI: first switch to the chart, key to frame"
SWITCH = "UI: switch to the chart, key to frame (median of 3)"
SELECT = "UI: select a trial (down + enter, Pilot)"


def ui_child(path: Path | None) -> dict[str, float]:
    """`ui_times` in a fresh process: each run pays the same lazy imports and starts from the same heap."""
    command = [sys.executable, __file__, "--ui-child", str(path) if path is not None else "-"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    line = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"UI run on {path}: no result (exit {done.returncode})\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return {str(k): float(v) for k, v in json.loads(line.removeprefix("RESULT ")).items()}


def time_ui(session: Session, path: Path) -> None:
    """The panel on the long session, beside the same panel on its newest trial alone and the minimal Textual app,
    each in its own process, interleaved. Opening is judged by what the trial count adds to it (the long session's
    open less the one-trial session's): the rest is the panel's own start, which bench/cold_start.py judges against
    the minimal app (a first screen here is a start under Pilot, which also waits for every widget to go idle).
    The switches are judged as they are: an operator's key, typed as a terminal types it, to the frame that shows it."""
    small = Session(host=session.host, unit=session.unit, profile=session.profile, trials=session.trials[-1:])
    one = path.with_name("one.toml")
    save_session(small, one)
    runs: dict[str, list[dict[str, float]]] = {"minimal": [], "one": [], "long": []}
    for _ in range(UI_ROUNDS):
        runs["minimal"].append(ui_child(None))
        runs["one"].append(ui_child(one))
        runs["long"].append(ui_child(path))
    med = {kind: {name: statistics.median(r[name] for r in rs) for name in rs[0]} for kind, rs in runs.items()}
    print(f"  the app (median of {UI_ROUNDS} processes each, interleaved; load average {load_average()}):")
    long, base, floor = med["long"], med["one"], med["minimal"]
    for name in (OPEN, LISTED):
        added = long[name] - base[OPEN]
        verdict = "OK" if added < TARGET_MS else "SLOW"
        print(f"  {name:34s} {long[name]:8.1f} ms  (1-trial session's first screen {base[OPEN]:.0f} ms, the minimal "
              f"Textual app's {floor[OPEN]:.0f} ms): the {len(session.trials)} trials add {added:.0f} ms  {verdict}")
    for name in (FIRST_SWITCH, SWITCH, SELECT):
        report(name, long[name], f"(1-trial session: {base[name]:.0f} ms; runs: "
                                 f"{', '.join(f'{r[name]:.0f}' for r in runs['long'])})")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-ui", action="store_true")
    args = parser.parse_args()
    print(f"load average at the start {load_average()}")
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
            time_ui(session, path)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ui-child"]:
        target = None if sys.argv[2] == "-" else Path(sys.argv[2])
        print("RESULT " + json.dumps(asyncio.run(ui_times(target))))
    else:
        asyncio.run(main())
