"""A 10,000-trial session (issue 36, point 13): `session show`, the HTML export and the panel's first frame,
each beside the same thing on a 3-trial session measured in the same run (the anchor: Python, the imports,
Textual). Targets: show < 1 s, export < 10 s, the panel's first frame as on the small session (its trials are
loaded after that frame).

The session is long_session.py's (the seed's shapes: five levels a trial, full distributions, facts, a few
failed trials), written once. Each figure is the real command in a subprocess, wall clock, best of --repeat.

    python bench/huge_session.py               # 10,000 trials
    python bench/huge_session.py --trials 2000 --repeat 1
"""

from __future__ import annotations

import argparse
import os
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


def best_s(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        action()
        times.append(time.perf_counter() - t0)
    return min(times)


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
            verdict = "OK" if huge < TARGETS_S[name] else "SLOW"
            print(f"  {name:30s} {huge:8.2f} s   (3 trials: {small:.2f} s)   target < {TARGETS_S[name]:g} s  {verdict}")
        panel_env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        frame = [sys.executable, "-m", "specdec_tui.cli.main", "--session"]
        small = best_s(lambda: first_frame_s([*frame, str(files[3])], panel_env, 120), args.repeat)
        huge = best_s(lambda: first_frame_s([*frame, str(files[args.trials])], panel_env, 120), args.repeat)
        verdict = "OK" if huge < small * 1.3 else "SLOW"
        print(f"  {'panel: first frame':30s} {huge:8.2f} s   (3 trials: {small:.2f} s)   target ≈ the anchor  {verdict}")


if __name__ == "__main__":
    main()
