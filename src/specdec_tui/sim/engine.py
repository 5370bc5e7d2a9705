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
from dataclasses import dataclass
from typing import Any

from specdec_tui.sim import cost_model
from specdec_tui.sim.adaptive import AdaptivePolicy
from specdec_tui.sim.cost_model import NO_SPEC, Tree
from specdec_tui.sim.logs import (
    MambaPool,
    SimLog,
    adaptive_steps_updated_line,
    adaptive_switch_line,
    decode_batch_line,
    prefill_batch_line,
)
from specdec_tui.sim.profiles import SEED, Profile
from specdec_tui.sim.requests import Emission, FinishedCounters, GenParams, SimRequest, Totals
from specdec_tui.sim.textgen import TextStream, count_prompt_tokens

KEPT_FINISHED = 10000  # records of ended requests kept for /sim/ground_truth; older ones are dropped (totals stay exact)


@dataclass(slots=True)
class EngineConfig:
    steps: int  # 0 = no speculative decoding
    num_draft_tokens: int
    max_running_requests: int
    max_total_num_tokens: int
    decode_log_interval: int
    cuda_graph: bool  # decode CUDA graphs captured at all
    time_scale: float
    seed: int
    topk: int = 1
    profile: Profile = SEED
    algorithm: str = "EAGLE"
    graph_max_bs: int = 0  # the largest captured decode batch; a larger batch runs eagerly
    adaptive: AdaptivePolicy | None = None
    mamba: MambaPool | None = None  # a hybrid model's state pool, for the log lines
    corrupt_drafts: bool = False  # --sim-fault corrupt-drafts: no draft survives and the text goes to garbage
    skip_zero_step_extend: bool = False  # SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND (see `_gained`)
    acceptance_drift: bool = False  # --sim-fault acceptance-drift: acceptance falls as a request's context grows

    @property
    def tree(self) -> Tree:
        return Tree(self.steps, self.topk, self.num_draft_tokens) if self.steps > 0 else NO_SPEC


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
        self._log_proposed = 0
        self._log_correct = 0
        self.last_graph = cfg.cuda_graph
        self.mamba = cfg.mamba
        self.tree = cfg.tree  # the round's shape; adaptive speculation changes it by the running batch

    @property
    def corrupting(self) -> bool:
        """--sim-fault corrupt-drafts breaks the drafts: a server without speculation has none to break."""
        return self.cfg.corrupt_drafts and self.cfg.steps > 0

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
        workload = cost_model.workload_of(params.prompt)
        alpha, decay = cost_model.request_acceptance(self.cfg.profile, self.cfg.algorithm, workload,
                                                     temperature=params.temperature, ignore_eos=params.ignore_eos)
        trap = cost_model.is_trap(params.temperature, params.ignore_eos)
        natural = None if params.ignore_eos else random.Random(f"{self.cfg.seed}|eos|{index}|{params.prompt}").randint(60, 900)
        req = SimRequest(
            rid=rid,
            params=params,
            prompt_tokens=count_prompt_tokens(params.prompt) + params.extra_prompt_tokens,
            alpha=alpha,
            decay=decay,
            workload=workload.value,
            natural_len=natural,
            text=TextStream(self.cfg.seed, params.prompt, index, degenerate=trap or self.corrupting),
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
    def _event_loop_time(self) -> float:
        return asyncio.get_running_loop().time()

    def _sync_clock(self) -> None:
        """While idle the simulated clock follows the (scaled) wall clock, so idle time is not 'decoding'."""
        if not self.running:
            real_sim = (self._event_loop_time() - self._real0) * self.cfg.time_scale
            self.sim_now = max(self.sim_now, real_sim)

    async def _advance(self, dt: float) -> None:
        self.sim_now += dt
        deadline = self._real0 + self.sim_now / self.cfg.time_scale
        delay = deadline - self._event_loop_time()
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
        dt = cost_model.prefill_ms(self.cfg.profile, tokens) / 1000.0
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

    def _round_tree(self, batch: int) -> Tree:
        """The round's tree: fixed, or the adaptive tier's steps for this batch (logged when it changes)."""
        policy = self.cfg.adaptive
        if policy is None:
            return self.tree
        steps = policy.steps_for(batch)
        if steps != self.tree.steps:
            new = Tree(steps, 1, steps + 1) if steps > 0 else NO_SPEC
            self.log.scheduler(adaptive_switch_line(self.tree.steps, steps, self.tree.num_draft_tokens,
                                                    new.num_draft_tokens))
            self.tree = new
        return self.tree

    async def _decode_step(self) -> None:
        batch = list(self.running)
        context = self._used_tokens()
        tree = self._round_tree(len(batch))
        captured = self.cfg.graph_max_bs if self.cfg.cuda_graph and self.cfg.graph_max_bs > 0 else None
        ms, graph = cost_model.round_ms_with_graphs(self.cfg.profile, len(batch), tree, context, captured)
        self.last_graph = graph
        await self._advance(ms / 1000.0)
        correct: list[int] = []
        for req in batch:
            if req.cancelled or req.done:
                continue
            gained = self._gained(req, tree)
            req.verify_steps += 1
            req.accepted += gained
            if tree.speculative:
                if not req.drafts_histogram:
                    req.drafts_histogram = [0] * max(self.cfg.num_draft_tokens, tree.num_draft_tokens, 8)
                if gained - 1 >= len(req.drafts_histogram):
                    req.drafts_histogram.extend([0] * (gained - len(req.drafts_histogram)))
                req.drafts_histogram[gained - 1] += 1
                req.correct_drafts += gained - 1
                req.proposed_drafts += tree.num_draft_tokens - 1
                correct.append(gained - 1)
                self._log_correct += gained - 1
                self._log_proposed += tree.num_draft_tokens - 1
            if self.cfg.steps > 0:  # a speculative server counts every round (adaptive may run one at steps 0)
                self.totals.spec_accepted += gained
                self.totals.spec_forward_ct += 1
                self._log_accepted += gained
                self._log_forward += 1
            self._emit(req, gained)
        self._adapt(len(batch), correct)
        self.totals.decode_steps += 1
        if self.totals.decode_steps % self.cfg.decode_log_interval == 0:
            self._log_decode()

    def _gained(self, req: SimRequest, tree: Tree) -> int:
        """Tokens the round gives `req`. Upstream (eagle_worker_v2.py, 0.5.23): with adaptive speculation at steps
        0 the draft extend still runs, keeping the draft's KV warm; SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND skips
        it, and "an upshift to steps>0 would draft from this stale state (cold recovery)". So here: a round at
        steps 0 with the extend skipped leaves the token out of the draft's KV (a hole for the rest of the
        request) and its state zeroed; the next drafted round, from zeroed state, has no draft accepted; later
        ones accept as the draft's context allows, the holes' share of the request's own tokens taken out of
        its acceptance. A batch that moves across a tier boundary between steps 0 and steps > 0 pays each time."""
        if not tree.speculative:
            if self.cfg.skip_zero_step_extend and self.cfg.adaptive is not None:
                req.stale_tokens += 1
                req.draft_cold = True
            return 1
        if self.cfg.corrupt_drafts:
            return 1
        if req.draft_cold:
            req.draft_cold = False
            return 1
        alpha = cost_model.drifted(req.alpha, req.prompt_tokens + req.emitted) if self.cfg.acceptance_drift else req.alpha
        if req.stale_tokens:
            alpha *= max(0.0, 1.0 - req.stale_tokens / max(1, req.emitted))
        return cost_model.accepted_tokens(alpha, tree, self.rng.random(), req.decay)

    def _adapt(self, batch: int, correct: list[int]) -> None:
        """Feeds the round to the batch's adaptive tier; its own decision is logged (the switch, next round)."""
        policy = self.cfg.adaptive
        if policy is None:
            return
        tier = policy.tier_for(batch)
        old = tier.steps
        if tier.observe(correct if self.tree.speculative else [0] * batch) is not None:
            self.log.scheduler(adaptive_steps_updated_line(old, tier.steps, tier.ema))

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
            if req.params.log_metrics:
                self.counters.add(req)
            if self.cfg.steps > 0 and req.verify_steps > 0 and req.params.log_metrics:
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
            accept_rate = self._log_correct / self._log_proposed if self._log_proposed else 0.0
            self.last_accept_length, self.last_accept_rate = accept_len, accept_rate
        self._log_accepted = self._log_forward = self._log_correct = self._log_proposed = 0
        used = self._used_tokens()
        self.log.scheduler(
            decode_batch_line(
                running=len(self.running),
                used_tokens=used,
                token_usage=used / max(self.cfg.max_total_num_tokens, 1),
                accept_len=accept_len,
                accept_rate=accept_rate,
                cuda_graph=self.last_graph,
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
