"""Run-to-run noise of a one-repeat sweep, and how often it names a false clear winner (issue 33).

Runs `specdec-tui sweep --host demo --flag mem-fraction-static --values 0.84,0.85 --repeats 1` `--runs` times (a
private HOME, one demo workspace at `--time-scale`): the two values run at the same speed, so every "clear winner"
is false. For each sweep it reads the session the sweep wrote and judges the two trials' c=1 per-request tok/s
twice, in the same run: the anchor is the old verdict (the bootstrap of the mean over one run's requests, no floor),
the figure this build's `compare_samples` (the median over requests, widened by the run-to-run noise floor
`core.confidence.DEFAULT_RUN_NOISE`). It also prints the measured scatter of one run's mean between runs of one
value (the figure the default stands for).

    python bench/run_noise.py [--runs 20] [--time-scale 25] [--requests N] [--max-tokens M]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from specdec_tui.core.confidence import DEFAULT_RUN_NOISE, bootstrap, compare_samples, measured_run_noise, trimmed_mean, verdict
from specdec_tui.core.session import load_session

VALUES = ("0.84", "0.85")


def one_sweep(home: Path, time_scale: float, requests: int | None,
              max_tokens: int | None) -> tuple[dict[str, object], dict[str, list[float]]]:
    argv = [sys.executable, "-m", "specdec_tui", "sweep", "--host", "demo", "--time-scale", str(time_scale),
            "--flag", "mem-fraction-static", "--values", ",".join(VALUES), "--repeats", "1", "--new-session",
            "--json"]
    if requests:  # more requests a level: a narrower interval over them, so the missing run noise shows more
        argv += ["--concurrency", "1", "--requests", str(requests), "--no-correctness-gate"]
    if max_tokens:  # short answers: a request's tok/s is then mostly the machine's timing (tests/test_session_cli.py)
        argv += ["--max-tokens", str(max_tokens)]
    out = subprocess.run(argv, env={**os.environ, "HOME": str(home)}, capture_output=True, text=True, check=False)
    summary = json.loads([line for line in out.stdout.splitlines() if '"summary"' in line][-1])
    session = load_session(str(summary["session"]))
    samples: dict[str, list[float]] = {}
    for t in session.trials:
        lv = t.level(1)
        if t.status == "ok" and lv is not None and t.sweep:
            samples[str(t.sweep.get("value"))] = list(lv.tok_s_samples)
    return summary, samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--time-scale", type=float, default=25.0)
    ap.add_argument("--requests", type=int, default=None, help="requests a level at c=1 only (default: the profile's)")
    ap.add_argument("--max-tokens", type=int, default=None, help="tokens a request (default: the profile's)")
    args = ap.parse_args()
    means: dict[str, list[float]] = {v: [] for v in VALUES}
    anchor = floor = printed = 0
    with tempfile.TemporaryDirectory(prefix="run-noise-") as tmp:
        for i in range(args.runs):
            summary, samples = one_sweep(Path(tmp), args.time_scale, args.requests, args.max_tokens)
            a, b = (samples.get(v, []) for v in VALUES)
            for v in VALUES:
                if samples.get(v):
                    means[v].append(trimmed_mean(samples[v]))  # the figure the verdict reads
            old = verdict("a", bootstrap(a), "b", bootstrap(b))  # the verdict before the floor: means, one run's requests
            new = compare_samples("c=1", "a", a, "b", b, noise=DEFAULT_RUN_NOISE)
            anchor += old.winner is not None
            floor += new.winner is not None
            printed += bool(summary.get("clear_winner"))
            print(f"run {i + 1}: n={len(a)}/{len(b)} means {statistics.fmean(a) if a else math.nan:.1f} / "
                  f"{statistics.fmean(b) if b else math.nan:.1f}; one run's requests: "
                  f"{'WINNER ' + str(old.winner) if old.winner else 'no clear difference'}; with the floor: "
                  f"{'WINNER ' + str(new.winner) if new.winner else 'no clear difference'}", flush=True)
    measured = measured_run_noise(means.values())
    print(f"\nfalse clear winners over {args.runs} one-repeat sweeps of identical speed at time scale "
          f"{args.time_scale:g}:")
    print(f"  anchor (the old verdict: mean over one run's requests): {anchor}/{args.runs} = {anchor / args.runs:.0%}")
    print(f"  this build (20 % trimmed mean, run-to-run floor {DEFAULT_RUN_NOISE.words}): {floor}/{args.runs} = "
          f"{floor / args.runs:.0%}")
    print(f"  the sweep's own printed verdict (this build): {printed}/{args.runs}")
    print(f"  (requests a level: {args.requests or 'the profile default'}; max tokens: "
          f"{args.max_tokens or 'the profile default'})")
    print(f"  measured scatter of one run's c=1 trimmed mean between runs of one value: "
          f"{measured.words if measured else 'not measured'} (default {DEFAULT_RUN_NOISE.rel:.0%})")


if __name__ == "__main__":
    main()
