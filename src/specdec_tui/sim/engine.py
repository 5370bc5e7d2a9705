"""The simulated scheduler: one asyncio loop stepping a batch on a simulated clock.

Simulated time advances by the model's step cost; each step's results are released when the loop clock reaches
that step's deadline (sim time / time scale). Rates are computed from simulated time, so what the server reports
does not depend on how busy the CPU is, only on the configuration and the load.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from specdec_tui.core.sglang.stats import spec_accept_rate
from specdec_tui.sim import model
from specdec_tui.sim.logs import SimLog, decode_batch_line, mamba_pool, prefill_batch_line
from specdec_tui.sim.textgen import TextStream, count_prompt_tokens

KEPT_FINISHED = 10000  # records of ended requests kept for /sim/ground_truth; older ones are dropped (totals stay exact)


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


@dataclass(eq=False)
class SimRequest:
    rid: str
    params: GenParams
    prompt_tokens: int
    alpha: float
    natural_len: int | None
    text: TextStream
    out: asyncio.Queue[Emission] = field(default_factory=asyncio.Queue)
    emitted: int = 0
    chunks: int = 0
    verify_steps: int = 0
    accepted: int = 0
    correct_drafts: int = 0  # drafts the verify step accepted (the bonus token not included)
    drafts_histogram: list[int] = field(default_factory=list)  # verify steps by number of correct drafts
    finish_reason: str | None = None
    sim_arrival: float = 0.0
    sim_first_token: float | None = None
    sim_end: float | None = None
    cancelled: bool = False  # the client left: SGLang aborts the request (finish_reason "abort")

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
        proposed = self.verify_steps * max(num_draft_tokens - 1, 0)
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
class EngineConfig:
    steps: int  # 0 = no speculative decoding
    num_draft_tokens: int
    max_running_requests: int
    max_total_num_tokens: int
    decode_log_interval: int
    cuda_graph: bool
    time_scale: float
    seed: int


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


class Engine:
    """Admits requests, runs prefill and speculative decode steps, streams each step's tokens to its request."""

    def __init__(self, cfg: EngineConfig, log: SimLog) -> None:
        self.cfg = cfg
        self.log = log
        self.rng = random.Random(cfg.seed)
        self.waiting: deque[SimRequest] = deque()
        self.running: list[SimRequest] = []
        self.requests: dict[str, SimRequest] = {}  # live ones only (waiting or running)
        # Ended requests as compact ground-truth records (no queue, no text stream), the newest KEPT_FINISHED:
        # a long demo must not grow the server without bound.
        self.ended: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.totals = Totals()
        self.counters = FinishedCounters()
        self.sim_now = 0.0
        self._real0 = 0.0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ids = itertools.count()
        self._log_tokens = 0
        self._log_sim_t = 0.0
        self._log_accepted = 0
        self._log_forward = 0
        self.last_gen_throughput = 0.0
        self.last_accept_length = 0.0
        self.last_accept_rate = 0.0
        self.mamba = mamba_pool(cfg.max_running_requests, cfg.num_draft_tokens)  # the hybrid model's state pool

    # ---- lifecycle ----------------------------------------------------------------------------------------------
    def start(self) -> None:
        self._real0 = asyncio.get_running_loop().time()
        self._task = asyncio.create_task(self._run(), name="sim-decode-loop")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    # ---- requests -----------------------------------------------------------------------------------------------
    def submit(self, params: GenParams) -> SimRequest:
        index = next(self._ids)
        rid = f"{self.rng.getrandbits(128):032x}"
        repetition = model.prompt_repetition(params.prompt)
        alpha = model.acceptance_alpha(
            temperature=params.temperature, ignore_eos=params.ignore_eos, prompt_repetition=repetition
        )
        trap = alpha >= model.ALPHA_TRAP
        natural = None if params.ignore_eos else random.Random(f"{self.cfg.seed}|eos|{index}|{params.prompt}").randint(60, 900)
        req = SimRequest(
            rid=rid,
            params=params,
            prompt_tokens=count_prompt_tokens(params.prompt) + params.extra_prompt_tokens,
            alpha=alpha,
            natural_len=natural,
            text=TextStream(self.cfg.seed, params.prompt, index, degenerate=trap),
        )
        self._sync_clock()
        req.sim_arrival = self.sim_now
        self.requests[rid] = req
        self.waiting.append(req)
        self.totals.requests += 1
        self.totals.prompt_tokens += req.prompt_tokens
        self._wake.set()
        return req

    def cancel(self, req: SimRequest) -> None:
        """The client left: abort the request (as SGLang does) unless it already ended; it generates no more."""
        if req.done:
            return
        req.cancelled = True
        if req in self.waiting:
            self.waiting.remove(req)
        req.finish_reason = "abort"
        req.sim_end = self.sim_now
        self.totals.aborted += 1
        self._retire(req)

    def _retire(self, req: SimRequest) -> None:
        """Move an ended request from the live map to the bounded record of ended ones."""
        self.requests.pop(req.rid, None)
        self.ended[req.rid] = req.ground_truth()
        while len(self.ended) > KEPT_FINISHED:
            self.ended.popitem(last=False)

    # ---- clock --------------------------------------------------------------------------------------------------
    def _loop_time(self) -> float:
        return asyncio.get_running_loop().time()

    def _sync_clock(self) -> None:
        """While idle the simulated clock follows the (scaled) wall clock, so idle time is not 'decoding'."""
        if not self.running:
            real_sim = (self._loop_time() - self._real0) * self.cfg.time_scale
            self.sim_now = max(self.sim_now, real_sim)

    async def _advance(self, dt: float) -> None:
        self.sim_now += dt
        deadline = self._real0 + self.sim_now / self.cfg.time_scale
        delay = deadline - self._loop_time()
        await asyncio.sleep(max(0.0, delay))

    # ---- the loop -----------------------------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            self.running = [r for r in self.running if not r.cancelled and not r.done]
            if not self.running and not self.waiting:
                self._wake.clear()
                await self._wake.wait()
                self._sync_clock()
                continue
            admitted = self._admit()
            if admitted:
                await self._prefill(admitted)
            elif self.running:
                await self._decode_step()
            else:
                await asyncio.sleep(0)

    def _used_tokens(self) -> int:
        return sum(r.prompt_tokens + r.emitted for r in self.running)

    def _admit(self) -> list[SimRequest]:
        new: list[SimRequest] = []
        budget = self.cfg.max_total_num_tokens - self._used_tokens()
        while self.waiting and len(self.running) + len(new) < self.cfg.max_running_requests:
            req = self.waiting[0]
            if req.cancelled:
                self.waiting.popleft()
                continue
            need = req.prompt_tokens + min(req.params.max_tokens, 4096)
            if new and need > budget:
                break
            self.waiting.popleft()
            budget -= need
            new.append(req)
        return new

    async def _prefill(self, new: list[SimRequest]) -> None:
        tokens = sum(r.prompt_tokens for r in new)
        dt = model.prefill_ms(tokens) / 1000.0
        self.running.extend(new)
        self.log.scheduler(
            prefill_batch_line(
                new_seq=len(new),
                new_token=tokens,
                cached_token=0,
                token_usage=self._used_tokens() / max(self.cfg.max_total_num_tokens, 1),
                running=len(self.running) - len(new),
                queue=len(self.waiting),
                input_throughput=tokens / dt if dt > 0 else 0.0,
                mamba=self.mamba,
            )
        )
        await self._advance(dt)
        for req in new:
            if req.cancelled:
                continue
            req.sim_first_token = self.sim_now
            self._emit(req, 1)

    async def _decode_step(self) -> None:
        batch = list(self.running)
        context = self._used_tokens()
        dt = model.decode_step_ms(len(batch), self.cfg.steps, context, self.cfg.cuda_graph) / 1000.0
        await self._advance(dt)
        for req in batch:
            if req.cancelled or req.done:
                continue
            gained = model.accepted_tokens_for_step(req.alpha, self.cfg.steps, self.rng.random())
            req.verify_steps += 1
            req.accepted += gained
            if self.cfg.steps > 0:
                if not req.drafts_histogram:
                    req.drafts_histogram = [0] * max(self.cfg.num_draft_tokens, self.cfg.steps + 1)
                req.drafts_histogram[gained - 1] += 1
                req.correct_drafts += gained - 1
                self.totals.spec_accepted += gained
                self.totals.spec_forward_ct += 1
                self._log_accepted += gained
                self._log_forward += 1
            self._emit(req, gained)
        self.totals.decode_steps += 1
        if self.totals.decode_steps % self.cfg.decode_log_interval == 0:
            self._log_decode()

    def _emit(self, req: SimRequest, gained: int) -> None:
        limit = req.params.max_tokens
        if req.natural_len is not None:
            limit = min(limit, req.natural_len)
        n = max(0, min(gained, limit - req.emitted))
        finish = None
        if req.emitted + n >= limit:
            finish = "stop" if req.natural_len is not None and limit == req.natural_len else "length"
        text = req.text.take(n)
        req.emitted += n
        req.chunks += 1
        self.totals.completion_tokens += n
        self._log_tokens += n
        if finish:
            req.finish_reason = finish
            req.sim_end = self.sim_now
            self.totals.finished += 1
            self.counters.add(req)
            if self.cfg.steps > 0 and req.verify_steps > 0:
                self.counters.spec_verify_calls += req.verify_steps
                self.counters.saw_spec_verify = True
            self._retire(req)
        req.out.put_nowait(Emission(text=text, tokens=n, finish_reason=finish, sim_time=self.sim_now))

    def _log_decode(self) -> None:
        span = self.sim_now - self._log_sim_t
        self.last_gen_throughput = self._log_tokens / span if span > 0 else 0.0
        self._log_tokens = 0
        self._log_sim_t = self.sim_now
        accept_len = accept_rate = None
        if self.cfg.steps > 0 and self._log_forward:
            accept_len = self._log_accepted / self._log_forward
            accept_rate = spec_accept_rate(accept_len, self.cfg.num_draft_tokens)
            self.last_accept_length, self.last_accept_rate = accept_len, accept_rate
        self._log_accepted = self._log_forward = 0
        used = self._used_tokens()
        self.log.scheduler(
            decode_batch_line(
                running=len(self.running),
                used_tokens=used,
                token_usage=used / max(self.cfg.max_total_num_tokens, 1),
                accept_len=accept_len,
                accept_rate=accept_rate,
                cuda_graph=self.cfg.cuda_graph,
                gen_throughput=self.last_gen_throughput,
                queue=len(self.waiting),
                mamba=self.mamba,
            )
        )

    # ---- reporting ----------------------------------------------------------------------------------------------
    @property
    def avg_accept_length(self) -> float:
        t = self.totals
        return t.spec_accepted / t.spec_forward_ct if t.spec_forward_ct else 0.0

    def ground_truth(self) -> dict[str, Any]:
        t = self.totals
        return {
            "sim_time": self.sim_now,
            "wall_time": time.time(),
            "requests": {**self.ended, **{rid: r.ground_truth() for rid, r in self.requests.items()}},
            "totals": {
                "requests": t.requests,
                "finished": t.finished,
                "aborted": t.aborted,
                "prompt_tokens": t.prompt_tokens,
                "completion_tokens": t.completion_tokens,
                "decode_steps": t.decode_steps,
                "avg_accept_length": self.avg_accept_length,
            },
            "config": {
                "speculative_num_steps": self.cfg.steps,
                "max_running_requests": self.cfg.max_running_requests,
                "max_total_num_tokens": self.cfg.max_total_num_tokens,
                "time_scale": self.cfg.time_scale,
            },
        }
