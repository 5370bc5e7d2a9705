"""The simulated world's tuning surface for one profile: the best steps / topk / draft tokens per concurrency
(1, 4, 16, 64) and the spec-off baseline (its own max_running_requests), from the cost model, each with the
memory plan the server would start with; with --measure, each row's best and the baseline measured by a plain
streaming client against real simulator processes, beside the model's figure (the anchor, same run).

    python bench/sim_surface.py                                   # Llama-3.1-8B-Instruct, EAGLE3, chat, T=0
    python bench/sim_surface.py --model-path Qwen/Qwen3.5-122B-A10B --tp 4 --algorithm NEXTN
    python bench/sim_surface.py --measure                         # + measured (~2 min)
Target: the best tree shrinks as the batch grows; the model's figures hold within 10 % through a client.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from dataclasses import dataclass

import aiohttp
import orjson
from sim_ready import free_port, wait_healthy

from specdec_tui.sim import cost_model as cm
from specdec_tui.sim.args import parse_sim_args
from specdec_tui.sim.cost_model import NO_SPEC, Tree, Workload
from specdec_tui.sim.profiles import profile_for
from specdec_tui.sim.startup import memory_plan
from specdec_tui.sim.textgen import count_prompt_tokens

CONCURRENCY = (1, 4, 16, 64)
PROMPTS = {Workload.CHAT: "What are three good neighbourhoods to stay in for a weekend in Lisbon, and why?",
           Workload.CODE: "Write a Python function that parses a CSV file and returns the rows as dicts.",
           Workload.REPETITIVE: "Count from 1 to 500, one number per line."}
MAX_TOKENS = 58  # below the sim's shortest natural answer: every stream is as long as asked


@dataclass(frozen=True)
class Point:
    tree: Tree
    argv: list[str]
    mrr: int
    tok_s: float  # total decode tok/s at this concurrency
    graph: bool


def grid() -> list[Tree]:
    trees = [Tree(s, 1, s + 1) for s in range(1, 8)]
    trees += [Tree(s, k, n) for s in (2, 3, 4, 5, 6, 7) for k in (2, 4, 8) for n in (4, 8, 16, 32, 64) if n <= 1 + s * k]
    return trees


def unit(base: list[str], algorithm: str, tree: Tree) -> list[str]:
    if not tree.speculative:
        return base
    return [*base, "--speculative-algorithm", algorithm, "--speculative-num-steps", str(tree.steps),
            "--speculative-eagle-topk", str(tree.topk), "--speculative-num-draft-tokens", str(tree.num_draft_tokens)]


def evaluate(base: list[str], algorithm: str, tree: Tree, concurrency: int, workload: Workload, temperature: float,
             ignore_eos: bool, ctx: int) -> Point | None:
    argv = unit(base, algorithm, tree)
    a = parse_sim_args(argv)
    plan = memory_plan(a)
    if not (plan.fits_pool and plan.fits_graphs):
        return None
    profile = profile_for(a.server["model_path"]).profile
    alpha, decay = cm.request_acceptance(profile, a.server.get("speculative_algorithm") or "", workload,
                                         temperature=temperature, ignore_eos=ignore_eos)
    batch = min(concurrency, plan.max_running_requests)
    graph = plan.graph_bs >= batch
    rate = cm.steady_tok_s(profile, batch, tree, alpha, batch * ctx, graph=graph, decay=decay)
    return Point(tree, argv, plan.max_running_requests, rate, graph)


async def stream_rate(session: aiohttp.ClientSession, url: str, body: dict[str, object]) -> tuple[int, float, float]:
    """(tokens after the first chunk, first arrival, last arrival) of one stream."""
    stamps: list[tuple[float, int]] = []
    async with session.post(url + "/v1/completions", json=body) as resp:
        async for raw in resp.content:
            line = raw.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            chunk = orjson.loads(line[6:])
            if chunk.get("choices") and chunk.get("usage"):
                stamps.append((time.perf_counter(), int(chunk["usage"]["completion_tokens"])))
    return stamps[-1][1] - stamps[0][1], stamps[0][0], stamps[-1][0]


async def measure(argv: list[str], concurrency: int, prompt: str, temperature: float, ignore_eos: bool,
                  scale: float) -> float:
    """Total decode tok/s (simulated seconds) of `concurrency` streams started together."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "specdec_tui.sim", *argv, "--time-scale", str(scale),
                             "--load-seconds", "1", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    body = {"prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": temperature, "ignore_eos": ignore_eos,
            "stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, url)
            rounds = max(1, 8 // concurrency)  # a few rounds where one round has few streams (acceptance is random)
            totals = []
            for _ in range(rounds):
                got = await asyncio.gather(*(stream_rate(session, url, body) for _ in range(concurrency)))
                totals.append(sum(tokens / ((last - first) * scale) for tokens, first, last in got))
    finally:
        proc.terminate()
        proc.wait(10)
    return sum(totals) / len(totals)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-path", default="meta-llama/Llama-3.1-8B-Instruct")
    parser.add_argument("--tp", type=int, default=None, help="default: the profile's")
    parser.add_argument("--algorithm", default="EAGLE3")
    parser.add_argument("--workload", choices=[w.value for w in Workload], default="chat")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--ignore-eos", action="store_true")
    parser.add_argument("--context", type=int, default=None,
                        help="tokens of context per running request (default 512; with --measure, the measured "
                             "requests' own: prompt + half the answer)")
    parser.add_argument("--measure", action="store_true", help="also measure each row through a plain client")
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="faster is cheaper but a loaded machine then lags the simulated clock at c=64")
    args = parser.parse_args()
    choice = profile_for(args.model_path)
    profile = choice.profile
    tp = args.tp or profile.tp
    base = ["--model-path", args.model_path, "--tp", str(tp)]
    workload = Workload(args.workload)
    if args.context is None:
        args.context = count_prompt_tokens(PROMPTS[workload]) + MAX_TOKENS // 2 if args.measure else 512
    print(f"profile: {profile.model_path} on {tp}x {profile.hardware.gpu}"
          + ("" if choice.exact else f" (closest to {args.model_path})"))
    print(f"workload: {workload.value}, temperature {args.temperature:g}, ignore_eos {args.ignore_eos}, "
          f"{args.algorithm}, {args.context} tokens of context a request; "
          "tok/s = total decode throughput at the concurrency (model)")
    header = f"{'c':>3} | {'best (steps, topk, draft)':>26} | {'mrr':>4} | {'tok/s':>8} | {'spec-off':>8} | {'mrr':>4} | {'x':>5}"
    if args.measure:
        header += f" | {'measured best':>13} | {'measured off':>12}"
    print(header)
    print("-" * len(header))
    for c in CONCURRENCY:
        points = [p for t in grid() if (p := evaluate(base, args.algorithm, t, c, workload, args.temperature,
                                                      args.ignore_eos, args.context)) is not None]
        off = evaluate(base, args.algorithm, NO_SPEC, c, workload, args.temperature, args.ignore_eos, args.context)
        assert off is not None
        best = max(points, key=lambda p: p.tok_s)
        t = best.tree
        row = (f"{c:>3} | {f'({t.steps}, {t.topk}, {t.num_draft_tokens})':>26} | {best.mrr:>4} | {best.tok_s:>8.0f} | "
               f"{off.tok_s:>8.0f} | {off.mrr:>4} | {best.tok_s / off.tok_s:>5.2f}")
        if args.measure:
            prompt = PROMPTS[workload]
            got = asyncio.run(measure(best.argv, min(c, best.mrr), prompt, args.temperature, args.ignore_eos,
                                      args.time_scale))
            got_off = asyncio.run(measure(off.argv, min(c, off.mrr), prompt, args.temperature, args.ignore_eos,
                                          args.time_scale))
            row += f" | {got:>13.0f} | {got_off:>12.0f}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
