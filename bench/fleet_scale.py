"""Fleet status at scale: `specdec-tui fleet status` over N demo hosts, each with its own workspace and a running
simulated SGLang server, against the same command over one host (the anchor, measured in the same run).

    python bench/fleet_scale.py                 # 32 hosts, 3 runs of the command
    python bench/fleet_scale.py --hosts 16 --runs 5
Target: the 32-host command answers in under 2 s (wall time of the whole process, start-up included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace


def write_config(root: Path, n: int) -> tuple[Path, list[LocalHost]]:
    lines: list[str] = []
    hosts: list[LocalHost] = []
    for i in range(n):
        ws = ensure_demo_workspace(root / f"h{i:02d}", time_scale=50)
        lines.append(f'[hosts.h{i:02d}]\naddress = "local"\nworkspace = "{ws.root}"\n')
        hosts.append(LocalHost(ws.root, ws.unit_name, ws.base_url, name=f"h{i:02d}", keep_running=True))
    config = root / "config.toml"
    config.write_text("\n".join(lines))
    return config, hosts


def start_all(hosts: list[LocalHost]) -> None:
    import asyncio

    async def start() -> None:
        for host in hosts:
            await host.restart()

    asyncio.run(start())
    deadline = time.monotonic() + 120
    for host in hosts:
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{host.info.base_url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)


def stop_all(hosts: list[LocalHost]) -> None:
    import asyncio

    async def stop() -> None:
        for host in hosts:
            await host.stop()
            await host.close()

    asyncio.run(stop())


def run_command(config: Path, only: str | None = None) -> tuple[float, list[dict[str, object]]]:
    argv = [sys.executable, "-m", "specdec_tui", "fleet", "status", "--config", str(config), "--json"]
    if only:
        argv += ["--host", only]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    if done.returncode not in (0, 3):
        raise SystemExit(f"fleet status failed: {done.stderr}")
    return took, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        os.environ["SPECDEC_TUI_DATA_DIR"] = str(Path(tmp) / "data")
        config, hosts = write_config(Path(tmp), args.hosts)
        print(f"starting {args.hosts} simulated servers ...", flush=True)
        start_all(hosts)
        try:
            one = [run_command(config, "h00")[0] for _ in range(args.runs)]
            fleet: list[float] = []
            rows: list[dict[str, object]] = []
            for _ in range(args.runs):
                took, rows = run_command(config)
                fleet.append(took)
        finally:
            stop_all(hosts)
    ready = sum(1 for r in rows if r["state"] == "ready")
    slowest_host = max(float(str(r["took_s"])) for r in rows)
    print(f"fleet status, {args.hosts} hosts ({ready} ready): median {statistics.median(fleet):.2f} s, "
          f"max {max(fleet):.2f} s over {args.runs} runs (slowest host inside a run {slowest_host:.2f} s)")
    print(f"anchor, the same command over 1 host: median {statistics.median(one):.2f} s")
    print(f"target: < 2 s for 32 hosts -> {'met' if max(fleet) < 2.0 else 'MISSED'}")


if __name__ == "__main__":
    main()
