"""Cold start: time from exec of the real program to its first full frame, against a minimal Textual app
(issue 16 target: p50 ≤ 1.3× the minimal app's p50, measured in the same run).

Starts `specdec-tui --session FILE` (offline, a 3-trial session), `specdec-tui --demo` and
`bench/minimal_app.py` (the floor: Python + Textual + one small frame) on a pty, interleaved — minimal,
offline, demo, minimal, offline, demo, … — so load from anything else on the machine hits all alike, and
times exec → the footer's text on screen (the footer is the last thing the first frame draws). Each run
gets its own config/data/state dirs, so no earlier draft or session is involved. Prints p50/p90/max per
mode and each real mode's p50 as a ratio of the minimal app's p50; exits 1 when a ratio is over target.
The panel's first frame shows the unit as text; its flag form, editor and diff are mounted right after, so
for the real modes it also prints when the form is on screen (the diff's title, which only the form draws): what
the operator waits for before editing (issue 34 target: p50 ≤ 1.5× the minimal app's first frame).
The demo's server may finish starting after the first frame: only the frames are timed.

The package is byte-compiled first (as `pip install` does): with PYTHONDONTWRITEBYTECODE set, as in some
shells and CI, every start would otherwise compile ~100 of our modules from source (~120 ms) while Textual's
come compiled from site-packages, and the ratio would measure the compiler, not the start.

`--before REF` also starts the package as of a git ref (its src/ exported with `git archive`, byte-compiled the
same way), interleaved with this checkout's: a change to the start measured before and after in one run. The
target is judged on this checkout's figures.

    python bench/cold_start.py              # 7 runs of each mode
    python bench/cold_start.py --runs 10 --mode offline
    python bench/cold_start.py --before main
"""

from __future__ import annotations

import argparse
import compileall
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

from ref_tree import export_tree

TARGET_RATIO = 1.3  # a real mode's p50 over the minimal app's p50
FORM_TARGET_RATIO = 1.5  # the form-ready frame's p50 over the minimal app's (first frame) p50
MINIMAL_APP = Path(__file__).with_name("minimal_app.py")
FOOTER_TEXT = "palette"  # the footer's "^p palette": drawn with the first full frame
FORM_TEXT = "diff vs host"  # the diff view's title: drawn once the Config tab's form, editor and diff are mounted
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[PX^_].*?\x1b\\|\x1b\][^\x07]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")


def write_session(path: Path) -> None:
    """A session like the seed's: steps 1 → 2 → 3, five levels each."""
    from specdec_tui.core.results import LevelResult, ServerFacts
    from specdec_tui.core.session import Session, Trial, save_session
    from specdec_tui.core.unit import UnitFile
    from specdec_tui.hosts.local.workspace import demo_unit_text

    base = UnitFile.parse(demo_unit_text(30000))
    trials = []
    for i, (steps, c1, mrr) in enumerate(zip((1, 2, 3), (123.0, 186.0, 234.0), (26, 21, 17), strict=True), start=1):
        unit = base.set_flags({"speculative-num-steps": str(steps), "speculative-num-draft-tokens": str(steps + 1)})
        levels = [LevelResult(concurrency=c, requests=32, output_tok_s=c1 * min(c, mrr) / (1 + 0.04 * c)) for c in (1, 4, 16, 32, 64)]
        trials.append(Trial(id=i, unit_text=unit.text, flags=unit.flags(), status="ok", label=f"steps={steps}",
                            facts=ServerFacts(model="qwen", max_running_requests=mrr), levels=levels))
    save_session(Session(host="demo", unit="sglang-demo.service", trials=trials), path)


def first_frame_s(argv: list[str], env: dict[str, str], timeout: float = 20.0) -> float:
    """Seconds from exec to FOOTER_TEXT in the pty output; then the program is asked to quit."""
    return frames_s(argv, env, timeout)[0]


def frames_s(argv: list[str], env: dict[str, str], timeout: float = 20.0, *,
             then: str | None = None) -> tuple[float, float | None]:
    """Seconds from exec to FOOTER_TEXT in the pty output and, with `then`, to that text too (None without);
    then the program is asked to quit."""
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True, close_fds=True)
    os.close(slave)
    seen = b""
    elapsed: float | None = None
    later: float | None = None
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
            text = ANSI.sub(b"", seen)
            if elapsed is None and FOOTER_TEXT.encode() in text:
                elapsed = time.perf_counter() - start
            if then is not None and later is None and then.encode() in text:
                later = time.perf_counter() - start
            if elapsed is not None and (then is None or later is not None):
                break
        if elapsed is None or (then is not None and later is None):
            tail = ANSI.sub(b"", seen)[-400:].decode(errors="replace")
            what = "first frame" if elapsed is None else repr(then)
            raise RuntimeError(f"no {what} within {timeout:.0f} s (exit {proc.poll()}): {tail!r}")
        return elapsed, later
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


def run_once(mode: str, tree: Path | None = None) -> tuple[float, float | None]:
    """One cold start of `mode` ("minimal", "offline" or "demo") in fresh config/data/state dirs: seconds to
    the first frame and (the real modes) to the form. `tree`: run that exported package (`--before`)."""
    exe = [sys.executable, "-m", "specdec_tui.cli.main"]
    with tempfile.TemporaryDirectory(prefix="coldstart-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", "HOME": str(root),
               "XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
               "XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "cache")}
        if tree is not None:  # its package first on the path (the demo's server process inherits it)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / "src"), env.get("PYTHONPATH", "")]))
        if mode == "minimal":
            argv = [sys.executable, str(MINIMAL_APP)]
        elif mode == "offline":
            session = root / "session.toml"
            write_session(session)
            argv = [*exe, "--session", str(session)]
        else:
            argv = [*exe, "--demo"]
        return frames_s(argv, env, then=None if mode == "minimal" else FORM_TEXT)


def byte_compile_package() -> None:
    """Write the bytecode of the specdec_tui that the runs import (its __pycache__, as an install would)."""
    import specdec_tui

    compileall.compile_dir(Path(specdec_tui.__file__).parent, quiet=1)


def run_interleaved(modes: tuple[str, ...], runs: int, before: tuple[str, Path] | None = None,
                    ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """`runs` rounds of every mode in turn, so a burst of load elsewhere falls on all modes, not on one: the
    first frame's times per mode, and the form's (real modes only). With `before` (a ref and its exported tree),
    each real mode also runs on that package, labelled "REF mode", right before this checkout's."""
    labels: list[tuple[str, str, Path | None]] = []
    for mode in modes:
        if before is not None and mode != "minimal":
            labels.append((f"{before[0]} {mode}", mode, before[1]))
        labels.append((mode, mode, None))
    times: dict[str, list[float]] = {label: [] for label, _, _ in labels}
    forms: dict[str, list[float]] = {label: [] for label, mode, _ in labels if mode != "minimal"}
    for _ in range(runs):
        for label, mode, tree in labels:
            frame, form = run_once(mode, tree)
            times[label].append(frame)
            if form is not None:
                forms[label].append(form)
    return times, forms


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--mode", choices=("offline", "demo", "both"), default="both",
                        help="the real mode(s) to time; the minimal app is always timed beside them")
    parser.add_argument("--before", metavar="REF", help="also time the package as of this git ref, interleaved")
    args = parser.parse_args()
    real = ("offline", "demo") if args.mode == "both" else (args.mode,)
    print(f"cold start: exec → first full frame (footer visible), {args.runs} interleaved runs per mode "
          f"(target: p50 ≤ {TARGET_RATIO:.1f}× the minimal Textual app's p50; the form ready ≤ {FORM_TARGET_RATIO:.1f}×)"
          + (f"; '{args.before} …' = the package as of that ref, the rest = this checkout" if args.before else ""))
    byte_compile_package()
    with tempfile.TemporaryDirectory(prefix="coldstart-before-") as tmp:
        before = None
        if args.before:
            tree = export_tree(args.before, Path(tmp))
            compileall.compile_dir(tree / "src", quiet=1)  # as this checkout's (byte_compile_package)
            before = (args.before, tree)
        times, forms = run_interleaved(("minimal", *real), args.runs, before)
    floor = statistics.median(times["minimal"])
    worst = 0.0
    width = max(len(label) for label in times)
    for label, values in times.items():
        p50, p90 = statistics.median(values), pct(values, 0.9)
        line = f"  {label:<{width}} p50 {p50 * 1000:7.0f} ms   p90 {p90 * 1000:7.0f} ms   max {max(values) * 1000:7.0f} ms"
        if label != "minimal":
            ratio = p50 / floor
            if label in real:
                worst = max(worst, ratio / TARGET_RATIO)
            line += f"   {ratio:4.2f}× minimal   {'OK' if ratio <= TARGET_RATIO else 'OVER TARGET'}"
        print(line)
    for label, values in forms.items():
        p50 = statistics.median(values)
        ratio = p50 / floor
        if label in real:
            worst = max(worst, ratio / FORM_TARGET_RATIO)
        print(f"  {label:<{width}} form ready (\"{FORM_TEXT}\" on screen): p50 {p50 * 1000:7.0f} ms   "
              f"p90 {pct(values, 0.9) * 1000:7.0f} ms   {ratio:4.2f}× minimal   "
              f"{'OK' if ratio <= FORM_TARGET_RATIO else 'OVER TARGET'}")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
