"""What a run sends: pre-serialised request bodies drawn from the profile's workload (or its legacy prompt set)
with their input/output lengths and sampling, and the facts that name that load in a trial (name, version,
content hash, seed). Bodies are built before the run so the hot loop does no JSON work on the way out."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

import orjson

from specdec_tui.bench.prompts import PromptSetError, load_prompt_set
from specdec_tui.bench.token_lengths import TOKENIZE_PATH, TokenScale, sample_text
from specdec_tui.bench.workloads import WorkItem, Workload, WorkloadError, load_workload
from specdec_tui.bench.workloads.trace import cut_words
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.lengths import LengthDist, fit_words, parse_length

MIN_BODIES = 256  # distinct bodies per run: enough draws of the length distributions, still cheap to build


class PlanError(Exception):
    """The load cannot be built, in words."""


@dataclass(frozen=True, slots=True)
class RequestPlan:
    bodies: list[bytes]
    repetitive: bool
    limits: list[int] = field(default_factory=list)  # each body's max_tokens: the usage check's bound per request
    workload: dict[str, str | int] = field(default_factory=dict)  # name, version, hash, seed: kept with the trial
    temperature: float = 0.0
    arrivals: tuple[float, ...] = ()  # a trace: bodies[i] is sent at arrivals[i] s (open loop); () otherwise
    length_sample: str = ""  # input_len asked and not yet in tokens: the workload's text to measure tokens a word on


def _from_prompts(profile: BenchProfile) -> Workload:
    try:
        ps = load_prompt_set(profile.prompts)
    except PromptSetError as err:
        raise PlanError(str(err)) from None
    items = tuple(WorkItem(prompt=p.text, kind=p.kind) for p in ps.prompts)
    digest = hashlib.sha256(orjson.dumps([p.text for p in ps.prompts])).hexdigest()[:12]
    return Workload(ps.name, items, repetitive=ps.repetitive, content_hash=digest)


def build_plan(profile: BenchProfile, model: str, scale: TokenScale | None = None) -> RequestPlan:
    """The bodies of a run of `profile` against `model`; PlanError in words. Input lengths are in tokens at
    `scale` (the server's tokens a word for this workload, token_lengths.py), in words without one."""
    try:
        wl = load_workload(profile.workload) if profile.workload else _from_prompts(profile)
        in_dist, out_dist = parse_length(profile.input_len), parse_length(profile.output_len)
    except (WorkloadError, ValueError) as err:
        raise PlanError(str(err)) from None
    if wl.is_trace and (in_dist is not None or out_dist is not None):
        raise PlanError(f"{profile.workload} is a recorded trace: its lengths are its own — drop input_len/output_len")
    temperature = wl.temperature if wl.temperature is not None and profile.workload else profile.temperature
    common = _common_body(profile, wl, model, temperature)
    rng = random.Random(profile.seed)
    shuffled = profile.workload != "" and profile.seed != 0 and not wl.is_trace  # seed 0 keeps the file's order
    order = list(range(len(wl.items)))
    if shuffled:
        rng.shuffle(order)
    n = max(len(order), MIN_BODIES) if in_dist is not None or out_dist is not None else len(order)
    bodies: list[bytes] = []
    limits: list[int] = []
    for i in range(n):
        item = wl.items[order[i % len(order)]]
        max_tokens = out_dist.draw(rng) if out_dist else (item.output_len if profile.workload and item.output_len else profile.max_tokens)
        item = _sized(item, in_dist, scale, rng)
        body = {**common, "max_tokens": max_tokens}
        if profile.endpoint == "chat":
            body["messages"] = item.as_messages()
        else:
            body["prompt"] = item.as_prompt()
        bodies.append(orjson.dumps(body))
        limits.append(max_tokens)
    asks_lengths = in_dist is not None or any(i.input_len for i in wl.items)
    sample = sample_text([i.as_prompt() for i in wl.items]) if asks_lengths and scale is None else ""
    return RequestPlan(bodies, wl.repetitive, limits, _plan_info(profile, wl, scale), temperature, wl.arrivals, sample)


def _common_body(profile: BenchProfile, wl: Workload, model: str, temperature: float) -> dict[str, object]:
    """What every request of the run sends."""
    common: dict[str, object] = {
        "model": model,
        "temperature": temperature,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        # SGLang then ends each stream with the request's own verify-step count (server_stats.py, source 2)
        "return_spec_tokens_details": True,
    }
    top_p = profile.top_p if profile.top_p is not None else wl.top_p
    if top_p is not None:
        common["top_p"] = top_p
    if profile.ignore_eos:
        common["ignore_eos"] = True
    return common


def _sized(item: WorkItem, in_dist: LengthDist | None, scale: TokenScale | None, rng: random.Random) -> WorkItem:
    """`item` with its prompt cut to the input length asked (the trace's own, or drawn), in tokens at `scale`."""
    per_word = scale.tokens_per_word if scale else None
    if item.input_len and per_word:  # a trace's made-up prompt: its length in tokens
        words = max(1, round(item.input_len / per_word))  # cut from its end: shared blocks stay
        item = WorkItem(prompt=fit_words(item.as_prompt(), words), output_len=item.output_len, kind=item.kind)
    if in_dist is not None:
        want = in_dist.draw(rng)
        words = max(1, round(want / per_word)) if per_word else want
        item = WorkItem(prompt=fit_words(item.as_prompt(), words), kind=item.kind)
    return item


def _plan_info(profile: BenchProfile, wl: Workload, scale: TokenScale | None) -> dict[str, str | int]:
    """The workload facts the trial keeps (name, version, hash, seed; how lengths were counted; a trace's cut)."""
    info: dict[str, str | int] = {"name": wl.name, "version": wl.version, "hash": wl.content_hash, "seed": profile.seed}
    if scale is not None:  # the trial keeps how its input lengths were counted
        info["lengths"] = (f"tokens ({scale.tokens_per_word:.3f} a word, {TOKENIZE_PATH})" if scale.tokens_per_word
                           else scale.note)
    if wl.is_trace:
        info["arrivals"] = "trace"
        if profile.cut_trace and (profile.requests or profile.duration_s):
            info["cut"] = cut_words(profile.requests, profile.duration_s)
    return info


def is_trace(profile: BenchProfile) -> bool:
    """Whether the profile's workload is a recorded trace (one open-loop level at the trace's times); False when
    it cannot be read (the run says why)."""
    if not profile.workload:
        return False
    try:
        return load_workload(profile.workload).is_trace
    except WorkloadError:
        return False
