"""Cold start: time from exec of the real program to its first full frame (issue 8 target: ≤ 1.0 s).

Starts `specdec-tui --session FILE` (offline, a 3-trial session) and `specdec-tui --demo` on a pty N
times each and times exec → the footer's text on screen (the footer is the last thing the first frame
draws). Each run gets its own config/data/state dirs, so no earlier draft or session is involved.
Prints p50/p90/max per mode.

    python bench/cold_start.py              # 5 runs of each mode
    python bench/cold_start.py --runs 10 --mode offline
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 1.0
FOOTER_TEXT = "palette"  # the footer's "^p palette": drawn with the first full frame
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[PX^_].*?\x1b\\|\x1b\][^\x07]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")


def write_session(path: Path) -> None:
    """A session like the seed's: steps 1 → 2 → 3, five levels each."""
    from specdec_tui.hosts.local.workspace import demo_unit_text

    from specdec_tui.core.results import LevelResult, ServerFacts
    from specdec_tui.core.session import Session, Trial, save_session
    from specdec_tui.core.unit import UnitFile

    base = UnitFile.parse(demo_unit_text(30000))
    trials = []
    for i, (steps, c1, mrr) in enumerate(zip((1, 2, 3), (123.0, 186.0, 234.0), (26, 21, 17)), start=1):
        unit = base.set_flags({"speculative-num-steps": str(steps), "speculative-num-draft-tokens": str(steps + 1)})
        levels = [LevelResult(concurrency=c, requests=32, output_tok_s=c1 * min(c, mrr) / (1 + 0.04 * c)) for c in (1, 4, 16, 32, 64)]
        trials.append(Trial(id=i, unit_text=unit.text, flags=unit.flags(), status="ok", label=f"steps={steps}",
                            facts=ServerFacts(model="qwen", max_running_requests=mrr), levels=levels))
    save_session(Session(host="demo", unit="sglang-demo.service", trials=trials), path)


def first_frame_s(argv: list[str], env: dict[str, str], timeout: float = 20.0) -> float:
    """Seconds from exec to FOOTER_TEXT in the pty output; then the program is asked to quit."""
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True, close_fds=True)
    os.close(slave)
    seen = b""
    elapsed = None
    try:
        deadline = start + timeout
        while time.perf_counter() < deadline and proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 0.01)
            if not ready:
                continue
            try:
                seen += os.read(master, 1 << 16)
            except (BlockingIOError, OSError):
                continue
            if FOOTER_TEXT.encode() in ANSI.sub(b"", seen):
                elapsed = time.perf_counter() - start
                break
        if elapsed is None:
            tail = ANSI.sub(b"", seen)[-400:].decode(errors="replace")
            raise RuntimeError(f"no first frame within {timeout:.0f} s (exit {proc.poll()}): {tail!r}")
        return elapsed
    finally:
        _quit(proc, master)


def _quit(proc: subprocess.Popen, master: int) -> None:
    """q (then y if it asks), else SIGTERM to the program's own process group."""
    for keys in (b"q", b"y"):
        try:
            os.write(master, keys)
        except OSError:
            break
        try:
            proc.wait(3)
            break
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    os.close(master)


def run_mode(mode: str, runs: int) -> list[float]:
    exe = [sys.executable, "-m", "specdec_tui.cli.main"]
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="coldstart-") as tmp:
            root = Path(tmp)
            env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", "HOME": str(root),
                   "XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
                   "XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "cache")}
            if mode == "offline":
                session = root / "session.toml"
                write_session(session)
                argv = [*exe, "--session", str(session)]
            else:
                argv = [*exe, "--demo"]
            times.append(first_frame_s(argv, env))
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mode", choices=("offline", "demo", "both"), default="both")
    args = parser.parse_args()
    modes = ("offline", "demo") if args.mode == "both" else (args.mode,)
    print(f"cold start: exec → first full frame (footer visible), {args.runs} runs per mode (target ≤ {TARGET_S:.1f} s)")
    worst = 0.0
    for mode in modes:
        times = run_mode(mode, args.runs)
        p50, p90 = statistics.median(times), pct(times, 0.9)
        worst = max(worst, p90)
        verdict = "OK" if p90 <= TARGET_S else "OVER TARGET"
        print(f"  {mode:<8} p50 {p50 * 1000:7.0f} ms   p90 {p90 * 1000:7.0f} ms   max {max(times) * 1000:7.0f} ms   {verdict}")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
