"""A 10,000-trial session (issue 36, point 13): `session show`, the HTML export, the panel's first frame and a
writer appending one trial (point 4 at that size), each beside the same thing on a 3-trial session measured in
the same run (the anchor: Python, the imports, Textual). Targets: show < 1 s, export < 10 s, the panel's first
frame as on the small session (its trials are loaded after that frame). Then four writers append at once to the
long session and every trial is checked to be in it once.

Each command's own CPU time is printed beside its wall clock: on a machine shared with other work the wall clock
is mostly waiting, the CPU time is what the command costs.

The session is long_session.py's (the seed's shapes: five levels a trial, full distributions, facts, a few
failed trials), written once. Each figure is the real command in a subprocess, wall clock, best of --repeat (the
first frame: the median of at least 5 runs, interleaved with the anchor's).

    python bench/huge_session.py               # 10,000 trials
    python bench/huge_session.py --trials 2000 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cold_start import first_frame_s  # noqa: E402  (bench/ scripts, run from anywhere)
from long_session import make_session  # noqa: E402

from specdec_tui.core.session import save_session  # noqa: E402

TARGETS_S = {"session show": 1.0, "session export --format html": 10.0}


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best_s(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best wall clock of `repeat` runs and the CPU time of its child processes in that run."""
    runs = []
    for _ in range(repeat):
        c0, t0 = children_cpu_s(), time.perf_counter()
        action()
        runs.append((time.perf_counter() - t0, children_cpu_s() - c0))
    return min(runs)


# What a writer that appends does (`bench --record`): read the session, add its trial, save it through the file's
# saver (`loop.session_saver`, which the trial loop uses), under the file's lock.
APPEND = """
import sys
from pathlib import Path
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Trial, load_session
from specdec_tui.loop.session_saver import saver_for
path = Path(sys.argv[1])
session = load_session(path)
trial = Trial(id=session.next_trial_id(), unit_text="[Service]\\nExecStart=/x\\n", status="ok", label=sys.argv[2],
              levels=[LevelResult(concurrency=1, requests=4, output_tok_s=1.0)])
session.add(trial)
saver = saver_for(path)
saver.save(session)
saver.flush()
"""


def append(env: dict[str, str], path: Path, label: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", APPEND, str(path), label], env=env, stderr=subprocess.PIPE)


def wait_ok(proc: subprocess.Popen[bytes]) -> None:
    _, err = proc.communicate(timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"append: exit {proc.returncode}: {err[-400:]!r}")


def first_frames(argvs: list[list[str]], env: dict[str, str], runs: int) -> list[tuple[float, float]]:
    """Per command: the median time to the first frame (not to the program's exit, which follows) over `runs`
    runs interleaved with the other command's (so load from elsewhere hits both alike), and the median CPU a run
    took (to its exit: a long session's trials are loaded after the frame)."""
    times: list[list[tuple[float, float]]] = [[] for _ in argvs]
    for _ in range(runs):
        for argv, out in zip(argvs, times, strict=True):
            c0 = children_cpu_s()
            frame_s = first_frame_s(argv, env, 120)
            out.append((frame_s, children_cpu_s() - c0))
    return [(statistics.median(t for t, _ in out), statistics.median(c for _, c in out)) for out in times]


def row(name: str, huge: tuple[float, float], small: tuple[float, float], target: str, ok: bool) -> None:
    print(f"  {name:30s} {huge[0]:8.2f} s (cpu {huge[1]:6.2f} s)   3 trials: {small[0]:.2f} s (cpu {small[1]:.2f} s)"
          f"   target {target}  {'OK' if ok else 'SLOW'}")


def cli(env: dict[str, str], *argv: str) -> None:
    done = subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, env=env, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr[-400:]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="specdec-huge-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "COLUMNS": "160", "SPECDEC_TUI_DATA_DIR": str(root / "data"),
               "SPECDEC_TUI_CONFIG_DIR": str(root / "config")}
        files = {3: root / "small.toml", args.trials: root / "huge.toml"}
        for n, path in files.items():
            save_session(make_session(n), path)
        print(f"{args.trials} trials: {files[args.trials].stat().st_size / 1e6:.1f} MB on disk; "
              f"anchor: the same on 3 trials; best of {args.repeat}")
        out = root / "report.html"
        rows = {
            "session show": lambda p: cli(env, "session", "show", str(p)),
            "session export --format html": lambda p: cli(env, "session", "export", str(p), "--format", "html",
                                                          "-o", str(out)),
        }
        for name, action in rows.items():
            small = best_s(lambda a=action: a(files[3]), args.repeat)
            huge = best_s(lambda a=action: a(files[args.trials]), args.repeat)
            row(name, huge, small, f"< {TARGETS_S[name]:g} s", huge[0] < TARGETS_S[name])
        panel_env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        frame = [sys.executable, "-m", "specdec_tui.cli.main", "--session"]
        small, huge = first_frames([[*frame, str(files[n])] for n in (3, args.trials)], panel_env, max(5, args.repeat))
        row("panel: first frame (median)", huge, small, "≈ the anchor", huge[0] < small[0] * 1.3)
        from specdec_tui.core.session import load_session

        for n, path in files.items():  # the appends go to copies: each run appends one
            shutil.copy(path, root / f"w{n}.toml")
            load_session(root / f"w{n}.toml")  # the copy's own cache (a copied one names the original's inode)
        appended = {n: best_s(lambda n=n: wait_ok(append(env, root / f"w{n}.toml", "one")), args.repeat)
                    for n in files}
        row("append one trial (a writer)", appended[args.trials], appended[3], "(no target)", True)
        writers = 4
        c0, t0 = children_cpu_s(), time.perf_counter()
        for proc in [append(env, root / f"w{args.trials}.toml", f"writer {i}") for i in range(writers)]:
            wait_ok(proc)
        wall, cpu = time.perf_counter() - t0, children_cpu_s() - c0
        trials = load_session(root / f"w{args.trials}.toml").trials
        landed = sorted(t.label for t in trials if t.label.startswith("writer "))
        unique = len({t.id for t in trials}) == len(trials) == args.trials + args.repeat + writers
        print(f"  {writers} writers at once: {wall:.2f} s (cpu {cpu:.2f} s); {len(landed)} of {writers} trials in the "
              f"file, ids unique: {unique}  {'OK' if len(landed) == writers and unique else 'LOST'}")

if __name__ == "__main__":
    main()
