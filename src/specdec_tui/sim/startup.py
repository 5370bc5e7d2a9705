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
from specdec_tui.sim.args import SimArgs, deprecation_warnings
from specdec_tui.sim.cost_model import NO_SPEC, Tree
from specdec_tui.sim.engine import EngineConfig
from specdec_tui.sim.logs import (
    CUDA_GRAPH_HELP,
    NOT_ENOUGH_MEMORY,
    MambaPool,
    SimLog,
    adaptive_init_line,
    adaptive_state_built_line,
    capture_begin_line,
    capture_end_line,
    init_parallel_lines,
    kv_cache_line,
    load_weight_end_line,
    mamba_cache_line,
    mamba_pool,
    server_args_line,
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


def env_flag(name: str) -> bool:
    """An SGLang boolean environment variable as upstream's EnvBool reads it (true/1/yes/y; unset: False)."""
    return os.environ.get(name, "").strip().lower() in ("true", "1", "yes", "y")


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
        corrupt_drafts=a.sim_fault == "corrupt-drafts",
        skip_zero_step_extend=env_flag("SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND"),
        acceptance_drift=a.sim_fault == "acceptance-drift",
    )


# upstream 0.5.23: managers/scheduler.py `run_scheduler_process`, where a scheduler's start raises
SCHEDULER_FRAME = (f"{SGLANG_SRT}/managers/scheduler.py", 6362, "run_scheduler_process",
                   "scheduler = Scheduler(server_args, port_args)")


def _scheduler_crash(log: SimLog, frames: list[tuple[str, int, str, str]], exc: str) -> None:
    block = traceback_block(frames, exc)
    log.line("Scheduler hit an exception: " + block, tp_rank=0, important=True)
    log.line("Received sigquit from a child process. It usually means the child failed.", important=True)


def _fail_not_enough_memory(log: SimLog, mem_fraction: float) -> None:
    frames = [
        SCHEDULER_FRAME,
        (f"{SGLANG_SRT}/model_executor/pool_configurator.py", 99, "__post_init__", "raise RuntimeError(msg)"),
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
        SCHEDULER_FRAME,
        (f"{SGLANG_SRT}/model_executor/model_runner_components/cuda_graph_setup.py", 785, "capture_decode_graph",
         "runner = GraphRunnerCls(model_runner)"),
        (f"{SGLANG_SRT}/model_executor/runner/decode_cuda_graph_runner.py", 602, "__init__", "raise Exception("),
    ]
    exc = f"Exception: Capture cuda graph failed: {oom}\n{CUDA_GRAPH_HELP.rstrip()}"
    _scheduler_crash(log, frames, exc)


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
    log.line(server_args_line(s))
    choice = sim_profile(a)
    note = choice.note(s["model_path"])
    if note is not None:
        log.line(note, important=True)
    profile = choice.profile
    load = a.load_seconds
    plan = memory_plan(a)
    spec = a.spec_steps > 0
    await _pause(load * 0.05, a)
    begin, ends, baseline = init_parallel_lines(load * 0.05, profile.init_overhead_gb)
    log.all_ranks(begin)
    if join_world is not None:
        await join_world()
    log.all_ranks(ends)
    log.all_ranks(baseline)
    log.all_ranks(f"Load weight begin. avail mem={plan.init_avail_gb:.2f} GB")
    await _pause(load * 0.55, a)
    after_target = plan.init_avail_gb - plan.weights_gb
    log.all_ranks(load_weight_end_line(elapsed_s=load * 0.55, arch=profile.architecture, avail_gb=after_target,
                                       usage_gb=plan.weights_gb))
    if spec:
        log.all_ranks(f"Load weight begin. avail mem={after_target:.2f} GB")
        await _pause(load * 0.05, a)
        draft_arch = f"{profile.architecture}{'MTP' if profile.state_pool_share else 'Eagle'}"
        log.all_ranks(load_weight_end_line(elapsed_s=load * 0.05, arch=draft_arch,
                                           avail_gb=plan.after_weights_gb, usage_gb=plan.draft_weights_gb))
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
    # every TP rank allocates its pools and captures the target's graphs, and says so (logger.info, no rank filter);
    # the draft's captures log on rank 0 only (eagle_worker_v2.py log_info_on_rank0), as does the summary
    if pool is not None:
        log.all_ranks(mamba_cache_line(size=pool.size, state_gb=plan.state_gb, spec=spec))
    log.all_ranks(kv_cache_line(tokens=plan.max_total_num_tokens, k_gb=k_gb, v_gb=k_gb))
    avail_after_pool = plan.after_weights_gb - max(plan.pool_gb, 0.0)
    log.all_ranks(f"Memory pool end. avail mem={avail_after_pool:.2f} GB")
    cuda_graph = not a.decode_graph_disabled
    if cuda_graph:
        await _capture_graphs(a, log, plan, avail_after_pool)
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


async def _capture_graphs(a: SimArgs, log: SimLog, plan: model.MemoryPlan, avail_gb: float) -> None:
    """The target's decode (or, speculating, verify) graphs, then the draft's decode and extend graphs, each with
    its begin and end line; the plan's graph memory is split as `/server_info`'s memory_usage.graph splits it."""
    load = a.load_seconds
    bs = list(plan.capture_bs)
    draft_tokens = int(a.server.get("speculative_num_draft_tokens") or 1)
    spec = a.spec_steps > 0
    target = "target verify" if spec else "target decode"
    log.all_ranks(capture_begin_line(target, num_tokens_per_req=draft_tokens if spec else 1, avail_gb=avail_gb))
    target_s = load * (0.2 if spec else 0.3)
    await _pause(target_s, a)
    if a.sim_fail == "cuda-graph-oom" or not plan.fits_graphs:
        _fail_cuda_graph(log, plan)
        raise StartupFailed("Capture cuda graph failed")
    shares = graph_shares(plan.graph_gb, spec)
    avail_gb -= shares["target_verify" if spec else "decode"]
    log.all_ranks(capture_end_line(target, bs=bs, elapsed_s=target_s, usage_gb=shares["target_verify" if spec else "decode"],
                                   avail_gb=avail_gb))
    if not spec:
        return
    topk = int(a.server.get("speculative_eagle_topk") or 1)
    for name, per_req, phase in (("draft decode", topk, "draft_decode"), ("draft extend", draft_tokens, "draft_extend")):
        log.scheduler(capture_begin_line(name, num_tokens_per_req=per_req, bs=bs, avail_gb=avail_gb))
        await _pause(load * 0.05, a)
        avail_gb -= shares[phase]
        log.scheduler(capture_end_line(name, elapsed_s=load * 0.05, usage_gb=shares[phase], avail_gb=avail_gb))


def graph_shares(total_gb: float, spec: bool) -> dict[str, float]:
    """The plan's one graph-memory figure split by phase (upstream's GRAPH_MEMORY_USAGE_KEYS): a speculating
    server spends it on target verify, draft decode and draft extend; another on decode alone."""
    if not spec:
        return {"decode": round(total_gb, 3)}
    verify, draft = round(total_gb * 0.6, 3), round(total_gb * 0.25, 3)
    return {"target_verify": verify, "draft_decode": draft, "draft_extend": round(total_gb - verify - draft, 3)}


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
