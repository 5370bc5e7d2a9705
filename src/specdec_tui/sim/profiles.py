"""The models the simulator can pretend to serve, each on its hardware, calibrated to published figures.

A profile is data: the model (weights, KV and state per token, its draft), the GPU it was measured on (one GPU
per tp rank) and the cost/acceptance constants of sim/cost_model.py fit to the figures named in `published`
(tests/test_sim_cost_model.py holds each within 5 % as a ratio, 7 % as tok/s). `--model-path` picks one;
a model without a profile gets one derived from the closest (by family, then by size; scaled to the size its name
gives, `derived`) and the start-up log says so.

How the timing constants were fit (redo with `python bench/sim_surface.py --fit-check`): the latency floor is
what a batch-1 decode costs without speculation (kernel launches and tp all-reduces under a CUDA graph); the
weight reads follow from parameters x bytes / (tp x HBM bandwidth); the per-token parts were then solved so
that the published speedups at the two batch sizes hold, and the draft's top-1 acceptance so that the batch-1
figure holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

USABLE_GPU_FRACTION = 0.985  # what torch reports as total after the CUDA context


@dataclass(frozen=True, slots=True)
class Hardware:
    """One GPU of the published measurement (a tp rank each)."""

    gpu: str
    gpu_mem_gb: float  # what the card has; torch reports ~98.5 % of it after the CUDA context
    hbm_tb_s: float  # memory bandwidth, where the weight-read times come from


@dataclass(frozen=True, slots=True)
class Published:
    """One published figure the profile is calibrated to."""

    what: str
    batch: int
    value: float  # tok/s (per request at batch 1) or a speedup ratio
    kind: str  # "tok_s" | "ratio"
    source: str


@dataclass(frozen=True, slots=True)
class Profile:
    key: str
    model_path: str
    family: tuple[str, ...]  # substrings of a --model-path that mean this model
    architecture: str
    model_type: str
    hardware: Hardware
    tp: int
    # ---- weights and memory (GB per GPU unless said) ----
    params_b: float
    bytes_per_param: float
    draft_params_b: float  # the MTP head / EAGLE head (embedding and lm_head shared with the target)
    context_len: int
    kv_bytes_per_token: int  # target KV per token per GPU at this profile's tp
    draft_kv_bytes_per_token: int
    kv_sharded: bool  # KV heads split over tp (MLA's latent KV is replicated on every rank)
    init_overhead_gb: float  # torch distributed + NCCL buffers
    activation_reserve_gb: float  # activations outside the static fraction, beside the graphs
    graph_base_gb: float
    graph_gb_per_token: float  # per captured batch slot per token a round moves (see cost_model.graph_memory_gb)
    spec_buffer_gb_per_step: float  # draft hidden states / logits carved from the pool per step
    state_pool_share: float = 0.0  # hybrid models: share of the pool for recurrent state (0 = not hybrid)
    state_slot_base: float = 0.0  # a request's state slot, as a share of the profile's reference state pool
    state_slot_per_draft_token: float = 0.0
    state_reference_gb: float = 0.0  # the pool those shares are of (0: this profile's own, `reference_state_pool_gb`)
    # ---- timing (ms) ----
    floor_ms: float = 0.0
    dense_mem_ms: float = 0.0
    num_experts: int = 0
    experts_per_token: int = 0
    expert_set_mem_ms: float = 0.0  # reading one token's worth of routed experts
    compute_ms_per_token: float = 0.0  # roofline: compute-bound time per token
    linear_ms_per_token: float = 0.0  # per-token work that does not overlap the reads (sampling, MoE dispatch)
    context_ms_per_1k: float = 0.0  # attention reads per 1k tokens of the batch's context
    soft_max_p: float = 48.0
    sched_ms: float = 0.5
    per_request_ms: float = 0.0
    verify_ms_per_token: float = 0.0  # tree masks, verify sampling
    draft_floor_ms: float = 0.05
    draft_ms_per_token: float = 0.02
    draft_extend_share: float = 0.0  # how much of a draft-extend forward a round pays beyond the steps
    eager_factor: float = 4.0  # the floor's launches paid this many times without a graph (sglang#33900: ~4x)
    prefill_base_ms: float = 20.0
    prefill_ms_per_token: float = 0.06
    # ---- acceptance ----
    alphas: tuple[tuple[str, float], ...] = ()  # algorithm -> draft top-1 acceptance on chat at temperature 0
    depth_decay: float = 1.0  # acceptance at depth d is alpha x decay^(d-1) (an MTP head trained one token ahead)
    trap_alpha: float = 0.95  # temperature 0 + ignore_eos: the output loops, the draft is nearly always right
    published: tuple[Published, ...] = field(default_factory=tuple)
    source: str = ""

    def reference_state_pool_gb(self) -> float:
        """The state pool at the profile's own published settings (fraction 0.85, its tp, with its draft); a
        request's slot is a share of it, so those settings reproduce the published concurrency."""
        if self.state_reference_gb > 0:
            return self.state_reference_gb
        total = self.hardware.gpu_mem_gb * USABLE_GPU_FRACTION
        init_avail = total - self.init_overhead_gb
        after = init_avail - (self.params_b + self.draft_params_b) * self.bytes_per_param / self.tp
        return (after - init_avail * (1.0 - 0.85)) * self.state_pool_share

    def alpha_for(self, algorithm: str) -> float:
        table = dict(self.alphas)
        return table.get(algorithm.upper(), table.get("*", 0.7))

    @property
    def weights_gb_total(self) -> float:
        return self.params_b * self.bytes_per_param


# The seed: Qwen3.5-122B-A10B, BF16, tp 4 on 4x RTX PRO 6000 Blackwell Server Edition (96 GB, 1.8 TB/s, PCIe, no
# NVLink), NEXTN (MTP) topk 1, draft = steps + 1, mem fraction 0.85, single request at temperature 0 +
# ignore_eos: 123 / 186 / 234 tok/s at steps 1 / 2 / 3, max_running_requests 26 / 21 / 17 (the seed document).
# * +51 % from steps 1->2 is more than any chain allows below a ~0.95 acceptance once a step costs anything, so
#   the trap's acceptance is 0.95 (E = 1.95 / 2.85 / 3.71).
# * A tp-4 forward over PCIe is latency-bound: all-reduces and launches set a floor (14.75 ms) that hides the
#   weight reads while few experts are touched: dense 0.9 ms + 3.6 ms per 8 distinct experts of 256 (8 routed a
#   token); + 0.1 ms per verified token; a draft (one MTP layer) forward 0.05 ms + 0.02 ms a token.
#   Steps 1..3 stay on the floor, steps 4+ leave it: 125.6 / 181.8 / 231.5 / 237.0 tok/s for steps 1..4.
# * Qwen3.5 is hybrid (gated delta net + attention): every running request owns recurrent-state slots, one more
#   per draft token for rollback; a slot is (0.0207 + 0.0088 x draft tokens) of the seed's state pool (32 % of
#   the static pool), so floor(1 / that) = 26 / 21 / 17 / 15 / 13 / 12. Without speculation: 34.
SEED = Profile(
    key="qwen3.5-122b-a10b", model_path="Qwen/Qwen3.5-122B-A10B", family=("qwen3.5", "qwen3_5", "qwen3-next", "qwen"),
    architecture="Qwen3_5MoeForConditionalGeneration", model_type="qwen3_5_moe",
    hardware=Hardware("NVIDIA RTX PRO 6000 Blackwell Server Edition", 96.0, 1.8), tp=4,
    params_b=122.0, bytes_per_param=2, draft_params_b=3.6, context_len=262144,
    kv_bytes_per_token=2 * 1 * 256 * 2 * 12, draft_kv_bytes_per_token=2 * 1 * 256 * 2, kv_sharded=True,
    init_overhead_gb=0.55, activation_reserve_gb=4.9, graph_base_gb=0.0, graph_gb_per_token=0.0125,
    spec_buffer_gb_per_step=0.35, state_pool_share=0.32, state_slot_base=0.0207, state_slot_per_draft_token=0.0088,
    floor_ms=14.75, dense_mem_ms=0.9, num_experts=256, experts_per_token=8, expert_set_mem_ms=3.6,
    linear_ms_per_token=0.1, context_ms_per_1k=0.004, sched_ms=0.5, draft_floor_ms=0.05, draft_ms_per_token=0.02,
    alphas=(("EAGLE", 0.75), ("EAGLE3", 0.78), ("*", 0.72)), depth_decay=0.9, trap_alpha=0.95,
    published=(
        Published("steps 1, topk 1, draft 2 (trap)", 1, 123.0, "tok_s", "the seed"),
        Published("steps 2, topk 1, draft 3 (trap)", 1, 186.0, "tok_s", "the seed"),
        Published("steps 3, topk 1, draft 4 (trap)", 1, 234.0, "tok_s", "the seed"),
    ),
    source="the seed document (the optimisation campaign on llm-two)",
)

# Llama-3.1-8B-Instruct, BF16, on 1x H100 80GB SXM (3.35 TB/s), MT-Bench at batch 1 (SGLang's speculative
# decoding docs): 158.34 tok/s without speculation, 244.10 with EAGLE-2, 373.25 with EAGLE-3, at SGLang's
# defaults for a LlamaForCausalLM (steps 5, topk 4, draft tokens 8); EAGLE-3 keeps ~1.38x at batch 64 (the
# EAGLE-3 paper, Li et al. 2025, SGLang on H100). Fit: 16.06 GB of weights at ~2.8 TB/s achieved = 5.75 ms a
# forward (memory-bound at batch 1, floor 3.0 ms below it); 0.027 ms a token of compute (16 GFLOP at ~600
# TFLOPS achieved: a 512-token verify at batch 64 is compute-bound); 0.05 ms a request (sampling, scheduling);
# the EAGLE head (one layer + the 128k lm_head, ~1.4 GB read) 0.45 ms a draft forward, and one extend a round.
# Solved: EAGLE-2's top-1 acceptance 0.389 and EAGLE-3's 0.666 on MT-Bench give 244 / 373 at (5, 4, 8) with
# accept lengths 2.22 / 3.40; the model gives 158.1 / 244.1 / 373.3 and 1.36x at batch 64.
LLAMA = Profile(
    key="llama-3.1-8b-instruct", model_path="meta-llama/Llama-3.1-8B-Instruct", family=("llama",),
    architecture="LlamaForCausalLM", model_type="llama",
    hardware=Hardware("NVIDIA H100 80GB HBM3", 80.0, 3.35), tp=1,
    params_b=8.03, bytes_per_param=2, draft_params_b=0.5, context_len=131072,
    kv_bytes_per_token=32 * 8 * 128 * 2 * 2, draft_kv_bytes_per_token=8 * 128 * 2 * 2, kv_sharded=True,
    init_overhead_gb=0.5, activation_reserve_gb=3.0, graph_base_gb=0.3, graph_gb_per_token=0.0015,
    spec_buffer_gb_per_step=0.05,
    floor_ms=3.0, dense_mem_ms=5.75, compute_ms_per_token=0.027, context_ms_per_1k=0.039, soft_max_p=8.0,
    sched_ms=0.5, per_request_ms=0.05, draft_floor_ms=0.45, draft_ms_per_token=0.003, draft_extend_share=1.0,
    eager_factor=7.0,  # its 3 ms floor hides under the reads: eager launches make a batch-1 step ~3.5x slower
    prefill_base_ms=8.0, prefill_ms_per_token=0.03,
    alphas=(("EAGLE", 0.389), ("EAGLE3", 0.666), ("*", 0.389)),
    published=(
        Published("no speculation", 1, 158.34, "tok_s", "SGLang docs, speculative decoding (MT-Bench, 1x H100)"),
        Published("EAGLE-2 at (5, 4, 8)", 1, 244.10, "tok_s", "SGLang docs, speculative decoding"),
        Published("EAGLE-3 at (5, 4, 8)", 1, 373.25, "tok_s", "SGLang docs, speculative decoding"),
        Published("EAGLE-3 over no speculation", 64, 1.38, "ratio", "EAGLE-3 paper (SGLang, H100)"),
    ),
    source="docs.sglang.io advanced_features/speculative_decoding; arXiv 2503.01840 (EAGLE-3)",
)

# DeepSeek-V3 (671B, 37B active, FP8) with its MTP head on 8x H200 141GB (4.8 TB/s), tp 8: "the decoding speed
# can be improved by 1.8x for batch size 1 and 1.5x for batch size 32 respectively on H200 TP8" (SGLang's
# DeepSeek docs, with the docs' MTP command: steps 1, topk 1, draft tokens 2). Fit: a 61-layer tp-8 forward
# with its all-reduces floors at 25 ms (39 tok/s without speculation); each 8 of 256 routed experts read is
# 0.55 ms (2.6 GB a rank at FP8), so 32-64 verify tokens reach ~60-90 % of the experts; 0.05 ms a token not
# overlapped (MoE dispatch), 0.06 ms a verified token (tree sampling), 0.05 ms a request; the MTP head is one
# layer (0.4 ms a forward). The MTP head's top-1 acceptance 0.87 is the DeepSeek-V3 report's 85-90 % for the
# second token; deeper drafts decay (x0.8 a depth: the head is trained one token ahead). Model: 1.80x / 1.50x.
DEEPSEEK = Profile(
    key="deepseek-v3", model_path="deepseek-ai/DeepSeek-V3", family=("deepseek",),
    architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3",
    hardware=Hardware("NVIDIA H200", 141.0, 4.8), tp=8,
    params_b=671.0, bytes_per_param=1, draft_params_b=11.5, context_len=163840,
    kv_bytes_per_token=576 * 61 * 2, draft_kv_bytes_per_token=576 * 2, kv_sharded=False,
    init_overhead_gb=1.0, activation_reserve_gb=6.0, graph_base_gb=0.5, graph_gb_per_token=0.004,
    spec_buffer_gb_per_step=0.2,
    floor_ms=25.0, dense_mem_ms=0.4, num_experts=256, experts_per_token=8, expert_set_mem_ms=0.55,
    compute_ms_per_token=0.0093, linear_ms_per_token=0.05, context_ms_per_1k=0.0146, sched_ms=0.5,
    per_request_ms=0.05, verify_ms_per_token=0.06, draft_floor_ms=0.4, draft_ms_per_token=0.01,
    draft_extend_share=1.0, prefill_base_ms=40.0, prefill_ms_per_token=0.08,
    alphas=(("EAGLE", 0.87), ("*", 0.87)), depth_decay=0.8,
    published=(
        Published("MTP (1, 1, 2) over no speculation", 1, 1.8, "ratio", "SGLang docs, DeepSeek V3 usage"),
        Published("MTP (1, 1, 2) over no speculation", 32, 1.5, "ratio", "SGLang docs, DeepSeek V3 usage"),
    ),
    source="docs.sglang.io basic_usage/deepseek (Multi-token Prediction); DeepSeek-V3 technical report",
)

PROFILES: tuple[Profile, ...] = (SEED, LLAMA, DEEPSEEK)


@dataclass(frozen=True, slots=True)
class Choice:
    """The profile a --model-path gets, and whether it is the model's own (else derived from `base`)."""

    profile: Profile
    exact: bool
    base: Profile | None = None

    def note(self, model_path: str) -> str | None:
        """The start-up log's words when the model has no profile of its own."""
        if self.exact:
            return None
        p = self.base or self.profile
        scaled = (f", scaled to {self.profile.params_b:g}B parameters"
                  if self.profile.params_b != p.params_b else "")
        return (f"specdec-tui sim: no profile for {model_path!r}; simulating it as {p.model_path} "
                f"(tp {p.tp}, {p.hardware.gpu}), the closest profile{scaled}")


def derived(base: Profile, size_b: float) -> Profile:
    """A profile for a model of `size_b` billion parameters from the closest one: weights, their reads and
    compute scale with the size; KV per token and the draft head with its square root (width and depth both
    grow); latency floors, acceptance and hardware stay the base's."""
    r = size_b / base.params_b
    root = r**0.5
    return replace(
        base, key=f"{base.key}~{size_b:g}b", params_b=size_b, draft_params_b=base.draft_params_b * root,
        kv_bytes_per_token=max(1, round(base.kv_bytes_per_token * root)),
        draft_kv_bytes_per_token=max(1, round(base.draft_kv_bytes_per_token * root)),
        dense_mem_ms=base.dense_mem_ms * r, expert_set_mem_ms=base.expert_set_mem_ms * r,
        compute_ms_per_token=base.compute_ms_per_token * r, published=(),
        state_reference_gb=base.reference_state_pool_gb() * root if base.state_pool_share > 0 else 0.0,
    )


_SIZE = re.compile(r"(\d+(?:\.\d+)?)b(?![a-z])", re.I)


def _size_b(model_path: str) -> float | None:
    sizes = [float(m.group(1)) for m in _SIZE.finditer(model_path.replace("_", "-"))]
    return max(sizes) if sizes else None


def profile_for(model_path: str) -> Choice:
    """The profile whose model the path names, else the closest: same family first, then nearest in size."""
    name = model_path.lower()
    for p in PROFILES:
        if p.model_path.lower() in name or name.rstrip("/").endswith(p.model_path.lower().split("/")[-1]):
            return Choice(p, True)
    size = _size_b(model_path)
    family = [p for p in PROFILES if any(f in name for f in p.family)]
    pool = family or list(PROFILES)
    if size is None:
        return Choice(pool[0] if family else SEED, False)
    base = min(pool, key=lambda p: abs(p.params_b - size) / max(p.params_b, size))
    if abs(size / base.params_b - 1) <= 0.1:
        return Choice(base, False, base)
    return Choice(derived(base, size), False, base)
