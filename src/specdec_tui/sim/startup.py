"""The loading phase: SGLang's start-up log lines paced over --load-seconds, and its start-up failures.

Nothing listens on the port during this phase (SGLang binds only after the scheduler is ready), so a client's
connection is refused until `run_startup` returns a plan.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Awaitable, Callable

from specdec_tui.sim import model
from specdec_tui.sim.adaptive import build_policy, candidate_steps
from specdec_tui.sim.args import SimArgs, deprecation_warnings, server_args_repr
from specdec_tui.sim.cost_model import NO_SPEC, Tree
from specdec_tui.sim.engine import EngineConfig
from specdec_tui.sim.logs import (
    CUDA_GRAPH_HELP,
    NOT_ENOUGH_MEMORY,
    UNREQUESTED_LIMIT,
    MambaPool,
    SimLog,
    adaptive_init_line,
    adaptive_state_built_line,
    concurrency_limit_line,
    mamba_pool,
    traceback_block,
)
from specdec_tui.sim.profiles import Choice, Profile, profile_for

SGLANG_SRT = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


class StartupFailed(Exception):
    """The simulated server could not start; the text has already been logged."""


def sim_profile(a: SimArgs) -> Choice:
    """The model profile the command line's --model-path gets (sim/profiles.py)."""
    return profile_for(a.server["model_path"])


def gpu_mem_gb(a: SimArgs, profile: Profile) -> float:
    return a.gpu_mem_gb if a.gpu_mem_gb is not None else profile.hardware.gpu_mem_gb


def round_tree(a: SimArgs) -> Tree:
    """The speculative round's shape as resolved (NO_SPEC without --speculative-algorithm)."""
    s = a.server
    if a.spec_steps <= 0:
        return NO_SPEC
    return Tree(a.spec_steps, int(s.get("speculative_eagle_topk") or 1),
                int(s.get("speculative_num_draft_tokens") or a.spec_steps + 1))


def adaptive_candidates(a: SimArgs) -> list[int]:
    """The steps adaptive speculation may switch to (empty when it is off)."""
    s = a.server
    if a.spec_steps <= 0 or not s.get("speculative_adaptive"):
        return []
    return candidate_steps(s.get("speculative_adaptive_config"))


def memory_plan(a: SimArgs) -> model.MemoryPlan:
    s = a.server
    profile = sim_profile(a).profile
    tree = round_tree(a)
    extra = tuple(Tree(k, 1, k + 1) for k in adaptive_candidates(a) if k > 0 and k != tree.steps)
    return model.plan_memory(
        profile,
        gpu_mem_gb=gpu_mem_gb(a, profile),
        tp=s["tp_size"],
        mem_fraction_static=s["mem_fraction_static"],
        tree=tree,
        requested_max_running=s.get("max_running_requests"),
        max_total_tokens=s.get("max_total_tokens"),
        graph_max_bs=a.decode_graph_max_bs,
        disable_cuda_graph=a.decode_graph_disabled,
        extra_trees=extra,
    )


def state_pool(a: SimArgs, plan: model.MemoryPlan) -> MambaPool | None:
    """A hybrid model's recurrent-state pool (None for a model without one)."""
    if sim_profile(a).profile.state_pool_share <= 0:
        return None
    return mamba_pool(plan.max_running_requests, int(a.server.get("speculative_num_draft_tokens") or 1))


def engine_config(a: SimArgs, plan: model.MemoryPlan) -> EngineConfig:
    """What the scheduler runs with: the started plan, the round's tree, the profile, graphs and adaptive tiers."""
    s = a.server
    tree = round_tree(a)
    policy = build_policy(s.get("speculative_adaptive_config"), a.spec_steps) if adaptive_candidates(a) else None
    if policy is not None:
        policy.graph_bs = list(plan.capture_bs)
    return EngineConfig(
        steps=a.spec_steps,
        num_draft_tokens=tree.num_draft_tokens,
        max_running_requests=plan.max_running_requests,
        max_total_num_tokens=plan.max_total_num_tokens,
        decode_log_interval=max(1, int(s["decode_log_interval"])),
        cuda_graph=not a.decode_graph_disabled,
        time_scale=a.time_scale,
        seed=a.sim_seed,
        topk=tree.topk,
        profile=sim_profile(a).profile,
        algorithm=str(s.get("speculative_algorithm") or ""),
        graph_max_bs=plan.graph_bs,
        adaptive=policy,
        mamba=state_pool(a, plan),
    )


def _scheduler_crash(log: SimLog, frames: list[tuple[str, int, str, str]], exc: str) -> None:
    block = traceback_block(frames, exc)
    log.line("Scheduler hit an exception: " + block, tp_rank=0, important=True)
    log.line("Received sigquit from a child process. It usually means the child failed.", important=True)


def _fail_not_enough_memory(log: SimLog, mem_fraction: float) -> None:
    frames = [
        (f"{SGLANG_SRT}/managers/scheduler.py", 2943, "run_scheduler_process", "scheduler = Scheduler("),
        (f"{SGLANG_SRT}/managers/scheduler.py", 345, "__init__", "self.tp_worker = TpModelWorker("),
        (f"{SGLANG_SRT}/model_executor/model_runner.py", 451, "initialize", "self.init_memory_pool("),
        (f"{SGLANG_SRT}/mem_cache/pool_configurator.py", 84, "__post_init__", "raise RuntimeError(msg)"),
    ]
    exc = f"RuntimeError: {NOT_ENOUGH_MEMORY} Current value: mem_fraction_static={mem_fraction}"
    _scheduler_crash(log, frames, exc)


def _fail_weights(log: SimLog, mem_fraction: float, plan: model.MemoryPlan) -> None:
    """upstream 0.5.23: mem_cache/kv_cache_configurator.py `_profile_available_bytes`, when the loaded weights
    (target + draft) leave nothing under the static fraction: it names the minimum viable fraction."""
    minimum = plan.min_mem_fraction
    suggested = math.ceil(minimum * 1000) / 1000
    frames = [
        (f"{SGLANG_SRT}/managers/scheduler.py", 2943, "run_scheduler_process", "scheduler = Scheduler("),
        (f"{SGLANG_SRT}/model_executor/model_runner.py", 451, "initialize", "self.init_memory_pool("),
        (f"{SGLANG_SRT}/mem_cache/kv_cache_configurator.py", 3052, "_profile_available_bytes", "raise ValueError("),
    ]
    exc = (f"ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={mem_fraction}. "
           f"Raise --mem-fraction-static above {suggested:.3f} (minimum viable = 1 - available/pre = {minimum:.4f}). "
           "If using speculative decoding, draft weights are now counted.")
    _scheduler_crash(log, frames, exc)


def _fail_cuda_graph(log: SimLog, plan: model.MemoryPlan) -> None:
    need = max(plan.graph_gb - max(plan.graph_free_gb, 0.0), 0.02)
    free = max(plan.graph_free_gb, 0.0)
    oom = (
        f"CUDA out of memory. Tried to allocate {need:.2f} GiB. GPU 0 has a total capacity of "
        f"{plan.total_gb:.2f} GiB of which {free:.2f} GiB is free. Including non-PyTorch memory, this process has "
        f"{plan.total_gb - free:.2f} GiB memory in use. Of the allocated memory {plan.total_gb - free - 1.1:.2f} GiB "
        "is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated."
    )
    frames = [
        (f"{SGLANG_SRT}/managers/scheduler.py", 2943, "run_scheduler_process", "scheduler = Scheduler("),
        (f"{SGLANG_SRT}/model_executor/model_runner.py", 2211, "init_device_graphs",
         "self.graph_runner = graph_runners[self.device](self)"),
        (f"{SGLANG_SRT}/model_executor/cuda_graph_runner.py", 412, "__init__", "raise Exception("),
    ]
    exc = f"Exception: Capture cuda graph failed: {oom}\n{CUDA_GRAPH_HELP.rstrip()}"
    _scheduler_crash(log, frames, exc)


def _log_concurrency_limit(
    log: SimLog, plan: model.MemoryPlan, requested: int | None, pool: MambaPool | None
) -> None:
    """SGLang says what bound max_running_requests; the sim's state pool binds whenever it cut the request."""
    ceiling = requested if requested is not None else UNREQUESTED_LIMIT
    if pool is not None and plan.max_running_requests < ceiling:
        log.scheduler(
            concurrency_limit_line(
                resolved=plan.max_running_requests, requested=requested, pool=pool, kv_tokens=plan.max_total_num_tokens
            )
        )


async def _pause(seconds: float, a: SimArgs) -> None:
    await asyncio.sleep(max(0.0, seconds / a.time_scale))


async def run_startup(
    a: SimArgs, log: SimLog, join_world: Callable[[], Awaitable[None]] | None = None
) -> model.MemoryPlan:
    """Logs the start-up sequence; returns the memory plan, or raises StartupFailed after logging why.
    `join_world` is the multi-node rendezvous (sim/cluster.py), awaited inside torch's distributed init."""
    s = a.server
    for line in deprecation_warnings(a):
        log.raw(line)
    for w in a.warnings:
        log.line(w)
    log.line(f"server_args={server_args_repr(s)}")
    choice = sim_profile(a)
    note = choice.note(s["model_path"])
    if note is not None:
        log.line(note, important=True)
    profile = choice.profile
    load = a.load_seconds
    plan = memory_plan(a)
    spec = a.spec_steps > 0
    await _pause(load * 0.05, a)
    log.all_ranks("Init torch distributed begin.")
    if join_world is not None:
        await join_world()
    log.all_ranks(f"Init torch distributed ends. mem usage={profile.init_overhead_gb:.2f} GB")
    log.all_ranks(f"Load weight begin. avail mem={plan.init_avail_gb:.2f} GB")
    await _pause(load * 0.55, a)
    after_target = plan.init_avail_gb - plan.weights_gb
    log.all_ranks(
        f"Load weight end. type={profile.architecture}, dtype=torch.bfloat16, "
        f"avail mem={after_target:.2f} GB, mem usage={plan.weights_gb:.2f} GB."
    )
    if spec:
        log.all_ranks(f"Load weight begin. avail mem={after_target:.2f} GB")
        await _pause(load * 0.05, a)
        log.all_ranks(
            f"Load weight end. type={profile.architecture}{'MTP' if profile.state_pool_share else 'Eagle'}, dtype=torch.bfloat16, "
            f"avail mem={plan.after_weights_gb:.2f} GB, mem usage={plan.draft_weights_gb:.2f} GB."
        )
    if a.sim_fail == "hang-loading":
        while True:
            await asyncio.sleep(3600)
    if a.sim_fail != "not-enough-memory" and not plan.weights_fit:
        _fail_weights(log, s["mem_fraction_static"], plan)
        raise StartupFailed("Loaded weights leave no GPU memory for the KV cache")
    if a.sim_fail == "not-enough-memory" or not plan.fits_pool:
        _fail_not_enough_memory(log, s["mem_fraction_static"])
        raise StartupFailed(NOT_ENOUGH_MEMORY)
    k_gb = plan.max_total_num_tokens * plan.bytes_per_token / 2 / (1 << 30)
    pool = state_pool(a, plan)
    if pool is not None:
        log.scheduler(
            f"Mamba Cache is allocated. max_mamba_cache_size: {pool.size}, "
            f"conv_state size: {plan.state_gb * 0.04:.2f}GB, ssm_state size: {plan.state_gb * 0.96:.2f}GB "
        )
    log.scheduler(f"KV Cache is allocated. #tokens: {plan.max_total_num_tokens}, K size: {k_gb:.2f} GB, V size: {k_gb:.2f} GB")
    _log_concurrency_limit(log, plan, s.get("max_running_requests"), pool)
    avail_after_pool = plan.after_weights_gb - max(plan.pool_gb, 0.0)
    log.scheduler(f"Memory pool end. avail mem={avail_after_pool:.2f} GB")
    cuda_graph = not a.decode_graph_disabled
    if cuda_graph:
        log.scheduler(f"Capture cuda graph begin. This can take up to several minutes. avail mem={avail_after_pool:.2f} GB")
        log.scheduler(f"Capture cuda graph bs {plan.capture_bs}")
        await _pause(load * 0.3, a)
        if a.sim_fail == "cuda-graph-oom" or not plan.fits_graphs:
            _fail_cuda_graph(log, plan)
            raise StartupFailed("Capture cuda graph failed")
        log.scheduler(
            f"Capture cuda graph end. Time elapsed: {load * 0.3:.2f} s. mem usage={plan.graph_gb:.2f} GB. "
            f"avail mem={plan.available_after_gb:.2f} GB."
        )
    else:
        await _pause(load * 0.05, a)
    candidates = adaptive_candidates(a)
    if candidates:
        log.scheduler(adaptive_init_line(a.spec_steps, candidates))
        for k in candidates:
            if k != a.spec_steps:
                share = model.graph_share(profile, plan, Tree(k, 1, k + 1)) if cuda_graph else 0.0
                log.scheduler(adaptive_state_built_line(k, load * 0.02, share))
    log.scheduler(
        f"max_total_num_tokens={plan.max_total_num_tokens}, chunked_prefill_size={s['chunked_prefill_size']}, "
        f"max_prefill_tokens={s['max_prefill_tokens']}, max_running_requests={plan.max_running_requests}, "
        f"context_len={s['context_length']}, available_gpu_mem={plan.available_after_gb:.2f} GB"
    )
    return plan


def log_uvicorn_start(log: SimLog, host: str, port: int) -> None:
    log.line(f"INFO:     Started server process [{os.getpid()}]")
    log.line("INFO:     Waiting for application startup.")
    log.line("INFO:     Application startup complete.")
    log.line(f"INFO:     Uvicorn running on http://{host}:{port} (Press CTRL+C to quit)")


def log_uvicorn_stop(log: SimLog) -> None:
    log.line("INFO:     Shutting down")
    log.line("INFO:     Waiting for application shutdown.")
    log.line("INFO:     Application shutdown complete.")
    log.line(f"INFO:     Finished server process [{os.getpid()}]")
