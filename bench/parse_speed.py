"""How long does `parse_line` take per SGLang journal line? (the UI parses every line of a flood)

Generates a realistic mix (~100k lines by default): decode/prefill batch lines in the formats of several
SGLang versions (2024 `Decode batch.`, 2025 spec `accept len`, late-2025 comma with DP/EP tags and
`[iter]`, hybrid SWA/Mamba, PD disaggregation, NPU), uvicorn access lines, plain text, errors and
startup lines; about half carry a journald prefix. Times every line, prints µs/line per kind and overall.

    python bench/parse_speed.py               # 100k lines
    python bench/parse_speed.py --lines 20000 --repeat 3
    python bench/parse_speed.py --before main --repeat 5   # the parser as of a git ref too, passes interleaved
    python bench/parse_speed.py --instructions --before main --lines 20000   # instructions a line (valgrind)
Targets (2 shared cores): overall ≤ 8 µs/line, decode ≤ 15 µs/line.

`--before REF` runs every pass in a process of its own, alternating the package as of REF (its src/ exported with
`git archive`) with this checkout's, so a change to the parser is measured before and after in one run under the
same load. Each table also gives the whole pass's CPU time per line without the per-line clock (its calls are
syscalls that cost the line after them too, so the judged per-line figure sits above the bare parse).
`--instructions` counts instead, with valgrind's cachegrind, the instructions a line costs (a process that makes
the lines and parses them, less one that only makes them): a figure the machine's load does not move.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from ref_tree import export_tree

from specdec_tui.core.sglang.parse import parse_line

TARGET_OVERALL_US = 8.0
TARGET_DECODE_US = 15.0


def _stamp(rng: random.Random, second: int) -> str:
    tags = rng.choice(("TP0", "TP1", "DP0 TP0 EP0", "DP1 TP1 EP1", "TP0 PP1"))
    return f"[2025-11-04 05:{second // 60 % 60:02d}:{second % 60:02d} {tags}] "


def _decode(rng: random.Random) -> str:
    running, tokens, usage = rng.randint(1, 64), rng.randint(100, 90000), rng.random()
    tps, queue, accept = rng.uniform(20, 2500), rng.randint(0, 20), rng.uniform(1.2, 4.0)
    graph = rng.choice(("True", "False"))
    era = rng.random()
    if era < 0.15:  # 2024, no speculative fields
        return (f"Decode batch. #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, "
                f"gen throughput (token/s): {tps:.2f}, #queue-req: {queue}")
    if era < 0.35:  # 2025 spec, period
        return (f"Decode batch. #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, "
                f"accept len: {accept:.2f}, cuda graph: {graph}, gen throughput (token/s): {tps:.2f}, #queue-req: {queue}, ")
    if era < 0.80:  # late 2025, comma, accept rate
        head = f"Decode batch [{rng.randint(1, 99999)}], " if rng.random() < 0.2 else "Decode batch, "
        return (f"{head}#running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, accept len: {accept:.2f}, "
                f"accept rate: {accept / 4:.2f}, cuda graph: {graph}, gen throughput (token/s): {tps:.2f}, #queue-req: {queue}, ")
    if era < 0.90:  # hybrid SWA / Mamba
        return (f"Decode batch, #running-req: {running}, #full token: {tokens}, full token usage: {usage:.2f}, "
                f"#swa token: {tokens // 2}, swa token usage: {usage / 2:.2f}, cuda graph: {graph}, "
                f"gen throughput (token/s): {tps:.2f}, #queue-req: {queue}, ")
    if era < 0.97:  # PD disaggregation decode server
        return (f"Decode batch, #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, "
                f"pre-allocated usage: {usage / 3:.2f}, #prealloc-req: {queue}, #transfer-req: 1, #retracted-req: 0, "
                f"cuda graph: {graph}, gen throughput (token/s): {tps:.2f}, #queue-req: {queue}, ")
    return (f"Decode batch, #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, npu graph: {graph}, "
            f"gen throughput (token/s): {tps:.2f}, #queue-req: {queue}, ")


def _prefill(rng: random.Random) -> str:
    sep = rng.choice((". ", ", "))
    line = (f"Prefill batch{sep}#new-seq: {rng.randint(1, 8)}, #new-token: {rng.randint(64, 8192)}, "
            f"#cached-token: {rng.randint(0, 4096)}, token usage: {rng.random():.2f}, "
            f"#running-req: {rng.randint(0, 64)}, #queue-req: {rng.randint(0, 20)}, ")
    if rng.random() < 0.2:
        line += f"#prealloc-req: 0, #inflight-req: 3, input throughput (token/s): {rng.uniform(100, 9000):.2f}, "
    return line


def _access(rng: random.Random) -> str:
    path = rng.choice(("/generate", "/v1/completions", "/v1/chat/completions", "/health", "/get_model_info", "/metrics"))
    method = "GET" if path in ("/health", "/get_model_info", "/metrics") else "POST"
    status = rng.choice(("200 OK", "200 OK", "200 OK", "503 Service Unavailable", "400 Bad Request"))
    return f'INFO:     127.0.0.1:{rng.randint(30000, 60000)} - "{method} {path} HTTP/1.1" {status}'


_TEXT = (
    "INFO:     Started server process [4242]",
    "INFO:     Waiting for application startup.",
    "INFO:     Application startup complete.",
    "Memory pool end. avail mem=12.90 GB",
    "Using default HuggingFace chat template with detected content format: string",
    "Init torch distributed begin.",
    "Init torch distributed ends. mem usage=0.00 GB",
    "Attention backend not explicitly specified. Use flashinfer backend by default.",
    "Loading safetensors checkpoint shards: 100% Completed | 8/8 [00:41<00:00,  5.17s/it]",
    "Health check passed for the scheduler, tokenizer manager and detokenizer.",
    "Finish: obj=GenerateReqInput(rid='a1b2c3', text='Hello', sampling_params={'max_new_tokens': 64}), out={...}",
    "Receive: obj=GenerateReqInput(rid='d4e5f6', text='', input_ids=[1, 2, 3], stream=True)",
    "Starting sglang-qwen.service - SGLang Qwen server...",
)
_ERRORS = (
    "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_tokens_gained: 646, #new_token_ratio: 0.0980 -> 0.3487",
    "Scheduler hit an exception: Traceback (most recent call last):",
    "Traceback (most recent call last):",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable",
)
_STARTUP = (
    "Load weight begin. avail mem=94.50 GB",
    "Load weight end. type=Qwen3NextForCausalLM, dtype=torch.bfloat16, avail mem=33.10 GB, mem usage=61.40 GB.",
    "KV Cache is allocated. #tokens: 412000, K size: 9.80 GB, V size: 9.80 GB",
    "Capture cuda graph end. Time elapsed: 27.31 s. mem usage=1.42 GB. avail mem=11.28 GB.",
    "max_total_num_tokens=412000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=17, "
    "context_len=262144, available_gpu_mem=11.20 GB",
    "Max running requests is reset to 48 for speculative decoding.",
    "The server is fired up and ready to roll!",
)

# kind → (share of the flood, line maker); most of a busy journal is access and text lines
_KINDS: dict[str, tuple[float, Callable[[random.Random], str]]] = {
    "decode": (0.25, _decode),
    "prefill": (0.08, _prefill),
    "access": (0.40, _access),
    "text": (0.22, lambda rng: rng.choice(_TEXT)),
    "error": (0.03, lambda rng: rng.choice(_ERRORS)),
    "startup": (0.02, lambda rng: rng.choice(_STARTUP)),
}


def flood(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """`count` (kind, line) pairs; SGLang prefix on metric lines, journald prefix on about half."""
    rng = random.Random(seed)
    names = list(_KINDS)
    weights = [_KINDS[name][0] for name in names]
    out = []
    for index in range(count):
        kind = rng.choices(names, weights)[0]
        line = _KINDS[kind][1](rng)
        if kind != "access" and rng.random() < 0.9:
            line = _stamp(rng, index // 500) + line
        if rng.random() < 0.5:
            line = f"Nov 04 05:{index // 30000 % 60:02d}:{index // 500 % 60:02d} gpu-box python3[4242]: " + line
        out.append((kind, line))
    return out


def measure(lines: list[tuple[str, str]]) -> dict[str, list[float]]:
    """CPU seconds per line, grouped by kind. This thread's CPU clock, not wall time: on a shared
    machine a preemption would otherwise land on whichever line was running. The clock's own
    cost (~0.5 µs, its median) is subtracted."""
    clock = time.thread_time
    overhead = statistics.median(-clock() + clock() for _ in range(2001))
    per_kind: dict[str, list[float]] = defaultdict(list)
    gc.disable()
    try:
        for kind, line in lines:
            start = clock()
            parse_line(line)
            per_kind[kind].append(clock() - start - overhead)
    finally:
        gc.enable()
    return per_kind


def bare_pass(lines: list[tuple[str, str]]) -> float:
    """CPU seconds of one pass with no clock between lines (what the parse costs without the measurement's own)."""
    texts = [line for _, line in lines]
    gc.disable()
    try:
        start = time.thread_time()
        for line in texts:
            parse_line(line)
        return time.thread_time() - start
    finally:
        gc.enable()


def one_pass(lines: list[tuple[str, str]]) -> dict[str, object]:
    """One timed pass summarised: per kind (count, mean, p50, p99 in µs), the overall mean, wall and bare CPU."""
    start = time.perf_counter()
    per_kind = measure(lines)
    wall = time.perf_counter() - start
    kinds: dict[str, list[float]] = {}
    for kind in _KINDS:
        times = sorted(per_kind.get(kind, []))
        if times:
            kinds[kind] = [len(times), sum(times) / len(times) * 1e6, times[len(times) // 2] * 1e6,
                           times[int(len(times) * 0.99)] * 1e6]
    total = sum(sum(v) for v in per_kind.values())
    return {"kinds": kinds, "overall": total / len(lines) * 1e6, "wall": wall,
            "bare": bare_pass(lines) / len(lines) * 1e6}


def child_pass(lines_count: int, tree: Path | None) -> dict[str, object]:
    """One pass in a fresh process, on `tree`'s package (the code before) when given, else this checkout's."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / "src"), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, __file__, "--child", "--lines", str(lines_count)], env=env,
                          capture_output=True, text=True, check=False)
    line = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"no result (exit {done.returncode})\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return dict(json.loads(line.removeprefix("RESULT ")))


def instructions(lines_count: int, tree: Path | None, parse: bool) -> int:
    """Instructions cachegrind counts for a process that makes the corpus and (`parse`) parses every line once."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / "src"), env.get("PYTHONPATH", "")]))
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
               __file__, "--child-count", "parse" if parse else "none", "--lines", str(lines_count)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    found = next((line for line in done.stderr.splitlines() if "I   refs:" in line or "I    refs:" in line), None)
    if found is None:
        raise SystemExit(f"valgrind gave no count (exit {done.returncode})\n{done.stderr[-3000:]}")
    return int(found.split(":")[-1].replace(",", "").strip())


def per_line_instructions(lines_count: int, tree: Path | None) -> float:
    return (instructions(lines_count, tree, True) - instructions(lines_count, tree, False)) / lines_count


def show(title: str, result: dict[str, object], lines_count: int) -> bool:
    """Prints one pass's table; True when both targets are met."""
    kinds = result["kinds"]
    assert isinstance(kinds, dict)
    print(title)
    print(f"{'kind':<9} {'lines':>7} {'mean µs':>8} {'p50 µs':>7} {'p99 µs':>7}")
    for kind, (count, mean, p50, p99) in kinds.items():
        print(f"{kind:<9} {count:>7} {mean:>8.2f} {p50:>7.2f} {p99:>7.2f}")
    overall = float(result["overall"])  # type: ignore[arg-type]
    decode = float(kinds["decode"][1]) if "decode" in kinds else 0.0
    wall = float(result["wall"])  # type: ignore[arg-type]
    print(f"overall   {lines_count:>7} {overall:>8.2f}   → {1e6 / overall:,.0f} lines/s "
          f"(wall incl. timing loop {lines_count / wall:,.0f} lines/s; the whole pass without the per-line clock "
          f"{float(result['bare']):.2f} µs/line)")  # type: ignore[arg-type]
    ok = overall <= TARGET_OVERALL_US and decode <= TARGET_DECODE_US
    print(f"targets: overall ≤ {TARGET_OVERALL_US} µs, decode ≤ {TARGET_DECODE_US} µs → {'met' if ok else 'NOT met'}")
    return ok


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1, help="passes over the same lines; best pass is shown")
    parser.add_argument("--before", metavar="REF", help="also time the parser as of this git ref, passes interleaved")
    parser.add_argument("--instructions", action="store_true", help="count instructions a line with valgrind instead")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-count", choices=("parse", "none"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    lines = flood(args.lines)
    if args.child_count:
        if args.child_count == "parse":
            for _, line in lines:
                parse_line(line)
        return 0
    if args.child:
        print("RESULT " + json.dumps(one_pass(lines)))
        return 0
    if args.instructions:
        with tempfile.TemporaryDirectory(prefix="parse-speed-") as tmp:
            if args.before:
                count = per_line_instructions(args.lines, export_tree(args.before, Path(tmp)))
                print(f"{args.before}: {count:,.0f} instructions a line")
            print(f"this checkout: {per_line_instructions(args.lines, None):,.0f} instructions a line "
                  f"({args.lines:,} lines of the corpus, valgrind cachegrind: a parsing process less one that parses nothing)")
        return 0
    print(f"load average at the start {load_average()}")
    if not args.before:
        best = min((one_pass(lines) for _ in range(args.repeat)), key=lambda result: float(result["wall"]))  # type: ignore[arg-type]
        ok = show(f"{len(lines):,} lines, best of {args.repeat} pass(es), CPU time per line", best, len(lines))
        print(f"load average at the end {load_average()}")
        return 0 if ok else 1
    with tempfile.TemporaryDirectory(prefix="parse-speed-") as tmp:
        tree = export_tree(args.before, Path(tmp))
        passes: dict[str, list[dict[str, object]]] = {args.before: [], "this checkout": []}
        for _ in range(args.repeat):  # interleaved: load from anything else on the machine hits both alike
            passes[args.before].append(child_pass(args.lines, tree))
            passes["this checkout"].append(child_pass(args.lines, None))
    ok = True
    for label, results in passes.items():
        best = min(results, key=lambda result: float(result["overall"]))  # type: ignore[arg-type]
        runs = ", ".join(f"{float(r['overall']):.2f}" for r in results)  # type: ignore[arg-type]
        ok = show(f"\n{label}: {len(lines):,} lines, best of {args.repeat} pass(es) (overall per pass: {runs} µs), "
                  "CPU time per line", best, len(lines))
    print(f"load average at the end {load_average()}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
