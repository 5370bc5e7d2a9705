"""What the simulated scheduler keeps of each request and of all of them: parameters, per-request counts and
SGLang's finished-request counters (sim/engine.py steps them; sim/openai.py shapes their chunks)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from specdec_tui.sim.textgen import TextStream


@dataclass(slots=True)
class Emission:
    """What one scheduler step sends to one request: the tokens accepted in that step, as one chunk."""

    text: str
    tokens: int
    finish_reason: str | None
    sim_time: float


@dataclass(slots=True)
class GenParams:
    prompt: str
    max_tokens: int
    temperature: float
    ignore_eos: bool
    extra_prompt_tokens: int = 0
    stream: bool = False  # SGLang's tokenizer counters carry it as the is_streaming label
    log_metrics: bool = True  # False for health probes: upstream's tokenizer counts none of their tokens


@dataclass(eq=False)
class SimRequest:
    rid: str
    params: GenParams
    prompt_tokens: int
    alpha: float
    natural_len: int | None
    text: TextStream
    decay: float = 1.0  # the draft's acceptance falls by this factor a depth (cost_model.request_acceptance)
    workload: str = "chat"
    out: asyncio.Queue[Emission] = field(default_factory=asyncio.Queue)
    emitted: int = 0
    chunks: int = 0
    verify_steps: int = 0
    accepted: int = 0
    correct_drafts: int = 0  # drafts the verify step accepted (the bonus token not included)
    proposed_drafts: int = 0  # draft tokens verified (num_draft_tokens - 1 a round)
    drafts_histogram: list[int] = field(default_factory=list)  # verify steps by number of correct drafts
    finish_reason: str | None = None
    sim_arrival: float = 0.0
    sim_first_token: float | None = None
    sim_end: float | None = None
    cancelled: bool = False  # the client left: SGLang aborts the request (finish_reason "abort")
    stale_tokens: int = 0  # tokens decoded while adaptive ran steps 0 with the draft extend skipped: holes in the
    # draft model's KV cache for the rest of the request (sim.engine, SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND)
    draft_cold: bool = False  # the last round skipped the draft extend: the next draft starts from zeroed state

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    def spec_details(self, num_draft_tokens: int) -> dict[str, Any]:
        """What SGLang's tokenizer puts in this request's meta_info when speculative decoding is on, in the
        shape `sglext.spec_tokens_details` carries it (SpecTokensDetails). accept_length is completion
        tokens per verify step (the prefill token included, as upstream counts it); accept_rate is correct
        drafts over proposed drafts (verify steps × (num_draft_tokens - 1)).
        upstream: python/sglang/srt/managers/tokenizer_manager.py (_calculate_spec_decoding_metrics),
        python/sglang/srt/entrypoints/openai/utils.py (spec_tokens_details_from_meta_info)."""
        proposed = self.proposed_drafts
        return {
            "spec_accept_rate": self.correct_drafts / proposed if proposed else 0.0,
            "spec_accept_length": self.emitted / self.verify_steps if self.verify_steps else 0.0,
            "spec_cap_length": 0.0,
            "spec_block_accept_length": 0.0,
            "spec_num_correct_drafts": self.correct_drafts,
            "spec_num_proposed_drafts": proposed,
            "spec_verify_ct": self.verify_steps,
            "spec_correct_drafts_histogram": list(self.drafts_histogram),
            "spec_cap_lens_histogram": [],
        }

    def ground_truth(self) -> dict[str, Any]:
        decode_s = (self.sim_end or 0.0) - (self.sim_first_token or 0.0)
        return {
            "completion_tokens": self.emitted,
            "prompt_tokens": self.prompt_tokens,
            "chunks": self.chunks,
            "finish_reason": self.finish_reason,
            "alpha": self.alpha,
            "accept_length": (self.accepted / self.verify_steps) if self.verify_steps else None,
            "sim_arrival": self.sim_arrival,
            "sim_first_token": self.sim_first_token,
            "sim_end": self.sim_end,
            "ttft_s": (self.sim_first_token - self.sim_arrival) if self.sim_first_token is not None else None,
            "decode_tok_s": ((self.emitted - 1) / decode_s) if self.sim_end and decode_s > 0 else None,
        }


@dataclass(slots=True)
class Totals:
    requests: int = 0
    finished: int = 0  # ended on their own ("stop"/"length"); what /metrics counts as processed
    aborted: int = 0  # ended because the client left
    prompt_tokens: int = 0
    completion_tokens: int = 0
    decode_steps: int = 0
    spec_accepted: int = 0  # tokens gained per request-step, bonus token included (SGLang's accept length numerator)
    spec_forward_ct: int = 0


@dataclass(slots=True)
class FinishedCounters:
    """SGLang's tokenizer counters: each finished request adds its totals once, when it finishes, keyed by
    is_streaming; verify steps only when there were any.
    upstream: python/sglang/srt/observability/metrics_collector.py (observe_one_finished_request)."""

    prompt_tokens: dict[bool, int] = field(default_factory=lambda: {False: 0, True: 0})
    generation_tokens: dict[bool, int] = field(default_factory=lambda: {False: 0, True: 0})
    requests: dict[bool, int] = field(default_factory=lambda: {False: 0, True: 0})
    spec_verify_calls: int = 0
    saw_spec_verify: bool = False  # prometheus_client shows a labelled counter only once it was incremented

    def add(self, req: SimRequest) -> None:
        s = req.params.stream
        self.prompt_tokens[s] += req.prompt_tokens
        self.generation_tokens[s] += req.emitted
        self.requests[s] += 1
