"""Automatic recovery from a failed start, measured over the simulator's failing start-up configurations.

Each configuration of the grid is pushed to a real demo host (local supervisor + simulator) and started; those that
fail are handed to `loop.recovery.recover_start` (upstream's OOM ladder as the doctor names it, at most two
restarts, back on the last good unit after that). Printed: the failing share of the grid (the anchor, measured in
this run: what an operator faces without recovery), the recovered share and the restarts used.

    python bench/doctor_recovery.py            # the whole grid
    python bench/doctor_recovery.py --quick    # every second configuration
Target (issue 32): ≥ 90 % of the start-time OOM cases recovered in ≤ 2 restarts.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
from collections import Counter
from pathlib import Path

from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.recovery import recover_start, wait_settled

MODELS = {  # model path, tp, speculative flags
    "llama8b-eagle3": ("meta-llama/Llama-3.1-8B-Instruct", "1", {"speculative-algorithm": "EAGLE3"}),
    "qwen122b-nextn": ("Qwen/Qwen3.5-122B-A10B", "4", {"speculative-algorithm": "NEXTN", "speculative-num-steps": "3",
                                                       "speculative-eagle-topk": "1",
                                                       "speculative-num-draft-tokens": "4"}),
    "llama70b-eagle": ("meta-llama/Llama-3.3-70B-Instruct", "4", {"speculative-algorithm": "EAGLE"}),
}
FRACTIONS = ("0.1", "0.2", "0.35", "0.93", "0.97")
GRAPH_BS = (None, "256", "512")
TIME_SCALE = 200.0


def configured(base: str, model: str, fraction: str, graph_bs: str | None) -> str:
    path, tp, spec = MODELS[model]
    unit = UnitFile.parse(base)
    unit = unit.set_flags({"model-path": path, "tp": tp, "mem-fraction-static": fraction}, unset=(
        "speculative-algorithm", "speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens",
        "speculative-draft-model-path", "cuda-graph-max-bs-decode", "max-running-requests"))
    unit = unit.set_flags(dict(spec))
    if graph_bs is not None:
        unit = unit.set_flags({"cuda-graph-max-bs-decode": graph_bs})
    return unit.text


async def run(quick: bool) -> None:
    root = Path(tempfile.mkdtemp(prefix="doctor-recovery-"))
    ws = ensure_demo_workspace(root / "demo", time_scale=TIME_SCALE)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    await host.connect()
    good = await host.read_unit()
    grid = list(itertools.product(MODELS, FRACTIONS, GRAPH_BS))[:: 2 if quick else 1]
    failing = recovered = back = 0
    restarts: Counter[int] = Counter()
    try:
        for model, fraction, graph_bs in grid:
            await host.push(configured(good, model, fraction, graph_bs))
            await host.restart()
            if await wait_settled(host, 60):
                print(f"  starts      {model} fraction {fraction} graph bs {graph_bs or 'auto'}")
                continue
            failing += 1
            result = await recover_start(host, last_good=good, timeout_s=60)
            recovered += result.recovered
            back += result.back_on_good
            restarts[result.restarts] += 1
            rungs = " → ".join(", ".join(f"--{k} {v}" for k, v in s.fix.items()) for s in result.steps) or "none"
            print(f"  {'recovered' if result.recovered else 'FAILED   '}   {model} fraction {fraction} graph bs "
                  f"{graph_bs or 'auto'}: {result.restarts} restart(s): {rungs}"
                  + ("" if result.recovered else f"; back on the good unit: {result.back_on_good} {result.note}"))
    finally:
        await host.stop()
        await host.close()
    print(f"grid: {len(grid)} configurations; fail to start without recovery: {failing} "
          f"({failing / len(grid):.0%}, the anchor)")
    if failing:
        print(f"recovered in ≤ 2 restarts: {recovered}/{failing} = {recovered / failing:.0%}; restarts used: "
              + ", ".join(f"{n}: {c}" for n, c in sorted(restarts.items()))
              + f"; unrecovered put back on the good unit: {back}/{failing - recovered}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every second configuration")
    asyncio.run(run(parser.parse_args().quick))


if __name__ == "__main__":
    main()
