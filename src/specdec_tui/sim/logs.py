"""SGLang-format log lines, written to stdout one flushed line at a time (journald reads them live).

Wording follows SGLang 0.5.23's scheduler, model runner and uvicorn config (each line cites where upstream writes
it), so the journal parser can be tested against the simulator. Only the text is reproduced; the numbers come from
the simulation.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

# upstream (2026): CUDA_GRAPH_CAPTURE_FAILED_MSG of the CUDA graph backends' primitives package under
# python/sglang/srt/model_executor/ — the decode-style capture failure's remedies, in per-phase flags.
CUDA_GRAPH_HELP = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
    "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n"
)
NOT_ENOUGH_MEMORY = "Not enough memory. Please try to increase --mem-fraction-static."


class SimLog:
    """Writes `[YYYY-MM-DD HH:MM:SS] msg` (or `[... TP0] msg` when tp > 1) and flushes every line."""

    def __init__(self, tp_size: int, out: TextIO | None = None, level: str = "info") -> None:
        self.tp_size = tp_size
        self.out = out or sys.stdout
        self.quiet = level in ("warning", "error", "critical")

    def _stamp(self, tp_rank: int | None) -> str:
        now = time.strftime("%Y-%m-%d %H:%M:%S")
        tag = f" TP{tp_rank}" if tp_rank is not None and self.tp_size > 1 else ""
        return f"[{now}{tag}] "

    def line(self, msg: str, tp_rank: int | None = None, *, important: bool = False) -> None:
        if self.quiet and not important:
            return
        try:
            for part in msg.split("\n"):
                self.out.write(self._stamp(tp_rank) + part + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            pass

    def raw(self, text: str) -> None:
        """Unprefixed text (tracebacks, uvicorn start-up lines)."""
        try:
            self.out.write(text if text.endswith("\n") else text + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            pass

    def scheduler(self, msg: str) -> None:
        """A line from the rank-0 scheduler (the only rank that logs batch stats)."""
        self.line(msg, tp_rank=0)

    def all_ranks(self, msg: str) -> None:
        for rank in range(self.tp_size):
            self.line(msg, tp_rank=rank)

    def access(self, peer: str, method: str, path: str, status: int, reason: str) -> None:
        """uvicorn's access line, in SGLang's uvicorn log format."""
        self.line(f'INFO:     {peer} - "{method} {path} HTTP/1.1" {status} {reason}')


@dataclass(frozen=True, slots=True)
class MambaPool:
    """Qwen3.5's recurrent-state (mamba) pool: `size` slots, `slots_per_request` of them per running request."""

    size: int
    slots_per_request: int

    def used(self, running: int) -> int:
        return min(running * self.slots_per_request, self.size)

    def usage(self, running: int) -> float:
        return self.used(running) / self.size if self.size else 0.0


def mamba_pool(max_running_requests: int, num_draft_tokens: int) -> MambaPool:
    """The state pool the sim's model (Qwen3.5, a hybrid: `model.MODEL_ARCH`) gets: one slot for the request's
    state, one per draft token kept for rollback, for each of max_running_requests (one dp worker)."""
    slots = max(num_draft_tokens, 1) + 1
    return MambaPool(size=max(max_running_requests, 0) * slots, slots_per_request=slots)


def _pool_parts(used_tokens: int, token_usage: float, mamba: MambaPool | None, running: int, *, decode: bool) -> str:
    """upstream: pool_stats_observer.py `PoolStats.get_decode_usage_msg_parts` / `get_prefill_usage_msg_parts`."""
    if mamba is None:
        return f"#token: {used_tokens}, token usage: {token_usage:.2f}, " if decode else f"token usage: {token_usage:.2f}, "
    if decode:
        return (
            f"#full token: {used_tokens}, full token usage: {token_usage:.2f}, "
            f"mamba num: {mamba.used(running)}, mamba usage: {mamba.usage(running):.2f}, "
        )
    return f"full token usage: {token_usage:.2f}, mamba usage: {mamba.usage(running):.2f}, "


def decode_batch_line(
    *,
    running: int,
    used_tokens: int,
    token_usage: float,
    accept_len: float | None,
    accept_rate: float | None,
    cuda_graph: bool,
    gen_throughput: float,
    queue: int,
    mamba: MambaPool | None = None,
) -> str:
    """upstream: metrics_reporter.py `report_decode_stats` (0.5.23: no `#cached-token`, a prefill figure); a
    hybrid model (`mamba`) logs its two pools."""
    msg = f"Decode batch, #running-req: {running}, "
    msg += _pool_parts(used_tokens, token_usage, mamba, running, decode=True)
    if accept_len is not None:
        msg += f"accept len: {accept_len:.2f}, accept rate: {accept_rate or 0.0:.2f}, "
    msg += f"cuda graph: {cuda_graph}, gen throughput (token/s): {gen_throughput:.2f}, #queue-req: {queue}"
    return msg


def prefill_batch_line(
    *,
    new_seq: int,
    new_token: int,
    cached_token: int,
    token_usage: float,
    running: int,
    queue: int,
    input_throughput: float,
    mamba: MambaPool | None = None,
) -> str:
    """upstream: metrics_reporter.py `report_prefill_stats` (mamba usage counts the requests already running)."""
    return (
        f"Prefill batch, #new-seq: {new_seq}, #new-token: {new_token}, #cached-token: {cached_token}, "
        + _pool_parts(0, token_usage, mamba, running, decode=False)
        + f"#running-req: {running}, #queue-req: {queue}, #pending-token: 0, "
        f"cuda graph: False, input throughput (token/s): {input_throughput:.2f}"
    )


def server_args_line(server: Mapping[str, object]) -> str:
    """The start's resolved settings, a dict as 0.5.23 logs it.
    upstream: entrypoints/engine.py `logger.info(f"server_args={_server_args_for_logging(server_args)}")`."""
    return f"server_args={dict(server)!r}"


def init_parallel_lines(elapsed_s: float, baseline_gb: float) -> tuple[str, str, str]:
    """upstream: distributed/bootstrap.py (`Init parallel begin.` / `ends.`, `Memory baseline taken.`)."""
    return (
        "Init parallel begin.",
        f"Init parallel ends. elapsed={elapsed_s:.2f} s",
        f"Memory baseline taken. mem usage={baseline_gb:.2f} GB",
    )


def load_weight_end_line(*, elapsed_s: float, arch: str, avail_gb: float, usage_gb: float) -> str:
    """upstream: model_executor/model_runner.py `load_model` (no dtype in 0.5.23; a quantized model adds its own)."""
    return f"Load weight end. elapsed={elapsed_s:.2f} s, type={arch}, avail mem={avail_gb:.2f} GB, mem usage={usage_gb:.2f} GB."


def mamba_cache_line(*, size: int, state_gb: float, spec: bool) -> str:
    """The recurrent-state pool; speculating, it also keeps each draft token's state for rollback (the
    intermediate caches), shown as shares of the plan's one state figure.
    upstream: mem_cache/memory_pool.py (`Mamba Cache is allocated. …`, both branches; note no comma before the
    intermediate sizes, as upstream writes them)."""
    if not spec:
        return (f"Mamba Cache is allocated. max_mamba_cache_size: {size}, conv_state size: {state_gb * 0.04:.2f}GB, "
                f"ssm_state size: {state_gb * 0.96:.2f}GB ")
    return (f"Mamba Cache is allocated. max_mamba_cache_size: {size}, conv_state size: {state_gb * 0.02:.2f}GB, "
            f"ssm_state size: {state_gb * 0.48:.2f}GB intermediate_ssm_state_cache size: {state_gb * 0.48:.2f}GB "
            f"intermediate_conv_window_cache size: {state_gb * 0.02:.2f}GB ")


def kv_cache_line(*, tokens: int, k_gb: float, v_gb: float, dtype: str = "torch.bfloat16") -> str:
    """upstream: mem_cache/memory_pool.py `_finalize_allocation_log` (K and V pools apart)."""
    return f"KV Cache is allocated. dtype: {dtype}, #tokens: {tokens}, K size: {k_gb:.2f} GB, V size: {v_gb:.2f} GB"


def capture_begin_line(name: str, *, num_tokens_per_req: int, avail_gb: float, bs: list[int] | None = None,
                       backend: str = "full") -> str:
    """`name` is "target decode", "target verify", "draft decode" or "draft extend"; a draft capture names its
    batch sizes at the start. upstream: model_executor/model_runner_components/cuda_graph_setup.py
    `capture_decode_graph`, speculative/eagle_worker_v2.py."""
    sizes = f"bs={bs}, " if bs is not None else ""
    return (f"Capture {name} CUDA graph begin. backend={backend}, num_tokens_per_req={num_tokens_per_req}, "
            f"{sizes}avail mem={avail_gb:.2f} GB")


def capture_end_line(name: str, *, elapsed_s: float, usage_gb: float, avail_gb: float, bs: list[int] | None = None) -> str:
    """The target's end line names the batch sizes it captured; the draft's do not."""
    sizes = f"bs={bs}, " if bs is not None else ""
    return (f"Capture {name} CUDA graph end. {sizes}elapsed={elapsed_s:.2f} s, mem usage={usage_gb:.2f} GB, "
            f"avail mem={avail_gb:.2f} GB.")


def traceback_block(where: list[tuple[str, int, str, str]], exc: str) -> str:
    """A Python-style traceback with the given frames (file, line, function, source)."""
    lines = ["Traceback (most recent call last):"]
    for file, lineno, func, src in where:
        lines.append(f'  File "{file}", line {lineno}, in {func}')
        lines.append(f"    {src}")
    lines.append(exc)
    return "\n".join(lines)


def adaptive_switch_line(old_steps: int, new_steps: int, old_draft: int, new_draft: int) -> str:
    """upstream: speculative/eagle_worker_v2.py `apply_runtime_state` (adaptive speculation changes state)."""
    return (f"Switch adaptive runtime state: steps {old_steps} -> {new_steps}, "
            f"draft_tokens {old_draft} -> {new_draft}")


def adaptive_steps_updated_line(old_steps: int, new_steps: int, ema: float) -> str:
    """upstream: speculative/adaptive_spec_params.py `_apply_target_steps` (a tier's own decision)."""
    return f"Adaptive spec params updated: steps {old_steps} -> {new_steps} (ema_accept_len={ema:.2f})"


def adaptive_init_line(steps: int, candidates: list[int]) -> str:
    """upstream: speculative/adaptive_spec_params.py `AdaptiveSpeculativeParams.__init__`."""
    return f"AdaptiveSpeculativeParams initialized: steps={steps}, candidate_steps={candidates}"


def adaptive_state_built_line(steps: int, seconds: float, mem_gb: float) -> str:
    """upstream: speculative/eagle_worker_v2.py `build_adaptive_runtime_state`."""
    return f"Built adaptive runtime state steps={steps}: elapsed={seconds:.2f}s, mem={mem_gb:.2f}GB"
