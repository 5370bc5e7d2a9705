"""The simulated server's physics: memory budget at startup and the cost of one speculative step.

Pure functions over numbers (no IO, no clock), so the calibration can be tested and tabulated directly.

Calibration target (the seed): Qwen3.5-122B-A10B, BF16, tp 4 on 4x RTX PRO 6000 Blackwell (96 GB, PCIe, no
NVLink), NEXTN/EAGLE with topk 1, num_draft_tokens = steps + 1, mem fraction 0.85, benchmark at temperature 0
with ignore_eos on a repetitive prompt. Observed: single-request decode 123 / 186 / 234 tok/s at steps 1 / 2 / 3
and max_running_requests 26 / 21 / 17.

How the constants were derived (fit by a small grid search, kept in the comments so it can be redone):
* Acceptance. +51 % from steps 1->2 is more than E(2)/E(1) allows at any alpha below ~0.95 once the step cost
  grows at all, so the trap's per-token acceptance is 0.95 (E = 1.95 / 2.85 / 3.71 tokens per verify step).
* Step time. A tp-4 forward over PCIe is latency-bound: all-reduces and kernel launches set a floor (~14.75 ms)
  that hides the memory traffic of the weights while few experts are touched. The memory time is
  dense (0.9 ms) + 3.6 ms per 8 distinct experts; distinct experts touched by n tokens out of 256 with 8 routed
  each is 256 * (1 - (1 - 8/256)^n). The forward costs max(floor, memory) (a p=48 soft max), plus 0.1 ms per
  verified token of compute. A draft (one MTP layer) forward costs 0.05 ms + 0.02 ms per request.
  Result: steps 1..3 stay on the floor (speculation is nearly free), steps 4+ leave it (4+ verify tokens touch
  more than ~30 experts) so gains stop: 125.6 / 181.8 / 231.5 / 237.0 / 237.3 / 236.8 tok/s for steps 1..6.
* Which requests hit the trap. The seed's benchmark prompts asked for repeated output ("Repeat the word ...",
  "Count from 1 to 500"); greedy decoding loops on those just as on a prompt that repeats itself, so
  `prompt_repetition` counts both. Judging only the prompt's own words left the shipped `repetitive` set at
  alpha ~0.80 and a client measured accept lengths 1.82 / 2.50 / 3.03 instead of 1.95 / 2.85 / 3.71.
  Measured by clients at time scale 10 (tests/test_sim_calibration.py): a plain streaming client
  125.5 / 180.5 / 231.5 tok/s, the benchmark at c=1 125.0 / 182.0 / 231.3 tok/s.
* Memory. Qwen3.5 is a hybrid (gated delta net + attention) model: besides the KV cache every running request
  owns recurrent-state slots, and speculative decoding keeps one intermediate state per draft token for
  rollback. The state pool is a fixed share of the KV pool, and a request's slot costs
  (0.0207 + 0.0088 * (steps + 1)) of the seed's state pool; floor(1 / that) gives 26 / 21 / 17 / 15 / 13 / 12.
* CUDA graphs live outside the static fraction. Activations reserve ~4.9 GB; the verify+draft graphs need
  (0.6 + 1.2 * steps) GB at cuda-graph-max-bs 48 (scaled linearly with bs), so at fraction 0.85 steps 8+ fail to
  capture, at 0.90 steps 4+, and at 0.95 any.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# ---- the hardware and model of the seed -------------------------------------------------------------------------
DEFAULT_GPU_MEM_GB = 96.0  # RTX PRO 6000 Blackwell Server Edition
USABLE_GPU_FRACTION = 0.985  # what torch reports as total after the CUDA context
MODEL_PARAMS_B = 122.0  # Qwen3.5-122B-A10B total parameters (billions)
DRAFT_PARAMS_B = 3.6  # one MTP layer + its own norm/projection (the lm_head/embedding are shared)
BYTES_PER_PARAM = 2  # bfloat16
INIT_OVERHEAD_GB = 0.55  # torch distributed + NCCL buffers per GPU
MODEL_ARCH = "Qwen3_5MoeForConditionalGeneration"
CONTEXT_LEN = 262144

# ---- KV cache and recurrent state --------------------------------------------------------------------------------
FULL_ATTN_LAYERS = 12  # every 4th of 48 layers is full attention; the rest are gated delta net (no KV)
DRAFT_ATTN_LAYERS = 1  # the MTP layer keeps its own KV
KV_HEAD_DIM = 256
KV_HEADS_PER_GPU = 1  # 2 KV heads replicated across tp 4
STATE_POOL_SHARE = 0.32  # share of the static pool SGLang gives the recurrent-state (mamba) pool
STATE_SLOT_BASE = 0.0207  # per-request state in units of the seed's state pool (fit, see module doc)
STATE_SLOT_PER_DRAFT_TOKEN = 0.0088
SPEC_BUFFER_GB_PER_STEP = 0.35  # draft hidden states / logits buffers carved from the pool per step

# ---- CUDA graphs outside the static fraction ---------------------------------------------------------------------
ACTIVATION_RESERVE_GB = 4.9
GRAPH_BASE_GB = 0.6
GRAPH_PER_STEP_GB = 1.2
GRAPH_REFERENCE_BS = 48

# ---- timing (milliseconds) ---------------------------------------------------------------------------------------
NUM_EXPERTS = 256
EXPERTS_PER_TOKEN = 8
LATENCY_FLOOR_MS = 14.75
DENSE_MEM_MS = 0.9
EXPERT_SET_MEM_MS = 3.6  # reading one token's worth (8) of expert weights
SOFTMAX_P = 48
COMPUTE_MS_PER_TOKEN = 0.1
DRAFT_FWD_MS = 0.05
DRAFT_FWD_MS_PER_REQ = 0.02
SCHED_OVERHEAD_MS = 0.5
NO_CUDA_GRAPH_FACTOR = 1.6  # eager mode: launch overhead roughly doubles the floor
PREFILL_BASE_MS = 20.0
PREFILL_MS_PER_TOKEN = 0.06
CONTEXT_MS_PER_1K_TOKENS = 0.004  # attention reads over the running batch's context

# ---- acceptance ---------------------------------------------------------------------------------------------------
ALPHA_TRAP = 0.95  # temperature 0 + ignore_eos + repetitive prompt: the model loops, the draft is nearly always right
ALPHA_GREEDY = 0.80  # temperature 0 on ordinary text
ALPHA_REPETITION_BONUS = 0.08  # scaled by how repetitive the prompt is (0..1)
ALPHA_TEMPERATURE_PENALTY = 0.30  # per unit temperature (capped at 1.0)
ALPHA_MIN = 0.35


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """What startup would report for one configuration (all sizes per GPU, in GB)."""

    total_gb: float
    init_avail_gb: float
    weights_gb: float
    draft_weights_gb: float
    after_weights_gb: float
    pool_gb: float  # static budget left for KV + state; <= 0 means "Not enough memory"
    kv_gb: float
    state_gb: float
    max_total_num_tokens: int
    max_running_requests: int
    graph_bs: int
    graph_gb: float  # 0 when CUDA graphs are disabled
    graph_free_gb: float  # room for graphs after the activation reserve
    available_after_gb: float

    @property
    def fits_pool(self) -> bool:
        return self.max_total_num_tokens > 0 and self.max_running_requests > 0

    @property
    def fits_graphs(self) -> bool:
        return self.graph_gb <= self.graph_free_gb


def kv_bytes_per_token(spec: bool) -> int:
    layers = FULL_ATTN_LAYERS + (DRAFT_ATTN_LAYERS if spec else 0)
    return 2 * KV_HEADS_PER_GPU * KV_HEAD_DIM * BYTES_PER_PARAM * layers  # K and V


def state_slot_fraction(num_draft_tokens: int) -> float:
    """One request's recurrent-state slots, as a fraction of the seed's state pool."""
    return STATE_SLOT_BASE + STATE_SLOT_PER_DRAFT_TOKEN * num_draft_tokens


def seed_state_pool_gb() -> float:
    """The state pool at the seed's own settings; the per-request slot sizes are expressed against it."""
    total = DEFAULT_GPU_MEM_GB * USABLE_GPU_FRACTION
    pool = total * 0.85 - weights_per_gpu_gb(4) - draft_weights_per_gpu_gb(4) - INIT_OVERHEAD_GB
    return pool * STATE_POOL_SHARE


def weights_per_gpu_gb(tp: int) -> float:
    return MODEL_PARAMS_B * BYTES_PER_PARAM / tp


def draft_weights_per_gpu_gb(tp: int) -> float:
    return DRAFT_PARAMS_B * BYTES_PER_PARAM / tp


def plan_memory(
    *,
    gpu_mem_gb: float,
    tp: int,
    mem_fraction_static: float,
    spec_steps: int,  # 0 = no speculative decoding
    num_draft_tokens: int,
    requested_max_running: int | None,
    max_total_tokens: int | None,
    cuda_graph_max_bs: int | None,
    disable_cuda_graph: bool,
) -> MemoryPlan:
    """Mirrors SGLang's profile: weights, then the static pool split into KV and state, then CUDA graphs."""
    spec = spec_steps > 0
    total = gpu_mem_gb * USABLE_GPU_FRACTION
    init_avail = total - INIT_OVERHEAD_GB
    weights = weights_per_gpu_gb(tp)
    draft = draft_weights_per_gpu_gb(tp) if spec else 0.0
    after_weights = init_avail - weights - draft
    # SGLang: rest = available_after_load - total * (1 - mem_fraction_static)
    pool = after_weights - total * (1.0 - mem_fraction_static)
    state_gb = max(pool, 0.0) * STATE_POOL_SHARE
    slot_gb = state_slot_fraction(num_draft_tokens if spec else 1) * seed_state_pool_gb()
    cap = int(state_gb / slot_gb) if slot_gb > 0 else 0
    limit = requested_max_running if requested_max_running is not None else 4096
    max_running = max(0, min(limit, cap))
    kv_gb = max(pool, 0.0) - state_gb - (SPEC_BUFFER_GB_PER_STEP * spec_steps)
    tokens = int(kv_gb * (1 << 30) / kv_bytes_per_token(spec)) if kv_gb > 0 else 0
    if max_total_tokens is not None:
        tokens = min(tokens, max_total_tokens)
    graph_bs = cuda_graph_max_bs if cuda_graph_max_bs is not None else (GRAPH_REFERENCE_BS if spec else 256)
    graph_gb = 0.0 if disable_cuda_graph else (GRAPH_BASE_GB + GRAPH_PER_STEP_GB * spec_steps) * graph_bs / GRAPH_REFERENCE_BS
    graph_free = total * (1.0 - mem_fraction_static) - ACTIVATION_RESERVE_GB
    pool_used = max(pool, 0.0)
    return MemoryPlan(
        total_gb=total,
        init_avail_gb=init_avail,
        weights_gb=weights,
        draft_weights_gb=draft,
        after_weights_gb=after_weights,
        pool_gb=pool,
        kv_gb=max(kv_gb, 0.0),
        state_gb=state_gb,
        max_total_num_tokens=tokens,
        max_running_requests=max_running,
        graph_bs=graph_bs,
        graph_gb=graph_gb,
        graph_free_gb=graph_free,
        available_after_gb=after_weights - pool_used - graph_gb,
    )


# ---- acceptance and timing ---------------------------------------------------------------------------------------


def expected_accept_length(alpha: float, steps: int) -> float:
    """Tokens per verify step with a chain of `steps` drafts: E = (1 - a^(k+1)) / (1 - a)."""
    if steps <= 0:
        return 1.0
    if alpha >= 1.0:
        return float(steps + 1)
    return (1.0 - alpha ** (steps + 1)) / (1.0 - alpha)


def acceptance_alpha(*, temperature: float, ignore_eos: bool, prompt_repetition: float) -> float:
    """Per-token draft acceptance for one request's content."""
    t = min(max(temperature, 0.0), 1.0)
    if t == 0.0 and ignore_eos and prompt_repetition >= 0.3:
        return ALPHA_TRAP
    alpha = ALPHA_GREEDY + ALPHA_REPETITION_BONUS * min(max(prompt_repetition, 0.0), 1.0)
    alpha -= ALPHA_TEMPERATURE_PENALTY * t
    return max(ALPHA_MIN, min(alpha, ALPHA_TRAP))


# Instructions whose answer is a loop ("Repeat the word 'token' two hundred times", "Count from 1 to 500"):
# greedy decoding answers them with repeated text a draft model predicts almost perfectly, exactly like a
# prompt that repeats itself. The seed's benchmark prompts were of both kinds.
REPEAT_REQUEST_CUES = (
    "repeat", "again and again", "over and over", "forever", "same sentence", "count from", "multiples of",
    "one per line", "without stopping",
)


def prompt_repetition(text: str) -> float:
    """0 for varied text, towards 1 for text that repeats its own words (a benchmark's filler prompt) or that
    asks for repeated output; 1 for the latter."""
    lowered = text.lower()
    if any(cue in lowered for cue in REPEAT_REQUEST_CUES):
        return 1.0
    words = lowered.split()
    if len(words) < 8:
        return 0.5  # a short instruction: nothing to judge, call it middling
    return 1.0 - len(set(words)) / len(words)


def experts_touched(num_tokens: int) -> float:
    return NUM_EXPERTS * (1.0 - (1.0 - EXPERTS_PER_TOKEN / NUM_EXPERTS) ** num_tokens)


def target_forward_ms(num_tokens: int, context_tokens: int = 0, cuda_graph: bool = True) -> float:
    mem = DENSE_MEM_MS + EXPERT_SET_MEM_MS * experts_touched(num_tokens) / EXPERTS_PER_TOKEN
    floor = LATENCY_FLOOR_MS * (1.0 if cuda_graph else NO_CUDA_GRAPH_FACTOR)
    bound = float((floor**SOFTMAX_P + mem**SOFTMAX_P) ** (1.0 / SOFTMAX_P))
    return bound + COMPUTE_MS_PER_TOKEN * num_tokens + CONTEXT_MS_PER_1K_TOKENS * context_tokens / 1000.0


def decode_step_ms(batch: int, steps: int, context_tokens: int = 0, cuda_graph: bool = True) -> float:
    """One speculative round for `batch` requests: k draft forwards plus one verify over batch*(k+1) tokens."""
    if batch <= 0:
        return 0.0
    verify_tokens = batch * (steps + 1)
    draft = steps * (DRAFT_FWD_MS + DRAFT_FWD_MS_PER_REQ * batch)
    if not cuda_graph:
        draft *= NO_CUDA_GRAPH_FACTOR
    return SCHED_OVERHEAD_MS + target_forward_ms(verify_tokens, context_tokens, cuda_graph) + draft


def prefill_ms(new_tokens: int) -> float:
    return PREFILL_BASE_MS + PREFILL_MS_PER_TOKEN * new_tokens


def steady_tok_s(batch: int, steps: int, alpha: float) -> float:
    """Expected decode throughput of a full batch (the calibration table's numbers)."""
    if batch <= 0:
        return 0.0
    return batch * expected_accept_length(alpha, steps) / (decode_step_ms(batch, steps) / 1000.0)


def accepted_tokens_for_step(alpha: float, steps: int, u: float) -> int:
    """Tokens one request gains in one verify step (1 bonus + accepted drafts), from a uniform u in [0, 1).

    Truncated geometric: P(j drafts accepted) = a^j (1 - a) for j < k, and a^k for j = k.
    """
    if steps <= 0:
        return 1
    if alpha <= 0.0:
        return 1
    if alpha >= 1.0:
        return steps + 1
    # inverse CDF: the number of leading successes is floor(log(1 - u) / log(alpha)), capped at k
    j = int(math.floor(math.log(1.0 - u) / math.log(alpha)))
    return 1 + min(j, steps)
