"""What the simulated server says about itself, in SGLang 0.5.23's shapes: /server_info, /model_info, model cards.

upstream: python/sglang/srt/entrypoints/http_server.py (`server_info`, `model_info`, `available_models`,
`retrieve_model`), utils/common.py `build_server_info` (resolved settings, `launch_command`, the scheduler's init
info, `kv_events`), managers/scheduler_components/internal_state.py (internal_states[0]),
observability/startup_time.py `build_scheduler_startup_time`, openai/protocol.py `ModelCard`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specdec_tui.sim import model
from specdec_tui.sim.startup import graph_shares

if TYPE_CHECKING:
    from specdec_tui.sim.args import SimArgs
    from specdec_tui.sim.engine import Engine
    from specdec_tui.sim.profiles import Profile

SGLANG_VERSION = "0.5.23"
# upstream: model_executor/graph_memory_usage.py GRAPH_MEMORY_USAGE_KEYS
GRAPH_PHASES = ("prefill", "decode", "target_verify", "draft_prefill", "draft_decode", "draft_extend")


@dataclass(frozen=True, slots=True)
class Identity:
    """What stays fixed for a server's life: its settings, the command that asked for them, its start's timings."""

    a: SimArgs
    plan: model.MemoryPlan
    launch_command: str
    startup_time: dict[str, Any]


def startup_time(a: SimArgs, startup_s: float) -> dict[str, Any]:
    """The start's phases in (simulated) seconds, as the sim paced them over --load-seconds (sim/startup.py)."""
    load = a.load_seconds
    spec = a.spec_steps > 0
    graphs = dict.fromkeys(GRAPH_PHASES, 0.0)
    if not a.decode_graph_disabled:
        if spec:
            graphs.update(target_verify=round(load * 0.2, 3), draft_decode=round(load * 0.05, 3),
                          draft_extend=round(load * 0.05, 3))
        else:
            graphs["decode"] = round(load * 0.3, 3)
    return {
        "load_weight": round(load * (0.6 if spec else 0.55), 3),
        "kv_cache_allocation": 0.0,
        "scheduler_e2e": round(startup_s, 3),
        "cuda_graph": graphs,
    }


def graph_memory(plan: model.MemoryPlan, spec: bool) -> dict[str, float]:
    """Per-phase capture memory as upstream reports it (every phase named, 0 where none was captured)."""
    graph = dict.fromkeys(GRAPH_PHASES, 0.0)
    graph.update(graph_shares(plan.graph_gb, spec))
    return graph


def internal_state(ident: Identity, engine: Engine) -> dict[str, Any]:
    a, p = ident.a, ident.plan
    state: dict[str, Any] = dict(a.server)
    state.update({
        "world_size": a.server["tp_size"],
        "startup_time": ident.startup_time,
        "effective_max_running_requests_per_dp": p.max_running_requests,
        "last_gen_throughput": engine.last_gen_throughput,
        # upstream: managers/scheduler_components/memory_usage.py build_memory_usage
        "memory_usage": {"weight": round(p.weights_gb + p.draft_weights_gb, 3),
                         "kvcache": round(p.kv_gb + p.state_gb, 3),
                         "startup_available": round(p.init_avail_gb, 3),
                         "token_capacity": p.max_total_num_tokens,
                         "token_capacity_per_dcp_rank": p.max_total_num_tokens,
                         "token_capacity_swa": None,
                         "graph": graph_memory(p, a.spec_steps > 0)},
    })
    # upstream `_average_accept_length`: absent until a verify forward was counted, then the lifetime mean
    if a.spec_steps > 0 and engine.totals.spec_forward_ct > 0:
        state["avg_spec_accept_length"] = engine.avg_accept_length
    return state


def server_info(ident: Identity, engine: Engine) -> dict[str, Any]:
    info: dict[str, Any] = dict(ident.a.server)
    info.update({
        "launch_command": ident.launch_command,
        "status": "ready",
        "max_total_num_tokens": ident.plan.max_total_num_tokens,
        "max_req_input_len": ident.a.server["context_length"] - 5,
        "startup_time": ident.startup_time,
        "hicache_object_layout": None,
        "kv_events": None,
        "internal_states": [internal_state(ident, engine)],
        "version": SGLANG_VERSION,
        "frontend": "python",
    })
    return info


def model_info(a: SimArgs, profile: Profile) -> dict[str, Any]:
    """`/model_info`: the launch's paths and parsers, and the architecture of the model's profile."""
    s = a.server
    return {"model_path": s["model_path"], "served_model_name": s["served_model_name"],
            "tokenizer_path": s["tokenizer_path"], "is_generation": True, "preferred_sampling_params": None,
            "weight_version": "default", "load_format": s.get("load_format", "auto"),
            "reasoning_parser": s.get("reasoning_parser"), "tool_call_parser": s.get("tool_call_parser"),
            "disaggregation_mode": s.get("disaggregation_mode", "null"),
            "has_image_understanding": False, "has_audio_understanding": False,
            "model_type": profile.model_type, "architectures": [profile.architecture]}


def model_card(name: str, max_model_len: int) -> dict[str, Any]:
    """ModelCard: `created` is when the card was made (each answer), `parent` null for the base model."""
    return {"id": name, "object": "model", "created": int(time.time()), "owned_by": "sglang", "root": name,
            "parent": None, "max_model_len": max_model_len}


def model_not_found(name: str) -> dict[str, Any]:
    return {"error": {"message": f"The model '{name}' does not exist", "type": "invalid_request_error",
                      "param": "model", "code": "model_not_found"}}
