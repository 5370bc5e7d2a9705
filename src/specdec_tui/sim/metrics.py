"""Prometheus text for `/metrics` with SGLang's metric names and labels, as prometheus_client writes it.

prometheus_client names a counter's HELP/TYPE lines `<name>_total`, writes labels sorted by name and
values as Go-style floats; SGLang runs it in multiprocess mode, so counters have no `_created` samples.
Scheduler gauges carry engine_type, model_name, moe_ep_rank, pp_rank, tp_rank; the tokenizer's counters
carry engine_type, model_name and, for token and request counts, is_streaming. Token, request and
verify-step counters grow when a request finishes, never while it runs, and never for a health probe (its
request has log_metrics off). Every name here exists in 0.5.23's collector.
upstream: python/sglang/srt/observability/metrics_collector.py (SchedulerMetricsCollector,
TokenizerMetricsCollector.observe_one_finished_request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specdec_tui.sim.engine import Engine
    from specdec_tui.sim.model import MemoryPlan


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def go_float(value: float) -> str:
    """prometheus_client's floatToGoString: repr, with a large value's mantissa and exponent Go-style."""
    s = repr(float(value))
    dot = s.find(".")
    if value > 0 and dot > 6:
        mantissa = f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.")
        return f"{mantissa}e+0{dot - 1}"
    return s


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{_esc(v)}"' for k, v in sorted(labels.items())) + "}"


def prometheus_text(engine: Engine, model_name: str, plan: MemoryPlan) -> str:
    sched = _labels(engine_type="unified", model_name=model_name, moe_ep_rank="0", pp_rank="0", tp_rank="0")
    tok = {"engine_type": "unified", "model_name": model_name}
    used = sum(r.prompt_tokens + r.emitted for r in engine.running)
    c = engine.counters
    spec = engine.cfg.steps > 0
    gauges = [
        ("num_running_reqs", "The number of running requests.", len(engine.running)),
        ("num_used_tokens", "The number of used tokens.", used),
        ("token_usage", "The token usage.", used / max(plan.max_total_num_tokens, 1)),
        ("gen_throughput", "The generation throughput (token/s).", engine.last_gen_throughput),
        ("num_queue_reqs", "The number of requests in the waiting queue.", len(engine.waiting)),
        ("spec_accept_length",
         "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
         engine.last_accept_length),
        ("spec_accept_rate", "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
         engine.last_accept_rate),
        ("spec_num_steps", "Currently active speculative_num_steps.", engine.cfg.steps),
        ("spec_num_draft_tokens", "Currently active speculative_num_draft_tokens (decouples from steps under topk>1).",
         engine.cfg.num_draft_tokens if spec else 0),
        ("max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", plan.max_total_num_tokens),
    ]  # 0.5.23 exports no max_running_requests gauge (only max_running_requests_under_SLO, for SLO-aware runs)
    lines: list[str] = []
    for name, help_text, value in gauges:
        lines += [f"# HELP sglang:{name} {help_text}", f"# TYPE sglang:{name} gauge",
                  f"sglang:{name}{sched} {go_float(value)}"]

    def counter(name: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        lines.extend([f"# HELP sglang:{name} {help_text}", f"# TYPE sglang:{name} counter"])
        lines.extend(f"sglang:{name}{labels} {go_float(v)}" for labels, v in samples)

    def by_stream(values: dict[bool, int]) -> list[tuple[str, float]]:
        return [(_labels(**tok, is_streaming="true" if s else "false"), float(values[s])) for s in (False, True)
                if c.requests[s]]

    counter("prompt_tokens_total", "Number of prefill tokens processed.", by_stream(c.prompt_tokens))
    counter("generation_tokens_total", "Number of generation tokens processed.", by_stream(c.generation_tokens))
    if c.saw_spec_verify:
        counter("spec_verify_calls_total", "Number of speculative decoding verification calls.",
                [(_labels(**tok), float(c.spec_verify_calls))])
    counter("num_requests_total", "Number of requests processed.", by_stream(c.requests))
    counter("num_aborted_requests_total", "Number of requests aborted.",
            [(_labels(**tok), float(engine.totals.aborted))] if engine.totals.aborted else [])
    return "\n".join(lines) + "\n"
