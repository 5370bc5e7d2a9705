"""Idle CPU of the panel on the demo host (issue 16 target: < 2 % of one core over 60 s).

Starts the real program `python -m specdec_tui.cli.main --demo` on a 160x48 pty (its own config/data/state
dirs, so no earlier draft or session is involved), waits for the first frame and for the demo server's
/health to answer 200 on loopback, lets it settle, then reads the panel process's own utime+stime from
/proc/PID/stat over `--seconds`. Only the panel's process counts: the local supervisor and the simulated
server run as separate processes (the process tree is printed with each one's CPU over the same window).
The anchor is the smallest Textual app with the same frame (bench/minimal_app.py, cold_start.py's floor too)
measured the same way.

    python bench/idle_cpu.py                   # 60 s of each, default tab
    python bench/idle_cpu.py --seconds 30 --tab 2 --no-anchor
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

TARGET_PCT = 2.0
COLS, ROWS = 160, 48
FOOTER_TEXT = b"palette"  # the footer's "^p palette": drawn with the first full frame
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[PX^_].*?\x1b\\|\x1b\][^\x07]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")
TICK = os.sysconf("SC_CLK_TCK")
HERE = Path(__file__).resolve().parent


def cpu_ticks(pid: int) -> int:
    """utime + stime of one process (all its threads, none of its children), in clock ticks."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after the comm


def ppid_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def session_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[3])


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)


def related(root: int, home: Path) -> list[int]:
    """The panel's descendants plus any process whose command line names this run's temp dir (the local
    supervisor detaches into its own session, so it is not always a child)."""
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == root:
            continue
        pid = int(entry.name)
        try:
            chain, p = [], pid
            while p > 1 and len(chain) < 50:
                p = ppid_of(p)
                chain.append(p)
            if root in chain or str(home) in cmdline(pid) or _env_names(pid, home):
                out.append(pid)
        except (OSError, ValueError):
            continue
    return sorted(out)


def _env_names(pid: int, home: Path) -> bool:
    try:
        return str(home).encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


@dataclass
class Run:
    label: str
    pct: float = 0.0
    terminal_note: str = ""
    tree: list[tuple[int, int, float, str]] = field(default_factory=list)  # pid, ppid, % of a core, cmdline


class Pty:
    """The program on a pty of COLS x ROWS; a thread drains its output so it never blocks on a full pty."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.seen = bytearray()
        self.bytes_out = 0
        self._lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._stop:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.bytes_out += len(chunk)
                self.seen += chunk
                del self.seen[: max(0, len(self.seen) - (1 << 20))]

    def screen_has(self, needle: bytes) -> bool:
        with self._lock:
            return needle in ANSI.sub(b"", bytes(self.seen))

    def wait_for(self, needle: bytes, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited {self.proc.returncode}: {self.tail()!r}")
            if self.screen_has(needle):
                return
            time.sleep(0.1)
        raise RuntimeError(f"{needle!r} not on screen within {timeout:.0f} s: {self.tail()!r}")

    def tail(self) -> str:
        with self._lock:
            return ANSI.sub(b"", bytes(self.seen))[-400:].decode(errors="replace")

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def quit(self) -> None:
        """q (then y if it asks), else SIGTERM to the program's own process group."""
        for keys in (b"q", b"y"):
            try:
                self.send(keys)
            except OSError:
                break
            try:
                self.proc.wait(3)
                break
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._stop = True
        self._thread.join(2)
        os.close(self.master)


def run_env(root: Path) -> dict[str, str]:
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLS), "LINES": str(ROWS), "HOME": str(root),
           "XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
           "XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "cache")}
    for name in ("SPECDEC_TUI_CONFIG_DIR", "SPECDEC_TUI_DATA_DIR"):
        env.pop(name, None)
    return env


def demo_port(root: Path, timeout: float) -> int:
    """The demo server's port, from the unit the panel wrote into this run's demo workspace."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for unit in root.glob("data/**/demo/units/*.service"):
            found = re.search(r"--port[ \t=]+(\d+)", unit.read_text())
            if found:
                return int(found.group(1))
        time.sleep(0.2)
    raise RuntimeError(f"no demo unit under {root} within {timeout:.0f} s")


def wait_healthy(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"demo /health on port {port} not 200 within {timeout:.0f} s")


def measure(label: str, argv: list[str], *, seconds: float, settle: float, demo: bool, tab: int | None) -> Run:
    with tempfile.TemporaryDirectory(prefix="idlecpu-") as tmp:
        root = Path(tmp)
        term = Pty(argv, run_env(root))
        try:
            term.wait_for(FOOTER_TEXT, 30)
            if demo:
                wait_healthy(demo_port(root, 30), 60)
            if tab is not None:
                term.send(str(tab).encode())
            time.sleep(settle)
            pid = term.proc.pid
            others = related(pid, root)
            t0, c0, b0 = time.monotonic(), cpu_ticks(pid), term.bytes_out
            c0_others = {p: _ticks_or_none(p) for p in others}
            time.sleep(seconds)
            t1, c1, b1 = time.monotonic(), cpu_ticks(pid), term.bytes_out
            wall = t1 - t0
            run = Run(label, pct=100 * (c1 - c0) / TICK / wall,
                      terminal_note=f"{(b1 - b0) / wall:.0f} B/s written to the terminal")
            run.tree.append((pid, ppid_of(pid), run.pct, cmdline(pid)))
            for p in others:
                end = _ticks_or_none(p)
                before = c0_others.get(p)
                if end is None or before is None:
                    continue
                run.tree.append((p, ppid_of(p), 100 * (end - before) / TICK / wall, cmdline(p)))
            return run
        finally:
            term.quit()


def _ticks_or_none(pid: int) -> int | None:
    try:
        return cpu_ticks(pid)
    except OSError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measurement window (default 60)")
    parser.add_argument("--settle", type=float, default=5.0, help="wait after the server is healthy (default 5)")
    parser.add_argument("--tab", type=int, default=None, help="press this tab's number key before measuring (1-6)")
    parser.add_argument("--no-anchor", action="store_true", help="skip the minimal-app anchor")
    args = parser.parse_args()
    py = sys.executable
    print(f"idle CPU over {args.seconds:.0f} s after the demo is healthy + {args.settle:.0f} s, pty {COLS}x{ROWS}"
          f" (target < {TARGET_PCT:.0f} % of a core; clock tick 1/{TICK} s)")
    panel = measure("panel --demo" + (f" tab {args.tab}" if args.tab else ""), [py, "-m", "specdec_tui.cli.main", "--demo"],
                    seconds=args.seconds, settle=args.settle, demo=True, tab=args.tab)
    runs = [panel]
    if not args.no_anchor:
        runs.append(measure("anchor (minimal app)", [py, str(HERE / "minimal_app.py")],
                            seconds=args.seconds, settle=args.settle, demo=False, tab=None))
    for run in runs:
        verdict = "" if run is not panel else ("  OK" if run.pct < TARGET_PCT else "  OVER TARGET")
        print(f"  {run.label:<22} {run.pct:5.2f} % of a core   ({run.terminal_note}){verdict}")
    print("process tree of the panel run (only the first row is counted):")
    for pid, ppid, pct, cmd in panel.tree:
        print(f"  pid {pid:>7} ppid {ppid:>7} {pct:5.2f} %  {cmd[:110]}")
    return 0 if panel.pct < TARGET_PCT else 1


if __name__ == "__main__":
    sys.exit(main())
