"""The correctness gate's time per candidate on the demo host (at the demo's own time scale), and its verdicts:
the demo's unit as it ships (must pass) and the same unit with the simulator's corrupt-drafts fault (must fail).
The anchor beside the time is one plain restart of the same unit, measured in the same run.

    python bench/correctness_gate.py [--time-scale 1]
Target (issue 32): ≤ 60 s per candidate on the demo.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.correctness_gate import run_gate
from specdec_tui.loop.recovery import wait_settled


async def run(scale: float) -> None:
    ws = ensure_demo_workspace(Path(tempfile.mkdtemp(prefix="gate-")) / "demo", time_scale=scale)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    await host.connect()
    try:
        healthy = await host.read_unit()
        started = time.monotonic()
        await host.restart()
        await wait_settled(host, 300)
        restart_s = time.monotonic() - started
        ok = await run_gate(host, healthy, timeout_s=300)
        corrupt = await run_gate(host, UnitFile.parse(healthy).set_flags({"sim-fault": "corrupt-drafts"}).text,
                                 timeout_s=300)
    finally:
        await host.stop()
        await host.close()
    print(f"anchor: one restart of the demo unit to ready: {restart_s:.1f} s")
    print(f"healthy candidate: {'passed' if ok.passed else 'FAILED'} in {ok.seconds:.1f} s")
    print(f"corrupt-drafts candidate: {'caught' if not corrupt.passed else 'MISSED'} in {corrupt.seconds:.1f} s, "
          f"{len(corrupt.divergences)} divergence(s); first at word "
          f"{corrupt.divergences[0].at_word if corrupt.divergences else '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-scale", type=float, default=1.0, help="the demo's time scale (default 1: as shipped)")
    asyncio.run(run(parser.parse_args().time_scale))


if __name__ == "__main__":
    main()
