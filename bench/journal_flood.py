"""Journal flood: does the panel stay responsive while SGLang logs thousands of lines a second?

The real path (default): a local host whose service is `bench/flood_producer.py`: silent for `--quiet` s, then
printing realistic SGLang lines at `--rate` lines/s for `--seconds`; the local supervisor writes them to the host's
journal, `LocalHost.journal` follows it, and the real app (`make_app`, headless, with the real program's
`ui.gc_policy`) reads it through its own journal worker (`HostLink`) into the pane — while a key is pressed every
`--key-interval` s (tab switches, scrolling). The keys of the quiet part are the anchor, measured in the same run.
Lines sent (the producer's last line says how many) are compared with the journal pane's own count. The panel
parses the journal in a child process (`loop.journal_offload`): its CPU and peak RSS are printed beside the
panel's, and the RSS target counts both.
`--host-app`: the pane alone in a stand-in app, records pushed straight into it (no host, no worker).
Keys are typed as a terminal types them (`type_key`: the driver posts each Key event; nothing waits for idle).
Key-to-screen latency is the time from just before the key is posted to the end of the first screen
refresh after the key was handled (`call_after_refresh`). Prints p50/p99/max, by key, and peak RSS.

    python bench/journal_flood.py                           # 30 s at 5,000 lines/s, 160x48
    python bench/journal_flood.py --seconds 30 --rate 20000
    python bench/journal_flood.py --seconds 10 --keep-gc    # without the gc policy, for comparison
Targets: p99 < 100 ms at 5,000 lines/s, < 150 ms at 20,000; peak RSS < 200 MB; no line lost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import socket
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Static, TabbedContent, TabPane

from specdec_tui.hosts.base import JournalRecord
from specdec_tui.ui.widgets.journal_pane import JournalPane

APP_KEYS = ("2", "pageup", "pageup", "up", "down", "end", "3", "2", "pageup", "end", "4", "2")
HOST_KEYS = ("pageup", "pageup", "up", "down", "end", "ctrl+pagedown", "pageup", "end")


def type_key(app: App, key: str) -> None:
    """A key as a terminal delivers it: the driver posts the Key event to the app from its input thread
    (`Driver.send_message`), and nothing waits. `pilot.press` would also wait for the whole screen to go idle
    after each key (a callback queued on every widget), work a real terminal never causes: under a flood it
    cost the panel a fifth of its CPU and was counted in the keys' latency."""
    driver = app._driver
    assert driver is not None, "the app is not running"
    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    driver.send_message(event)


def sglang_lines(count: int, seed: int = 7) -> list[str]:
    """A pool of lines in SGLang's own formats: decode/prefill batches, access log, a rare error."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        stamp = f"[2025-03-01 14:{i // 600 % 60:02d}:{i // 10 % 60:02d} TP{i % 4}]"
        roll = rng.random()
        if roll < 0.70:
            running = rng.randint(1, 64)
            lines.append(
                f"{stamp} Decode batch, #running-req: {running}, #token: {rng.randint(500, 90000)}, "
                f"token usage: {rng.random():.2f}, accept len: {rng.uniform(1.5, 4.0):.2f}, "
                f"accept rate: {rng.uniform(0.4, 0.95):.2f}, cuda graph: True, "
                f"gen throughput (token/s): {rng.uniform(100, 2500):.2f}, #queue-req: {rng.randint(0, 20)}, "
            )
        elif roll < 0.85:
            lines.append(
                f"{stamp} Prefill batch, #new-seq: {rng.randint(1, 8)}, #new-token: {rng.randint(64, 8192)}, "
                f"#cached-token: {rng.randint(0, 4096)}, token usage: {rng.random():.2f}, "
                f"#running-req: {rng.randint(0, 64)}, #queue-req: {rng.randint(0, 20)}, "
            )
        elif roll < 0.995:
            lines.append(f'INFO:     127.0.0.1:{rng.randint(30000, 60000)} - "POST /v1/completions HTTP/1.1" 200 OK')
        else:
            lines.append(f"{stamp} Scheduler hit an exception: RuntimeError: CUDA error: out of memory")
    return lines


class FloodHost(App[None]):
    """Stand-in shell when the real app cannot be built: the journal in one tab, a second tab to switch to."""

    def compose(self) -> ComposeResult:
        with TabbedContent():
            with TabPane("Journal", id="journal"):
                yield JournalPane(max_lines=5000, id="journal-pane")
            with TabPane("Other", id="other"):
                yield Static("another tab")


def build_app(host_only: bool) -> tuple[App, str]:
    """The stand-in app (`--host-app`); the real panel runs in `run_real`."""
    return FloodHost(), "host app"


class Flood:
    """Journal records at `rate` lines/s until stopped, as a host's journal iterator yields them."""

    def __init__(self, pool: list[str], rate: int) -> None:
        self.pool, self.rate = pool, rate
        self.fed = 0
        self.stop = asyncio.Event()

    def due(self, start: float) -> list[JournalRecord]:
        due = int((time.perf_counter() - start) * self.rate)
        now = datetime.now()
        batch = [JournalRecord(cursor=str(i), timestamp=now, message=self.pool[i % len(self.pool)]) for i in range(self.fed, due)]
        self.fed = max(self.fed, due)
        return batch

    async def records(self):
        start = time.perf_counter()
        while not self.stop.is_set():
            for record in self.due(start):
                yield record
            await asyncio.sleep(0.01)

    async def push_to(self, pane: JournalPane) -> None:
        """Host-app mode: straight into the pane, no app worker."""
        start = time.perf_counter()
        while not self.stop.is_set():
            pane.add_records(self.due(start))
            await asyncio.sleep(0.01)


class KeyLatency:
    """Times each typed key from its post (`type_key`) to the frame that shows it.

    The key's trip is followed with Textual's message hook: every dispatch of the Key event (app, screen,
    focused widget) re-arms a `call_after_refresh`; the last one to fire ends a key that changes what is on the
    tab shown (a scroll). A key that switches tabs ends at the first frame handed to the display that shows the
    new tab (`textual_compat.watch_frames`): its layout waits for the screen's next update, after the refresh
    that ends the others — timed that way, a tab switch read 4-10 ms where its frame came 17-84 ms after the key.
    """

    def __init__(self, app: App) -> None:
        from specdec_tui.ui.textual_compat import watch_frames

        self.app = app
        self.pending: list[float] = []  # t0 of presses whose Key event has not been seen yet
        self.t0: dict[int, float] = {}  # id(Key event) → t0
        self.t1: dict[int, float] = {}  # id(Key event) → end of the refresh after its latest dispatch
        self.keep: list[events.Key] = []  # hold the events so their ids stay unique
        self.names: dict[int, str] = {}  # id(Key event) → key name, for the per-key breakdown
        self.switch_to: dict[int, str] = {}  # id(Key event) → the tab a tab key shows (not shown when typed)
        self.frames: list[tuple[float, str | None]] = []  # (when handed to the display, the tab it shows)
        self._switchers: dict[int, ContentSwitcher | None] = {}
        watch_frames(app, self._frame)

    def _switcher(self, screen: Screen) -> ContentSwitcher | None:
        """The screen's tab switcher (its TabbedContent's), looked up once per screen."""
        if id(screen) not in self._switchers:
            tabbed = screen.query(TabbedContent).first() if screen.query(TabbedContent) else None
            self._switchers[id(screen)] = tabbed.get_child_by_type(ContentSwitcher) if tabbed is not None else None
        return self._switchers[id(screen)]

    def _frame(self, screen: Screen, dropped: bool) -> None:
        if not dropped:
            switcher = self._switcher(screen)
            self.frames.append((time.perf_counter(), switcher.current if switcher is not None else None))

    def _tab_key(self, key: str) -> str | None:
        """The tab a digit key shows on this screen, if it is not shown now."""
        switcher = self._switcher(self.app.screen)
        if switcher is None or not key.isdigit():
            return None
        panes = [child.id for child in switcher.children]
        index = int(key) - 1
        if not 0 <= index < len(panes) or panes[index] == switcher.current:
            return None
        return panes[index]

    def pressed(self) -> None:
        self.pending.append(time.perf_counter())

    def hook(self, message: Message) -> None:
        if not isinstance(message, events.Key):
            return
        key_id = id(message)
        if key_id not in self.t0:
            if not self.pending:
                return
            self.t0[key_id] = self.pending.pop(0)
            self.names[key_id] = message.key
            self.keep.append(message)
            if (tab := self._tab_key(message.key)) is not None:
                self.switch_to[key_id] = tab

        def shown() -> None:
            self.t1[key_id] = time.perf_counter()

        self.app.call_later(lambda: self.app.screen.call_after_refresh(shown))

    def _end(self, key_id: int) -> float | None:
        """When the key's answer was on screen; None if it never was."""
        tab = self.switch_to.get(key_id)
        if tab is None:
            return self.t1.get(key_id)
        t0 = self.t0[key_id]
        return next((when for when, shown in self.frames if when > t0 and shown == tab), None)

    def _timed(self, after: float, before: float) -> list[tuple[int, float]]:
        """(key id, ms) of keys pressed in [after, before) that reached the screen."""
        ends = {k: self._end(k) for k in self.t0}
        return [(k, (end - t0) * 1000) for k, t0 in self.t0.items()
                if (end := ends[k]) is not None and after <= t0 < before]

    def by_key(self, after: float = float("-inf"), before: float = float("inf")) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for k, ms in self._timed(after, before):
            out.setdefault(self.names[k], []).append(ms)
        return {name: sorted(values) for name, values in sorted(out.items())}

    def latencies_ms(self, after: float = float("-inf"), before: float = float("inf")) -> list[float]:
        return sorted(ms for _, ms in self._timed(after, before))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def flood_workspace(root: Path, rate: int, seconds: float, quiet: float, port: int) -> tuple[Path, str]:
    """A local host whose unit is the flood producer: its stdout reaches the panel through the host's journal, and
    it answers the health probes on `port` as a ready server does."""
    unit = "flood.service"
    producer = Path(__file__).resolve().parent / "flood_producer.py"
    (root / "units").mkdir(parents=True, exist_ok=True)
    (root / "units" / unit).write_text(
        "[Unit]\nDescription=journal flood\n\n[Service]\n"
        f"ExecStart={sys.executable} -u {producer} --rate {rate} --seconds {seconds} --quiet {quiet} --port {port}\n"
        f"WorkingDirectory={producer.parent}\nRestart=no\n"
    )
    return root, unit


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def parser_child() -> int | None:
    """The pid of this process's journal-parsing child (`loop.journal_child`), if one runs."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"specdec_tui.loop.journal_child" in cmdline:
            return int(entry.name)
    return None


def child_cpu_seconds(pid: int | None) -> float:
    """CPU seconds (user + system) of `pid` so far; 0 without one."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_peak_mb(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def run_real(seconds: float, rate: int, key_interval: float, size: tuple[int, int], *, quiet: float = 5.0,
                   keep_gc: bool = False) -> int:
    """The real path: a local host's service floods its stdout → the supervisor → the host's journal file →
    `LocalHost.journal` → the panel's journal worker (`HostLink`) → the pane; keys pressed meanwhile.

    The service is silent for `quiet` seconds first: the same keys timed then are the anchor (the panel on a
    quiet journal, in the same run). Lines received are the pane's own count (its status line's), less the
    lines that did not come from the producer (systemd's Started/Starting, the producer's START/DONE)."""
    import tempfile

    from specdec_tui.core.config import Config, HostConfig
    from specdec_tui.core.session import Session
    from specdec_tui.hosts.local.host import LocalHost
    from specdec_tui.ui import messages as m
    from specdec_tui.ui.app import make_app

    pool = set(sglang_lines(2000))
    with tempfile.TemporaryDirectory(prefix="journal-flood-") as tmp:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        root, unit = flood_workspace(Path(tmp) / "ws", rate, seconds, quiet, port)
        host = LocalHost(root, unit, base_url, name="flood")
        config = Config(hosts={"flood": HostConfig(name="flood", address="local", workspace=str(root), unit=unit,
                                                   base_url=base_url)})
        app = make_app(config, host, Session(host="flood", unit=unit), session_path=None)
        app.settles_heap = not keep_gc  # as the real program does (cli/tui_cmd.run_built)
        timing = KeyLatency(app)
        others = 0  # journal lines the pane counts that the producer did not flood
        sent: int | None = None
        flood_began: float | None = None
        cpu_marks: list[tuple[float, float, float]] = []  # (wall, this process's CPU, the parser child's) at the marks
        child: list[int | None] = [None]
        child_mb = 0.0

        def mark() -> tuple[float, float, float]:
            child[0] = child[0] or parser_child()
            return time.perf_counter(), cpu_seconds(), child_cpu_seconds(child[0])

        def hook(message: Message) -> None:
            nonlocal others, sent, flood_began
            timing.hook(message)
            if isinstance(message, m.JournalBatch):
                for record in message.records:
                    if record.kind != "line" or record.message in pool:
                        continue
                    others += 1
                    if record.message == "FLOOD-START":
                        cpu_marks.append(mark())
                        flood_began = cpu_marks[-1][0]
                    elif record.message.startswith("FLOOD-DONE "):
                        sent = int(record.message.split()[1])
                        cpu_marks.append(mark())

        async with app.run_test(size=size, headless=True, message_hook=hook) as pilot:
            await pilot.pause(0.5)
            await pilot.press("2")
            cpu_marks.append(mark())
            start = cpu_marks[-1][0]
            for i in range(int((quiet + seconds) / key_interval)):
                await asyncio.sleep(max(0.0, start + i * key_interval - time.perf_counter()))
                timing.pressed()
                type_key(app, APP_KEYS[(i + 1) % len(APP_KEYS)])
            deadline = time.perf_counter() + 30
            while sent is None and time.perf_counter() < deadline:  # the producer's last line, then the count
                await pilot.pause(0.2)
            await pilot.pause(1.0)
            received = app.main.journal_pane.received - others
            child_mb = child_peak_mb(child[0])
            full_collections = app.heap.collections if app.heap is not None else 0
            elapsed = time.perf_counter() - start
        await host.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    began = flood_began if flood_began is not None else float("inf")
    quiet_ms = timing.latencies_ms(before=began)
    flood_ms = timing.latencies_ms(after=began)
    if not quiet_ms or not flood_ms:
        print("no key reached the screen in one of the phases: nothing to report", file=sys.stderr)
        return 2
    p99 = percentile(flood_ms, 0.99)
    print(f"real path (local host journal → panel), size {size[0]}x{size[1]}, {quiet:.0f} s quiet, then {seconds:.0f} s "
          f"at {rate:,} lines/s (ran {elapsed:.1f} s){'; default gc (no gc_policy)' if keep_gc else ''}")
    print(f"lines sent: {sent if sent is not None else 'unknown (the producer did not finish)'}, counted by the "
          f"journal pane: {received:,}")
    print(f"key-to-screen, quiet journal (anchor): p50 {statistics.median(quiet_ms):.1f} ms, "
          f"p99 {percentile(quiet_ms, 0.99):.1f} ms, max {quiet_ms[-1]:.1f} ms ({len(quiet_ms)} keys)")
    print(f"key-to-screen, flood: p50 {statistics.median(flood_ms):.1f} ms, p99 {p99:.1f} ms, max {flood_ms[-1]:.1f} ms "
          f"({len(flood_ms)} keys)")
    per_key = ", ".join(f"{name} p50 {statistics.median(v):.0f}/max {v[-1]:.0f}"
                        for name, v in timing.by_key(after=began).items())
    print(f"  flood, by key (ms): {per_key}")
    if len(cpu_marks) == 3:
        (wq, cq, _), (w0, c0, k0), (w1, c1, k1) = cpu_marks
        print(f"panel CPU: quiet journal with the keys {(c0 - cq) / (w0 - wq) * 100:.0f}% of a core; while the lines "
              f"arrived {(c1 - c0) / (w1 - w0) * 100:.0f}% over {w1 - w0:.1f} s, "
              f"{(c1 - c0) / max(received, 1) * 1e6:.1f} µs per line (both threads, keys included)")
        print(f"journal parser (child process) CPU while the lines arrived: {(k1 - k0) / (w1 - w0) * 100:.0f}% of a core, "
              f"{(k1 - k0) / max(received, 1) * 1e6:.1f} µs per line" if child[0] else
              "journal parser: no child process (parsed in the panel's process)")
    print(f"peak RSS: {peak_mb:.0f} MB (the parser child: {child_mb:.0f} MB); "
          f"full collections run by the panel's gc policy: {full_collections}")
    target = 100 if rate <= 5000 else 150
    ok = p99 < target and peak_mb + child_mb < 200 and sent == received
    print(f"targets (p99 < {target} ms, RSS < 200 MB, no line lost):", "met" if ok else "NOT met")
    return 0 if ok else 1


async def run(seconds: float, rate: int, key_interval: float, size: tuple[int, int], host_only: bool = False) -> int:
    app, kind = build_app(host_only)
    flood = Flood(sglang_lines(2000), rate)
    timing = KeyLatency(app)
    async with app.run_test(size=size, headless=True, message_hook=timing.hook) as pilot:
        await pilot.pause(0.2)
        pane = app.screen.query_one(JournalPane)
        keys = APP_KEYS if kind.startswith("make_app") else HOST_KEYS
        pane.log_view.focus()
        feeding = asyncio.create_task(flood.push_to(pane))  # the stand-in app: straight into the pane
        pressed = 0
        start = time.perf_counter()
        for i in range(int(seconds / key_interval)):
            await asyncio.sleep(max(0.0, start + i * key_interval - time.perf_counter()))
            timing.pressed()
            type_key(app, keys[i % len(keys)])
            pressed += 1
        flood.stop.set()
        await feeding
        await pilot.pause(0.2)
        shown = len(pane.shown_lines)
        elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    latencies = timing.latencies_ms()
    if not latencies:
        print("no key reached the screen: nothing to report", file=sys.stderr)
        return 2
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"app: {kind}, size {size[0]}x{size[1]}, {seconds:.0f} s at {rate:,} lines/s (ran {elapsed:.1f} s)")
    print(f"lines fed: {flood.fed:,} (journal holds {shown:,}), keys pressed: {pressed}, timed: {len(latencies)}")
    print(f"key-to-screen latency: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms")
    per_key = ", ".join(f"{name} p50 {statistics.median(v):.0f}/max {v[-1]:.0f}" for name, v in timing.by_key().items())
    print(f"  by key (ms): {per_key}")
    print(f"peak RSS: {peak_mb:.0f} MB")
    ok = p99 < 100 and peak_mb < 200
    print("targets (p99 < 100 ms, RSS < 200 MB):", "met" if ok else "NOT met")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=int, default=5000, help="journal lines per second")
    parser.add_argument("--key-interval", type=float, default=0.1)
    parser.add_argument("--host-app", action="store_true",
                        help="the pane alone in a stand-in app, records pushed straight into it (no host, no worker)")
    parser.add_argument("--size", default="160x48", help="terminal size, e.g. 80x24")
    parser.add_argument("--quiet", type=float, default=5.0, help="seconds of quiet journal first (the anchor)")
    parser.add_argument("--keep-gc", action="store_true", help="leave the collector as Python sets it (no ui.gc_policy)")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if args.host_app:
        return asyncio.run(run(args.seconds, args.rate, args.key_interval, (width, height), True))
    return asyncio.run(run_real(args.seconds, args.rate, args.key_interval, (width, height), quiet=args.quiet,
                                keep_gc=args.keep_gc))


if __name__ == "__main__":
    sys.exit(main())
