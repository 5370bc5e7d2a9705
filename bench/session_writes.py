"""What one save of the panel's session costs at 1,000 trials, beside a 10-trial session in the same run (issue 34:
the session saver's writer thread held the GIL ~20 ms a write at 1,000 trials, ~21 writes a sweep, while the panel's
keys waited for it).

A sweep's saves, as the trial loop makes them: a new trial, then a level at a time, each followed by a save
(`SessionSaver.save`, which snapshots on the caller's thread) and a flush (the writer thread's write of the file and
its cache). The session is bench/long_session's (five levels a trial, full distributions), saved, read back as the
panel reads it and primed (`SessionSaver.prime`), so the writes measured are the ones in the middle of a sweep.
Counted by valgrind (callgrind): instructions from before the first save to after the last, both threads, user space
only (the kernel's copy and fsync run with the GIL released, and are not counted) — a count that does not move with
the machine's load. Then CPU time a write (every thread, and the caller's thread alone for `save`), without valgrind.

    python bench/session_writes.py                     # 1,000 trials against 10
    python bench/session_writes.py --before main       # the package as of a git ref too, interleaved
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ref_tree import export_tree  # noqa: E402  (a sibling script, not a package)
from tab_switch import OUT_ENV, load_average, mark, summary  # noqa: E402

WRITES = 20


def child(trials: int, writes: int) -> dict[str, float]:
    from long_session import make_session

    from specdec_tui.core.session import Trial, load_session, save_session
    from specdec_tui.loop.session_saver import saver_for

    counting = OUT_ENV in os.environ
    path = Path(tempfile.mkdtemp(prefix="session-writes-")) / "session.toml"
    save_session(make_session(trials), path)
    session = load_session(path)
    saver = saver_for(path)
    saver.prime(session)
    saver.flush(120)
    model = session.trials[-1]
    trial: Trial | None = None
    save_cpu: list[float] = []
    before = mark() if counting else set()
    cpu = time.process_time()
    for n in range(writes):
        if trial is None or len(trial.levels) == len(model.levels):
            if trial is not None:
                trial.status = "ok"
            trial = session.add(Trial(id=session.next_trial_id(), unit_text=model.unit_text, flags=dict(model.flags),
                                      profile=model.profile, label=f"bench {n}"))
        else:
            trial.levels.append(copy.copy(model.levels[len(trial.levels)]))
        began = time.thread_time()
        saver.save(session)
        save_cpu.append(time.thread_time() - began)
        saver.flush(120)
    cpu = time.process_time() - cpu
    result = {"cpu_ms": cpu * 1000 / writes, "save_ms": statistics.median(save_cpu) * 1000,
              "mb": path.stat().st_size / 1e6}
    if counting:
        dumps = mark() - before
        if not dumps:
            raise RuntimeError("callgrind made no dump at the marks (valgrind's --dump-before did not match)")
        result["instructions"] = sum(summary(dump) for dump in dumps) / writes
    return result


def run_child(src: Path | None, trials: int, count: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH", "")]))
    command = [sys.executable, __file__, "--child", str(trials), str(WRITES)]
    with tempfile.TemporaryDirectory(prefix="session-writes-cg-") as tmp:
        if count:
            out = Path(tmp) / "cg.out"
            env[OUT_ENV] = str(out)
            command = ["valgrind", "--tool=callgrind", "--dump-before=os_sched_yield*", f"--callgrind-out-file={out}",
                       *command]
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    line = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"no result (exit {done.returncode})\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
    return {str(k): float(v) for k, v in json.loads(line.removeprefix("RESULT ")).items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--anchor", type=int, default=10, help="the small session's trials (default 10)")
    parser.add_argument("--before", metavar="REF", help="also run the package as of this git ref, interleaved")
    parser.add_argument("--rounds", type=int, default=3, help="CPU-time processes per case (default 3)")
    parser.add_argument("--no-count", action="store_true", help="CPU time only (no valgrind)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="session-writes-before-") as tmp:
        trees: list[tuple[str, Path | None]] = [("this checkout", None)]
        if args.before:
            trees.insert(0, (args.before, export_tree(args.before, Path(tmp)) / "src"))
        cases = [(label, src, n) for label, src in trees for n in (args.anchor, args.trials)]
        print(f"{WRITES} saves of a sweep (a trial, then a level a save), each written before the next; "
              f"load average at the start {load_average()}")
        if not args.no_count:
            print("  instructions a write (valgrind callgrind, both threads, user space):")
            for label, src, n in cases:
                got = run_child(src, n, count=True)
                print(f"    {label:<14} {n:>5} trials ({got['mb']:4.1f} MB): {got['instructions'] / 1e6:7.2f} M")
        print(f"  CPU a write, median of {args.rounds} processes (interleaved; every thread, and `save` on the "
              "caller's thread):")
        runs: dict[tuple[str, int], list[dict[str, float]]] = {(label, n): [] for label, _, n in cases}
        for _ in range(args.rounds):
            for label, src, n in cases:
                runs[(label, n)].append(run_child(src, n, count=False))
        for (label, n), results in runs.items():
            print(f"    {label:<14} {n:>5} trials: {statistics.median(r['cpu_ms'] for r in results):6.2f} ms "
                  f"(save on the caller's thread {statistics.median(r['save_ms'] for r in results):5.2f} ms)")
        print(f"  load average at the end {load_average()} (CPU time includes the kernel's copy and fsync)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print("RESULT " + json.dumps(child(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        sys.exit(main())
