"""The simulated GPU's arithmetic: how many tokens a speculative step accepts and what the step costs.

Pure functions over a `Profile` (sim/profiles.py: the model, its hardware and the constants fit to published
figures) and numbers; no IO, no clock, so every property is a table test (tests/test_sim_cost_model.py).

Drafting is a tree (EAGLE-2's dynamic tree, SGLang's `--speculative-eagle-topk` / `--speculative-num-steps` /
`--speculative-num-draft-tokens`): `steps` draft forwards each widen `topk` beams; the verify forward checks
`num_draft_tokens` tokens, the root (the last verified token) included. What the sim needs of that tree is how
many of the `num_draft_tokens - 1` draft nodes sit at each depth under the true path: a depth with `w` nodes
holds the target's next token with probability q(w) = 1 - (1 - a)^(1 + (w - 1) / 2) (`a` the draft's top-1
acceptance for this text), and the accepted length is 1 + the number of leading depths that hold it.
The nodes go, one at a time, where they add the most expected length (EAGLE-2 reranks candidates by path
probability; this greedy allocation is the same choice in expectation), at most `topk` per depth and depth by
depth. So: accept length <= min(steps + 1, num_draft_tokens); exactly 1 when only the root is verified;
topk 1 is the chain E = (1 - a^(k+1)) / (1 - a); and width pays where `a` is moderate, not where it is ~1.

Cost: a target forward over T tokens is max(latency floor, weight/expert reads, T x compute) (a soft max, the
roofline with a kernel-launch floor) plus a per-token linear part and the attention reads over the batch's
context; the verify forward is over batch x num_draft_tokens tokens, each draft forward over batch x topk.
Without a CUDA graph (a batch above the largest captured one, or graphs disabled) every forward pays its kernel
launches on the CPU on top: (eager_factor - 1) x the floor, ~4x a latency-bound step (sglang#33900).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from specdec_tui.sim.profiles import Profile

# P(the true token is among a depth's w candidates | the path above is right) = 1 - (1 - a)^(1 + WIDTH_GAIN (w - 1)):
# each further candidate is worth half a top-1 guess. A draft that is often right is right at top-1 (little left
# for width to win); one that is often wrong is wrong at top-2 too. EAGLE-2 (Li et al. 2024): the top-2..top-4
# draft tokens still hold much of the target's choice where top-1 misses, and trees beat chains at batch 1.
WIDTH_GAIN = 0.5


class Workload(Enum):
    """The kind of text a request asks for; the draft predicts each differently (workload presets)."""

    CHAT = "chat"
    CODE = "code"
    REPETITIVE = "repetitive"


@dataclass(frozen=True, slots=True)
class Tree:
    """One speculative round's shape as SGLang resolved it."""

    steps: int
    topk: int
    num_draft_tokens: int  # verified per request per round, the root included

    @property
    def speculative(self) -> bool:
        return self.steps > 0 and self.num_draft_tokens > 1


NO_SPEC = Tree(0, 1, 1)


# ---- the tree ---------------------------------------------------------------------------------------------------


def depth_hit(alpha: float, width: int) -> float:
    """P(one depth with `width` candidates holds the target's token, given the path above it is right)."""
    if width <= 0:
        return 0.0
    return 1.0 - float((1.0 - alpha) ** (1.0 + WIDTH_GAIN * (width - 1)))


@lru_cache(maxsize=4096)
def tree_widths(alpha: float, tree: Tree, decay: float = 1.0) -> tuple[int, ...]:
    """Draft nodes per depth (1..steps) on the true path's side of the tree, greedily placed. `decay`: the
    draft's acceptance at depth d is alpha x decay^(d - 1) (an MTP head trained one token ahead decays)."""
    if not tree.speculative:
        return ()
    widths = [0] * tree.steps
    for _ in range(tree.num_draft_tokens - 1):
        best, gain = -1, 0.0
        now = _expected(alpha, decay, widths)
        for d in range(tree.steps):
            if widths[d] >= tree.topk or (d > 0 and widths[d - 1] == 0):
                continue
            widths[d] += 1
            g = _expected(alpha, decay, widths) - now
            widths[d] -= 1
            if g > gain + 1e-12:
                best, gain = d, g
        if best < 0:
            break
        widths[best] += 1
    return tuple(widths)


def _expected(alpha: float, decay: float, widths: list[int]) -> float:
    total, reach = 1.0, 1.0
    for d, w in enumerate(widths):
        reach *= depth_hit(alpha * decay**d, w)
        total += reach
    return total


def depth_hits(alpha: float, tree: Tree, decay: float = 1.0) -> tuple[float, ...]:
    """The conditional hit probability of each depth actually drafted."""
    return tuple(depth_hit(alpha * decay**d, w) for d, w in enumerate(tree_widths(alpha, tree, decay)) if w > 0)


def expected_accept_length(alpha: float, tree: Tree, decay: float = 1.0) -> float:
    """Tokens a request gains per verify round: 1 (the target's own) + the accepted drafts."""
    return _expected(alpha, decay, list(tree_widths(alpha, tree, decay)))


DRIFT_TOKENS = 1024  # --sim-fault acceptance-drift: a request's acceptance falls linearly over this much context...
DRIFT_FLOOR = 0.5  # ...to this share of its own (the draft still helps: a drift, not a collapse)


def drifted(alpha: float, context_tokens: int) -> float:
    """--sim-fault acceptance-drift: the draft loses the context (sglang#30763), acceptance falls as it grows."""
    return alpha * max(DRIFT_FLOOR, 1.0 - context_tokens / DRIFT_TOKENS)


def accepted_tokens(alpha: float, tree: Tree, u: float, decay: float = 1.0) -> int:
    """A draw of the tokens gained in one round, from a uniform u in [0, 1): P(>= 1 + d) = prod of the first d
    depths' hits, so the mean is `expected_accept_length`."""
    survive = 1.0
    gained = 1
    for q in depth_hits(alpha, tree, decay):
        survive *= q
        if u >= 1.0 - survive:
            gained += 1
        else:
            break
    return gained


# ---- acceptance of a request ----------------------------------------------------------------------------------

REPEAT_CUES = ("repeat", "again and again", "over and over", "forever", "same sentence", "count from",
               "multiples of", "one per line", "without stopping", "alphabet")
CODE_CUES = ("def ", "function", "python", "code", "sql", "regex", "class ", "script", "bash", "json", "```",
             "implement", "compile", "javascript", "rust", "typescript", "bug")


def workload_of(prompt: str) -> Workload:
    """What kind of text the prompt asks for (the shipped prompt sets' kinds: chat, code, repetitive)."""
    lowered = prompt.lower()
    if any(cue in lowered for cue in REPEAT_CUES):
        return Workload.REPETITIVE
    if any(cue in lowered for cue in CODE_CUES):
        return Workload.CODE
    words = lowered.split()
    if len(words) >= 12 and len(set(words)) / len(words) < 0.4:  # a prompt that repeats itself
        return Workload.REPETITIVE
    return Workload.CHAT


def is_trap(temperature: float, ignore_eos: bool) -> bool:
    """The seed's trap, as the seed states it: temperature 0 + ignore_eos "produces highly repetitive,
    predictable output ... near-100% acceptance" — for any prompt: greedy decoding forced past its end loops."""
    return temperature <= 0.0 and ignore_eos


def acceptance_alpha(profile: Profile, algorithm: str, workload: Workload, *, temperature: float,
                     ignore_eos: bool) -> float:
    """The draft's per-token (top-1) acceptance for one request."""
    if is_trap(temperature, ignore_eos):
        return profile.trap_alpha
    base = profile.alpha_for(algorithm)
    miss = 1.0 - base
    miss *= {Workload.CHAT: 1.0, Workload.CODE: CODE_MISS_SHARE, Workload.REPETITIVE: REPETITIVE_MISS_SHARE}[workload]
    t = min(max(temperature, 0.0), 2.0)
    alpha = (1.0 - miss) * (1.0 - TEMPERATURE_LOSS * min(t, 1.0))
    return max(ALPHA_MIN, min(alpha, profile.trap_alpha))


def request_acceptance(profile: Profile, algorithm: str, workload: Workload, *, temperature: float,
                       ignore_eos: bool) -> tuple[float, float]:
    """(top-1 acceptance, per-depth decay) for one request: the trap's loop is as easy at every depth."""
    alpha = acceptance_alpha(profile, algorithm, workload, temperature=temperature, ignore_eos=ignore_eos)
    return alpha, 1.0 if is_trap(temperature, ignore_eos) else profile.depth_decay


CODE_MISS_SHARE = 0.7  # code is more predictable than chat: EAGLE-3 paper, HumanEval accept lengths > MT-Bench's
REPETITIVE_MISS_SHARE = 0.35  # asked-for repetition at its natural end is near the trap
TEMPERATURE_LOSS = 0.25  # per unit temperature: sampling diverges from the draft (EAGLE papers, T=1 vs T=0 rows)
ALPHA_MIN = 0.2


# ---- cost -------------------------------------------------------------------------------------------------------


def _soft_max(values: tuple[float, ...], p: float) -> float:
    top = max(values)
    if top <= 0:
        return 0.0
    return top * float(sum((v / top) ** p for v in values if v > 0) ** (1.0 / p))


def experts_touched(profile: Profile, tokens: int) -> float:
    """Distinct routed experts a forward over `tokens` tokens reads (uniform routing)."""
    if profile.num_experts <= 0:
        return 0.0
    share = profile.experts_per_token / profile.num_experts
    return profile.num_experts * (1.0 - (1.0 - share) ** tokens)


def target_forward_ms(profile: Profile, tokens: int, context_tokens: int, graph: bool) -> float:
    """One target forward over `tokens` new tokens with `context_tokens` of KV to attend over."""
    floor = profile.floor_ms
    launches = 0.0 if graph else profile.floor_ms * (profile.eager_factor - 1.0)  # serial CPU launches, unhidden
    mem = profile.dense_mem_ms
    if profile.num_experts:
        mem += profile.expert_set_mem_ms * experts_touched(profile, tokens) / profile.experts_per_token
    compute = profile.compute_ms_per_token * tokens
    bound = _soft_max((floor, mem, compute), profile.soft_max_p)
    return (bound + launches + profile.linear_ms_per_token * tokens
            + profile.context_ms_per_1k * context_tokens / 1000.0)


def draft_ms(profile: Profile, batch: int, tree: Tree, graph: bool) -> float:
    """The draft's `steps` forwards over batch x topk tokens each (plus its extend over the verified tokens)."""
    if not tree.speculative:
        return 0.0
    floor = profile.draft_floor_ms * (1.0 if graph else profile.eager_factor)
    per_step = floor + profile.draft_ms_per_token * batch * tree.topk
    extend = floor + profile.draft_ms_per_token * batch * tree.num_draft_tokens
    return tree.steps * per_step + extend * profile.draft_extend_share


def step_ms(profile: Profile, batch: int, tree: Tree, context_tokens: int = 0, graph: bool = True) -> float:
    """One decode round for `batch` running requests: drafting, then one verify over batch x draft tokens (or a
    plain decode forward over batch tokens without speculation)."""
    if batch <= 0:
        return 0.0
    tokens = batch * (tree.num_draft_tokens if tree.speculative else 1)
    overhead = profile.sched_ms + profile.per_request_ms * batch
    if tree.speculative:
        overhead += profile.verify_ms_per_token * tokens
    return overhead + target_forward_ms(profile, tokens, context_tokens, graph) + draft_ms(profile, batch, tree, graph)


def steady_tok_s(profile: Profile, batch: int, tree: Tree, alpha: float, context_tokens: int = 0,
                 graph: bool = True, decay: float = 1.0) -> float:
    """Decode throughput of a full batch of like requests (what the calibration tables hold)."""
    if batch <= 0:
        return 0.0
    gain = expected_accept_length(alpha, tree, decay) if tree.speculative else 1.0
    return batch * gain / (step_ms(profile, batch, tree, context_tokens, graph) / 1000.0)


def prefill_ms(profile: Profile, new_tokens: int) -> float:
    return profile.prefill_base_ms + profile.prefill_ms_per_token * new_tokens


# ---- CUDA graphs ------------------------------------------------------------------------------------------------


def default_graph_max_bs(gpu_mem_gb: float, tp: int, max_running_requests: int | None) -> int:
    """Upstream's --cuda-graph-max-bs-decode when absent, by GPU memory and tp (0.5.23
    srt/arg_groups/memory_hook.py handle_gpu_memory_settings), capped by an explicit --max-running-requests."""
    mib = gpu_mem_gb * 1024
    if mib < 20 * 1024:
        max_bs = 8
    elif mib < 35 * 1024:
        max_bs = 48 if tp < 4 else 160
    elif mib < 60 * 1024:
        max_bs = 32 if tp < 4 else 160
    elif mib < 160 * 1024:
        max_bs = 256 if tp < 4 else 512
    else:
        max_bs = 512
    if max_running_requests is not None and max_bs > max_running_requests:
        max_bs = max_running_requests
    return max_bs


def capture_batch_sizes(max_bs: int, speculative: bool, pool_size: int) -> list[int]:
    """The decode batch sizes captured: upstream's list up to max_bs (cuda_graph_hook
    generate_decode_cuda_graph_batch_sizes), clamped to the request pool (base_cuda_graph_runner
    get_batch_sizes_to_capture adds the pool size when it is below max_bs)."""
    if speculative:
        sizes = [*range(1, 9), *range(10, 33, 2), *range(40, 65, 4), *range(72, 257, 8), *range(272, max_bs + 1, 16)]
    else:
        sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), *range(512, max_bs + 1, 32)]
    sizes = [b for b in sizes if b <= max_bs]
    if max_bs not in sizes:
        sizes.append(max_bs)
    if pool_size > 0 and max(sizes) > pool_size:
        sizes.append(pool_size)
    return sorted({b for b in sizes if 0 < b <= max(pool_size, 1)})


def graph_memory_gb(profile: Profile, captured_max_bs: int, tree: Tree) -> float:
    """Memory the captured graphs hold: their static buffers grow with the batch and with the tokens a round
    moves per request (verify: num_draft_tokens; drafting: steps x topk)."""
    per_request = tree.num_draft_tokens + tree.steps * tree.topk if tree.speculative else 1
    return profile.graph_base_gb + profile.graph_gb_per_token * captured_max_bs * per_request


def round_ms_with_graphs(profile: Profile, batch: int, tree: Tree, context_tokens: int,
                         captured_max_bs: int | None) -> tuple[float, bool]:
    """A round's cost and whether it ran as a CUDA graph (a batch above the largest captured one runs eagerly)."""
    graph = captured_max_bs is not None and batch <= captured_max_bs
    return step_ms(profile, batch, tree, context_tokens, graph), graph
