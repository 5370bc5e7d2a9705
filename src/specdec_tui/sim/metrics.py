"""Prometheus text for `/metrics` with SGLang's metric names and labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specdec_tui.sim.engine import Engine
    from specdec_tui.sim.model import MemoryPlan


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


def prometheus_text(engine: Engine, model_name: str, plan: MemoryPlan) -> str:
    sched = f'engine_type="unified",model_name="{_esc(model_name)}",pp_rank="0",tp_rank="0"'
    tok = f'model_name="{_esc(model_name)}"'
    used = sum(r.prompt_tokens + r.emitted for r in engine.running)
    t = engine.totals
    gauges = [
        ("num_running_reqs", "The number of running requests.", len(engine.running)),
        ("num_used_tokens", "The number of used tokens.", used),
        ("token_usage", "The token usage.", used / max(plan.max_total_num_tokens, 1)),
        ("gen_throughput", "The generation throughput (token/s).", engine.last_gen_throughput),
        ("num_queue_reqs", "The number of requests in the waiting queue.", len(engine.waiting)),
        ("spec_accept_length", "The average acceptance length of speculative decoding.", engine.last_accept_length),
        ("spec_accept_rate", "The average acceptance rate of speculative decoding.", engine.last_accept_rate),
        ("max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", plan.max_total_num_tokens),
        ("max_running_requests", "The maximum number of running requests.", plan.max_running_requests),
    ]
    counters = [
        ("prompt_tokens_total", "Number of prefill tokens processed.", t.prompt_tokens),
        ("generation_tokens_total", "Number of generation tokens processed.", t.completion_tokens),
        ("num_requests_total", "Number of requests processed.", t.finished),
    ]
    lines: list[str] = []
    for name, help_text, value in gauges:
        lines += [f"# HELP sglang:{name} {help_text}", f"# TYPE sglang:{name} gauge",
                  f"sglang:{name}{{{sched}}} {float(value)}"]
    for name, help_text, value in counters:
        lines += [f"# HELP sglang:{name} {help_text}", f"# TYPE sglang:{name} counter",
                  f"sglang:{name}{{{tok}}} {float(value)}"]
    return "\n".join(lines) + "\n"
