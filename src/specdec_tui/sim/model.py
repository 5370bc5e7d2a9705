"""Memory at start-up: what decides max_total_num_tokens, max_running_requests and whether the server starts.

Pure functions over a profile (sim/profiles.py) and the resolved flags, in SGLang's order (0.5.23):
weights (target, then draft) out of what torch sees free; the static pool is what is left minus the slack
`pre-load free x (1 - mem_fraction_static)` (srt/mem_cache/kv_cache_configurator.py `_profile_available_bytes`;
at or below zero SGLang names the minimum viable fraction, `1 - available/pre`); a hybrid model's recurrent-state
pool takes its share and bounds max_running_requests (one slot per request, one more per draft token); the KV
pool is the rest; `max_total_num_tokens <= 0` is "Not enough memory" (srt/model_executor/pool_configurator.py).
CUDA graphs are captured afterwards, outside the static fraction, for the batch sizes up to
--cuda-graph-max-bs-decode clamped to the request pool (sim/cost_model.py), and must fit beside the activations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from specdec_tui.sim import cost_model
from specdec_tui.sim.cost_model import Tree
from specdec_tui.sim.profiles import SEED, USABLE_GPU_FRACTION, Profile

DEFAULT_GPU_MEM_GB = SEED.hardware.gpu_mem_gb
MODEL_ARCH = SEED.architecture
CONTEXT_LEN = SEED.context_len
UNREQUESTED_LIMIT = 4096  # the ceiling when --max-running-requests is not given (upstream's heuristic, clamped)


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """What start-up would report for one configuration (sizes per GPU, in GB)."""

    total_gb: float
    init_avail_gb: float
    weights_gb: float
    draft_weights_gb: float
    after_weights_gb: float
    pool_gb: float  # static budget left for KV + state; <= 0: the weights leave nothing (ValueError)
    kv_gb: float
    state_gb: float
    max_total_num_tokens: int
    max_running_requests: int
    graph_bs: int  # the largest captured decode batch (0 when graphs are disabled)
    graph_gb: float
    graph_free_gb: float
    available_after_gb: float
    min_mem_fraction: float  # upstream's "minimum viable" fraction, 1 - available/pre
    capture_bs: list[int] = field(default_factory=list)
    bytes_per_token: int = 0

    @property
    def weights_fit(self) -> bool:
        return self.pool_gb > 0

    @property
    def fits_pool(self) -> bool:
        return self.weights_fit and self.max_total_num_tokens > 0 and self.max_running_requests > 0

    @property
    def fits_graphs(self) -> bool:
        return self.graph_gb <= self.graph_free_gb


def weights_per_gpu_gb(profile: Profile, tp: int) -> float:
    return profile.weights_gb_total / tp


def draft_weights_per_gpu_gb(profile: Profile, tp: int) -> float:
    return profile.draft_params_b * profile.bytes_per_param / tp


def kv_bytes_per_token(profile: Profile, tp: int, spec: bool) -> int:
    """Target KV (and the draft's, with speculation) per token per GPU; MLA's latent KV is not split over tp."""
    per = profile.kv_bytes_per_token + (profile.draft_kv_bytes_per_token if spec else 0)
    if profile.kv_sharded:
        per = round(per * profile.tp / max(tp, 1))  # half the ranks hold twice the heads each
    return max(per, 1)


def state_slot_share(profile: Profile, num_draft_tokens: int) -> float:
    """One request's recurrent-state slots, as a share of the reference state pool."""
    return profile.state_slot_base + profile.state_slot_per_draft_token * num_draft_tokens


def plan_memory(
    profile: Profile,
    *,
    gpu_mem_gb: float,
    tp: int,
    mem_fraction_static: float,
    tree: Tree,
    requested_max_running: int | None,
    max_total_tokens: int | None,
    graph_max_bs: int | None,
    disable_cuda_graph: bool,
    extra_trees: tuple[Tree, ...] = (),
) -> MemoryPlan:
    """The plan for one start. `tree` is the round's shape (NO_SPEC without speculation); `extra_trees` are the
    further shapes adaptive speculation captures graphs for (one runtime state per candidate step)."""
    spec = tree.speculative
    total = gpu_mem_gb * USABLE_GPU_FRACTION
    init_avail = total - profile.init_overhead_gb
    weights = weights_per_gpu_gb(profile, tp)
    draft = draft_weights_per_gpu_gb(profile, tp) if spec else 0.0
    after_weights = init_avail - weights - draft
    pool = after_weights - init_avail * (1.0 - mem_fraction_static)
    min_fraction = 1.0 - after_weights / init_avail
    usable = max(pool, 0.0)
    state_gb = usable * profile.state_pool_share
    limit = requested_max_running if requested_max_running is not None else UNREQUESTED_LIMIT
    if profile.state_pool_share > 0:
        slot = state_slot_share(profile, tree.num_draft_tokens if spec else 1) * profile.reference_state_pool_gb()
        cap = int(state_gb / slot) if slot > 0 else 0
    else:
        cap = limit
    kv_gb = usable - state_gb - (profile.spec_buffer_gb_per_step * tree.steps if spec else 0.0)
    per_token = kv_bytes_per_token(profile, tp, spec)
    tokens = int(kv_gb * (1 << 30) / per_token) if kv_gb > 0 else 0
    if max_total_tokens is not None:
        tokens = min(tokens, max_total_tokens)
    if profile.state_pool_share <= 0:
        cap = min(cap, max(tokens // 2, 0))  # upstream keeps >= 2 KV tokens per request
    max_running = max(0, min(limit, cap))
    max_bs = graph_max_bs if graph_max_bs is not None else cost_model.default_graph_max_bs(
        gpu_mem_gb, tp, requested_max_running)
    captured = [] if disable_cuda_graph else cost_model.capture_batch_sizes(max_bs, spec, max_running)
    graph_bs = max(captured) if captured else 0
    graph_gb = sum(cost_model.graph_memory_gb(profile, graph_bs, t) for t in (tree, *extra_trees)) if captured else 0.0
    graph_free = total * (1.0 - mem_fraction_static) - profile.activation_reserve_gb
    return MemoryPlan(
        total_gb=total,
        init_avail_gb=init_avail,
        weights_gb=weights,
        draft_weights_gb=draft,
        after_weights_gb=after_weights,
        pool_gb=pool,
        kv_gb=max(kv_gb, 0.0),
        state_gb=state_gb,
        max_total_num_tokens=max(tokens, 0),
        max_running_requests=max_running,
        graph_bs=graph_bs,
        graph_gb=graph_gb,
        graph_free_gb=graph_free,
        available_after_gb=after_weights - usable - graph_gb,
        min_mem_fraction=min_fraction,
        capture_bs=captured,
        bytes_per_token=per_token,
    )


def graph_share(profile: Profile, plan: MemoryPlan, tree: Tree) -> float:
    """The graph memory one runtime state (one tree shape) holds at the plan's captured batch."""
    return cost_model.graph_memory_gb(profile, plan.graph_bs, tree) if plan.graph_bs else 0.0
