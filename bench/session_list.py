"""`session list` and the panel's `o` screen over many long sessions (issue 36's leftover): each row from the
session's index (the cache's first line, `core.session_index.load_listing`) beside the whole read each row took
before (`load_session` of every file, through the same cache), measured in the same run on the same files.

The sessions are long_session.py's (the seed's shapes: five levels a trial, full distributions, facts), written
once and copied under other hosts and dates. Figures: the rows `loop.sessions.list_sessions` gives (what the `o`
screen shows) and the whole read, in-process, best of --repeat, wall clock and this process's CPU time; then the
real `specdec-tui session list` command in a subprocess, with the same anchor (a subprocess reading every file
whole and printing the count).

    python bench/session_list.py                  # 20 sessions of 1,000 trials
    python bench/session_list.py --sessions 5 --trials 200 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from long_session import make_session  # noqa: E402  (bench/ scripts, run from anywhere)

from specdec_tui.core.session import load_session, save_session  # noqa: E402
from specdec_tui.loop.sessions import list_sessions  # noqa: E402

WHOLE = "import sys; from pathlib import Path; from specdec_tui.core.session import load_session; " \
        "print(sum(len(load_session(p).trials) for p in sorted(Path(sys.argv[1]).glob('*.toml'))))"


def cpu_s(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def best(action: Callable[[], object], repeat: int, who: int = resource.RUSAGE_SELF) -> tuple[float, float]:
    """The best (wall clock, CPU) of `repeat` runs of `action`."""
    runs = []
    for _ in range(repeat):
        c0, t0 = cpu_s(who), time.perf_counter()
        action()
        runs.append((time.perf_counter() - t0, cpu_s(who) - c0))
    return min(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="session-list-"))
    try:
        data = root / "data"
        directory = data / "sessions"
        directory.mkdir(parents=True)
        base = make_session(args.trials)
        t0 = time.perf_counter()
        for n in range(args.sessions):
            base.host, base.created = f"gpu-box-{n}", base.created + timedelta(days=1)
            base.disk_stamp = None
            save_session(base, directory / f"s{n:02d}.toml")
        print(f"{args.sessions} sessions of {args.trials} trials written in {time.perf_counter() - t0:.1f} s "
              f"({sum(p.stat().st_size for p in directory.glob('*.toml')) / 1e6:.0f} MB of TOML)")
        rows = list_sessions(directory)
        assert len(rows) == args.sessions and all(r.trials == args.trials and not r.problem for r in rows), rows[:1]
        whole_wall, whole_cpu = best(lambda: [load_session(p) for p in directory.glob("*.toml")], args.repeat)
        list_wall, list_cpu = best(lambda: list_sessions(directory), args.repeat)
        print(f"rows (the o screen):  {list_wall * 1000:8.1f} ms wall {list_cpu * 1000:8.1f} ms CPU   "
              f"anchor, every session read whole: {whole_wall * 1000:8.1f} ms wall {whole_cpu * 1000:8.1f} ms CPU   "
              f"({whole_cpu / max(list_cpu, 1e-9):.0f}× less CPU)")

        env = {**os.environ, "SPECDEC_TUI_DATA_DIR": str(data), "SPECDEC_TUI_CONFIG_DIR": str(root / "config"),
               "NO_COLOR": "1", "COLUMNS": "120"}
        empty_env = {**env, "SPECDEC_TUI_DATA_DIR": str(root / "empty")}
        cli = [sys.executable, "-m", "specdec_tui", "session", "list"]
        out = subprocess.run(cli, env=env, capture_output=True, text=True, check=True).stdout
        assert "gpu-box-0" in out, out[:400]
        run_cli = lambda: subprocess.run(cli, env=env, capture_output=True, check=True)  # noqa: E731
        run_whole = lambda: subprocess.run([sys.executable, "-c", WHOLE, str(directory)], env=env,  # noqa: E731
                                           capture_output=True, check=True)
        run_empty = lambda: subprocess.run(cli, env=empty_env, capture_output=True, check=True)  # noqa: E731
        cli_wall, cli_cpu = best(run_cli, args.repeat, resource.RUSAGE_CHILDREN)
        empty_wall, empty_cpu = best(run_empty, args.repeat, resource.RUSAGE_CHILDREN)
        anchor_wall, anchor_cpu = best(run_whole, args.repeat, resource.RUSAGE_CHILDREN)
        print(f"`session list`:       {cli_wall * 1000:8.1f} ms wall {cli_cpu * 1000:8.1f} ms CPU   "
              f"anchors: the command with no session {empty_wall * 1000:.1f} ms wall {empty_cpu * 1000:.1f} ms CPU; "
              f"a process reading every session whole {anchor_wall * 1000:.1f} ms wall {anchor_cpu * 1000:.1f} ms CPU")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
