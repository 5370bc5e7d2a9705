"""Cold start in CPU time: this process's CPU (user + system, `time.process_time`) from exec to the form's first frame,
for `--session FILE` and `--demo`, beside the package as of `--before REF` in the same run, interleaved.

`start_instructions.py` counts instructions (the figure that does not move with load, but valgrind runs the program
~50× slower); `cold_start.py` is the judge in wall time, which on a shared 2-core machine moves ±0.1 in ratio with
the load. CPU time moves less than wall time (no waiting for a core is counted), and it runs at full speed. Prints
each run, the medians and the load average.

    python bench/start_cpu.py --before main            # 9 runs of each
    python bench/start_cpu.py --before HEAD~3 --runs 15
"""

from __future__ import annotations

import argparse
import compileall
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cold_start import write_session
from ref_tree import export_tree

# Run in the measured interpreter: the program, stopped at the first frame that shows the Config pane's form.
PROBE = """
import os, runpy, sys, time
import textual.app

display = textual.app.App._display

def form_frame(self, screen, renderable):
    if renderable is not None and not self._batch_count and any(p.display for p in screen.query("#config-pane")):
        with open(os.environ["STARTCPU_OUT"], "w") as out:
            out.write(repr(time.process_time()))
        os._exit(0)
    return display(self, screen, renderable)

textual.app.App._display = form_frame
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__")
"""


def cpu_s(src: Path, mode: str) -> float:
    """CPU seconds of one start of the package at `src` in `mode` ("offline" or "demo") to its form's first frame."""
    with tempfile.TemporaryDirectory(prefix="startcpu-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", "HOME": tmp,
               "XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
               "XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "cache"),
               "PYTHONPATH": str(src), "STARTCPU_OUT": str(root / "cpu")}
        program = ["specdec_tui.cli.main", "--demo"]
        if mode == "offline":
            write_session(root / "session.toml")
            program = ["specdec_tui.cli.main", "--session", str(root / "session.toml")]
        master, slave = pty.openpty()  # a terminal, as the real start has
        proc = subprocess.Popen([sys.executable, "-c", PROBE, *program], stdin=slave, stdout=slave, stderr=slave,
                                env=env, start_new_session=True)
        os.close(slave)
        while proc.poll() is None:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    os.read(master, 1 << 16)
                except OSError:
                    break
        proc.wait()
        os.close(master)
        return float((root / "cpu").read_text())


def package_of(src: Path) -> str:
    """Where a start with `src` first on the path imports the package from (that the ref's tree is the one run)."""
    found = subprocess.run([sys.executable, "-c", "import specdec_tui; print(specdec_tui.__file__)"], env={
        **os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=True).stdout.strip()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a git ref: its package is started beside this checkout's")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent / "src"
    with tempfile.TemporaryDirectory(prefix="startcpu-ref-") as tmp:
        trees = {args.before: export_tree(args.before, Path(tmp)) / "src", "this": here}
        for tree in trees.values():
            compileall.compile_dir(tree, quiet=1)  # as an install would (see cold_start.py)
            if not package_of(tree).startswith(str(tree)):
                raise SystemExit(f"{tree}: the package is imported from {package_of(tree)}, not from there")
        print(f"cold start in CPU time: exec → the form's first frame, {args.runs} interleaved runs per mode")
        for mode in ("offline", "demo"):
            runs: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    runs[name].append(cpu_s(tree, mode))
            for name, times in runs.items():
                each = " ".join(f"{t * 1000:.0f}" for t in times)
                print(f"  {mode:<8} {name:<12} median {statistics.median(times) * 1000:6.1f} ms CPU   ({each})")
    print("load average: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
