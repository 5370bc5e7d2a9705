"""The panel while its Fleet tab polls 16 hosts every 2 s: does it still answer keys within 100 ms?

Starts N demo hosts (each its own workspace and running simulated SGLang server), runs the real app
(`make_app`, headless, 160x48) on the first, shows the Fleet tab (polling every host every 2 s) and presses a key
every `--key-interval` s (moving along the host rows). The anchor, measured in the same run: the same keys on the
Trials tab, where nothing polls. Key-to-screen latency as in journal_flood.py (press → first refresh after it).

    python bench/fleet_panel.py                 # 16 hosts, 20 s of keys on each tab
    python bench/fleet_panel.py --hosts 8 --seconds 10
Target: p99 < 100 ms with 16 hosts polled every 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fleet_scale import start_all, stop_all, write_config  # bench/: the same hosts as the fleet-status bench
from journal_flood import KeyLatency  # bench/: one owner for the key-to-screen measurement

from specdec_tui.core.config_file import load_config
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.ui.app import make_app

KEYS = ("down", "down", "down", "up", "down", "up", "up", "down")


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def measure(config_path: Path, seconds: float, key_interval: float) -> tuple[list[float], list[float], int]:
    config = load_config(config_path)
    first = config.hosts["h00"]
    assert first.workspace is not None
    from specdec_tui.hosts.local.workspace import ensure_demo_workspace

    ws = ensure_demo_workspace(Path(first.workspace))
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="h00", keep_running=True)
    app = make_app(config, host, Session(host="h00", unit=ws.unit_name), session_path=None)
    timing = KeyLatency(app)
    results: dict[str, list[float]] = {}
    polls = 0
    async with app.run_test(size=(160, 48), headless=True, message_hook=timing.hook) as pilot:
        await pilot.pause(0.5)
        for tab in ("5", "6"):  # Trials (nothing polls: the anchor), then Fleet (16 hosts every 2 s)
            await pilot.press(tab)
            if tab == "6":
                deadline = time.monotonic() + 30
                while len(app.main.fleet_table.row_names) < len(config.hosts) and time.monotonic() < deadline:
                    await pilot.pause(0.1)
            target = app.main.trials_list.table if tab == "5" else app.main.fleet_table.table
            target.focus()
            timing.t0.clear()
            timing.t1.clear()
            presses: list[asyncio.Task[None]] = []
            start = time.perf_counter()
            for i in range(int(seconds / key_interval)):
                await asyncio.sleep(max(0.0, start + i * key_interval - time.perf_counter()))
                timing.pressed()
                presses.append(asyncio.create_task(pilot.press(KEYS[i % len(KEYS)])))
            await asyncio.gather(*presses)
            await pilot.pause(0.3)
            results[tab] = timing.latencies_ms()
        polls = len(app.main.fleet_table.row_names)
    await host.close()
    return results["5"], results["6"], polls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--key-interval", type=float, default=0.1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleet-panel-") as tmp:
        os.environ["SPECDEC_TUI_DATA_DIR"] = str(Path(tmp) / "data")
        config, hosts = write_config(Path(tmp), args.hosts)
        print(f"starting {args.hosts} simulated servers ...", flush=True)
        start_all(hosts)
        try:
            anchor, fleet, rows = asyncio.run(measure(config, args.seconds, args.key_interval))
        finally:
            stop_all(hosts)
    if not anchor or not fleet:
        print("no key reached the screen: nothing to report", file=sys.stderr)
        return 2
    print(f"Fleet tab, {rows} hosts polled every 2 s: key-to-screen p50 {statistics.median(fleet):.1f} ms, "
          f"p99 {p99(fleet):.1f} ms, max {max(fleet):.1f} ms ({len(fleet)} keys)")
    print(f"anchor, Trials tab (nothing polls): p50 {statistics.median(anchor):.1f} ms, p99 {p99(anchor):.1f} ms "
          f"({len(anchor)} keys)")
    ok = p99(fleet) < 100
    print("target (p99 < 100 ms):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
