"""Cold start in instructions: what `cold_start.py` times, counted by valgrind (callgrind), so a change to the start
shows as a number that does not move with the machine's load (issue 16).

`cold_start.py` is the judge (wall time against the minimal app, interleaved), but on a shared 2-core VM its rounds
spread ±0.1 in ratio, wider than most single changes to the start. This counts the instructions each program runs
from exec to the first frame it writes with the footer's keys (what `cold_start.py` waits for: the footer's
"palette"), for the minimal app, `--session FILE` and `--demo`, and prints each real mode beside the minimal app
counted in the same run. A program is stopped right there (`os._exit` in the probe below), so nothing after the
first frame is counted. Counts repeat to ~0.1 % (the hash seed is fixed; each run has fresh config/data dirs).

Needs valgrind (`apt install valgrind`); each count takes 40-60 s (valgrind runs the program ~50× slower), the
modes run side by side, one per core.

    python bench/start_instructions.py                  # minimal, offline and demo
    python bench/start_instructions.py --mode demo
    python bench/start_instructions.py --until form    # to the form-ready frame (the Config pane on screen)
"""

from __future__ import annotations

import argparse
import compileall
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cold_start import MINIMAL_APP, write_session  # noqa: E402  (a sibling script, not a package)

# Run in the measured interpreter: the program itself, stopped at its first frame written with the footer's keys.
PROBE = """
import os, runpy, sys
import textual.app

display = textual.app.App._display
FORM = os.environ.get("STARTINSTR_UNTIL") == "form"

def drawn(screen):
    if FORM:  # the Config pane swapped in for the unit's preview: the form-ready frame ("diff vs host")
        return any(pane.display for pane in screen.query("#config-pane"))
    return bool(list(screen.query("FooterKey")))

def first_frame(self, screen, renderable):
    if renderable is not None and not self._batch_count and drawn(screen):
        os._exit(0)  # a frame the terminal gets (none while a batch holds frames back), what is waited for drawn
    return display(self, screen, renderable)

textual.app.App._display = first_frame
target = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(target, run_name="__main__") if target.endswith(".py") else runpy.run_module(target, run_name="__main__")
"""
COLLECTED = re.compile(rb"Collected : (\d+)")


def count(mode: str, until: str = "frame") -> int:
    """Instructions from exec to the first frame of `mode` ("minimal", "offline" or "demo"); with `until`
    "form", to the frame that first shows the Config pane's form (the minimal app: its first frame still)."""
    with tempfile.TemporaryDirectory(prefix="startinstr-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", "PYTHONHASHSEED": "0",
               "HOME": str(root), "XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
               "XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "cache"),
               "STARTINSTR_UNTIL": "frame" if mode == "minimal" else until}
        if mode == "minimal":
            program = [str(MINIMAL_APP)]
        elif mode == "offline":
            write_session(root / "session.toml")
            program = ["specdec_tui.cli.main", "--session", str(root / "session.toml")]
        else:
            program = ["specdec_tui.cli.main", "--demo"]
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={root / 'callgrind.out'}",
                sys.executable, "-c", PROBE, *program]
        master, slave = pty.openpty()  # a terminal, as the real start has
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        seen = b""
        while True:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    seen += os.read(master, 1 << 16)
                except OSError:
                    break
            elif proc.poll() is not None:
                break
        proc.wait()
        os.close(master)
        found = COLLECTED.search(seen)
        if found is None:
            raise RuntimeError(f"{mode}: no count from valgrind: {seen[-400:].decode(errors='replace')!r}")
        return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("offline", "demo", "both"), default="both")
    parser.add_argument("--until", choices=("frame", "form"), default="frame",
                        help="count to the first frame (default) or to the frame that shows the form (issue 34: "
                             "≤ 1.5× the minimal app's first frame)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind): nothing counted")
        return 2
    import specdec_tui

    compileall.compile_dir(Path(specdec_tui.__file__).parent, quiet=1)  # as an install would (see cold_start.py)
    modes = ("minimal", *(("offline", "demo") if args.mode == "both" else (args.mode,)))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        counts = dict(zip(modes, pool.map(lambda mode: count(mode, args.until), modes), strict=True))
    what = "the form's first frame" if args.until == "form" else "first frame with the footer's keys"
    print(f"cold start in instructions: exec → {what} (valgrind callgrind; the minimal app: its first frame)")
    for mode, n in counts.items():
        ratio = "" if mode == "minimal" else f"   {n / counts['minimal']:4.2f}× minimal"
        print(f"  {mode:<8} {n / 1e6:8.1f} M instructions{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
