"""What a tab switch costs: instructions (valgrind callgrind, does not move with the machine's load), CPU time and the
key-to-frame time of N tab keys on an idle panel (issue 34, point 3: tab keys were the slowest keys of a sweep).

The panel is opened offline on a session of 20 trials (as `specdec-tui --session FILE`: every tab has content),
each tab shown once (first draws and lazy imports are not a switch's), then the keys 2 3 4 5 6 1 are typed
`--cycles` times as a terminal types them (`journal_flood.type_key`), each waited for until the first frame showing
its tab (`journal_flood.KeyLatency`), then 20 ms of quiet. Counted: from before the first key to after the last,
with the panel idle at both ends. The count marks its window with two calls of a C function the panel never calls
(`os.sched_yield`) and callgrind's `--dump-before` on it: the dump made at the second mark holds the switches'
instructions. Counts repeat to ~1 % (timers that fire while valgrind runs 50× slower move them).

`--before REF` runs the package as of a git ref too (its src/ exported with `git archive`), interleaved with this
checkout's, so a change is measured before and after in one run. Each measure is a process of its own.

    python bench/tab_switch.py --before main              # instructions and times, this checkout and main
    python bench/tab_switch.py --no-count --rounds 5      # times only (no valgrind)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).parent))
from ref_tree import export_tree  # noqa: E402  (a sibling script, not a package)

if TYPE_CHECKING:
    from journal_flood import KeyLatency

    from specdec_tui.ui.app import SpecdecApp

KEYS = ("2", "3", "4", "5", "6", "1")
TABS = {"1": "config", "2": "journal", "3": "health", "4": "bench", "5": "trials", "6": "fleet"}
OUT_ENV = "TAB_SWITCH_CALLGRIND_OUT"  # the child's callgrind out-file (the count) or unset (the times)


def mark() -> set[Path]:
    """A mark for callgrind (`--dump-before=os_sched_yield*` dumps the counts so far), and the dump files after it."""
    os.sched_yield()
    out = Path(os.environ[OUT_ENV])
    return set(out.parent.glob(out.name + ".*"))


def summary(path: Path) -> int:
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    return 0


async def child(cycles: int) -> dict[str, float]:
    """In this process: the panel, N switches, what they cost."""
    from journal_flood import KeyLatency
    from long_session import make_session

    from specdec_tui.core.config import Config
    from specdec_tui.ui.app import make_app
    from specdec_tui.ui.gc_policy import hold_collections, resume_collections

    counting = OUT_ENV in os.environ
    hold_collections()  # the collector as the real program runs it (cli.tui_cmd): held until the panel settles
    app: SpecdecApp = make_app(Config(), None, make_session(20), session_path=None)
    app.settles_heap = True
    timing = KeyLatency(app)
    result: dict[str, float] = {}
    try:
        await run(app, timing, cycles, counting, result)
    finally:
        resume_collections()
    return result


async def run(app: SpecdecApp, timing: KeyLatency, cycles: int, counting: bool, result: dict[str, float]) -> None:
    from journal_flood import type_key
    from textual.widgets import TabbedContent

    async with app.run_test(size=(160, 48), message_hook=timing.hook) as pilot:
        while app.main_or_none is None or not app.main.tabs_mounted:
            await pilot.pause(0.05)
        tabs = app.screen.query_one(TabbedContent)

        async def switch(key: str) -> float:
            timing.pressed()
            typed = time.perf_counter()
            type_key(app, key)
            while not any(when > typed and shown == TABS[key] for when, shown in timing.frames):
                await asyncio.sleep(0.002)
            shown_at = next(when for when, shown in timing.frames if when > typed and shown == TABS[key])
            await asyncio.sleep(0.02)  # the focus that follows, quiet before the next key
            assert tabs.active == TABS[key], f"key {key} showed {tabs.active}"
            return (shown_at - typed) * 1000

        for key in KEYS:  # every tab drawn once: first draws are not what a switch costs
            await switch(key)
        await pilot.pause(0.3)
        before = mark() if counting else set()
        cpu = time.process_time()
        times = [await switch(key) for _ in range(cycles) for key in KEYS]
        await pilot.pause()
        cpu = time.process_time() - cpu
        if counting:
            dumps = mark() - before
            if not dumps:
                raise RuntimeError("callgrind made no dump at the marks (valgrind's --dump-before did not match)")
            result["instructions"] = sum(summary(path) for path in dumps) / len(times)
        result.update(cpu_ms=cpu * 1000 / len(times), p50_ms=statistics.median(times),
                      p90_ms=sorted(times)[int(len(times) * 0.9)], switches=len(times))


@dataclass(frozen=True)
class Tree:
    label: str
    src: Path | None  # None: this checkout's (installed) package


def run_child(tree: Tree, cycles: int, count: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if tree.src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree.src), env.get("PYTHONPATH", "")]))
    command = [sys.executable, __file__, "--child", str(cycles)]
    with tempfile.TemporaryDirectory(prefix="tabswitch-") as tmp:
        if count:
            out = Path(tmp) / "cg.out"
            env[OUT_ENV] = str(out)
            command = ["valgrind", "--tool=callgrind", "--dump-before=os_sched_yield*", f"--callgrind-out-file={out}",
                       *command]
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    line = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"{tree.label}: no result (exit {done.returncode})\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
    return {str(k): float(v) for k, v in json.loads(line.removeprefix("RESULT ")).items()}


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REF", help="also run the package as of this git ref, interleaved")
    parser.add_argument("--cycles", type=int, default=3, help="rounds of the six tab keys a process (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="timed processes per tree (default 3)")
    parser.add_argument("--count-rounds", type=int, default=1, help="valgrind counts per tree (default 1)")
    parser.add_argument("--no-count", action="store_true", help="times only (no valgrind)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tabswitch-before-") as tmp:
        trees = [Tree("this checkout", None)]
        if args.before:
            trees.insert(0, Tree(args.before, export_tree(args.before, Path(tmp)) / "src"))
        print(f"tab switches on an idle offline panel (160x48, 20 trials), keys {' '.join(KEYS)} × {args.cycles} "
              f"a process; load average at the start {load_average()}")
        if not args.no_count:
            counts: dict[str, list[float]] = {tree.label: [] for tree in trees}
            for _ in range(args.count_rounds):
                for tree in trees:
                    counts[tree.label].append(run_child(tree, args.cycles, count=True)["instructions"])
            print(f"  instructions a switch (valgrind callgrind; load average {load_average()}):")
            for label, values in counts.items():
                print(f"    {label:<16} {statistics.median(values) / 1e6:8.2f} M   "
                      f"(runs: {', '.join(f'{v / 1e6:.2f}' for v in values)})")
        runs: dict[str, list[dict[str, float]]] = {tree.label: [] for tree in trees}
        for _ in range(args.rounds):
            for tree in trees:
                runs[tree.label].append(run_child(tree, args.cycles, count=False))
        print(f"  per switch, median of {args.rounds} processes (interleaved; load average {load_average()}):")
        for label, results in runs.items():
            med = {name: statistics.median(r[name] for r in results) for name in ("cpu_ms", "p50_ms", "p90_ms")}
            each = ", ".join(f"{r['p50_ms']:.0f}" for r in results)
            print(f"    {label:<16} CPU {med['cpu_ms']:6.1f} ms   key to frame p50 {med['p50_ms']:6.1f} ms, "
                  f"p90 {med['p90_ms']:6.1f} ms   (p50 runs: {each})")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print("RESULT " + json.dumps(asyncio.run(child(int(sys.argv[2])))))
    else:
        sys.exit(main())
