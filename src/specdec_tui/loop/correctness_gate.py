"""The correctness gate: before a configuration is promoted, a fixed prompt set at temperature 0 is answered by the
candidate unit and by the same unit without speculation; any divergence past the first tokens is reported with
the diff, and the candidate does not pass.

Speculative decoding must not change a greedy answer: a draft model that breaks verification (acceptance that
collapses to garbage, vllm#46834) shows here as text that parts from the reference's. Both answers come from a
fresh start, prompts one at a time in the same order, so the server's own state is the same for both."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import Host
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.recovery import wait_settled

__all__ = ["PROMPTS", "NOT_PROMOTED", "Divergence", "GateResult", "without_speculation", "first_divergence",
           "run_gate", "gate_quietly", "verdict_lines"]

PROMPTS = (
    "What is the capital of France? Answer in one sentence.",
    "Write a Python function that returns the n-th Fibonacci number.",
    "List three prime numbers greater than 100.",
    "Explain in two sentences why the sky is blue.",
    "Translate 'good morning, how are you?' into German.",
    "If a train travels 120 km in 1.5 hours, what is its average speed?",
)
MAX_TOKENS = 64
GRACE_WORDS = 4  # a divergence in the first words is tolerated (numerics may pick another near-tie token)
SPEC_PREFIX = "speculative-"
NOT_PROMOTED = "no configuration promoted: the winner failed the correctness gate"
SHORT = 60  # characters of each text a verdict line shows


@dataclass(frozen=True, slots=True)
class Divergence:
    prompt: str
    at_word: int
    reference: str  # the words around the divergence, from the reference's answer
    candidate: str


@dataclass(slots=True)
class GateResult:
    passed: bool
    divergences: list[Divergence] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""


def without_speculation(text: str) -> str:
    """The unit with every --speculative-* flag removed: the reference that must answer the same."""
    unit = UnitFile.parse(text)
    names = [name for name in unit.flags() if name.startswith(SPEC_PREFIX)]
    return unit.set_flags({}, unset=names).text


def first_divergence(prompt: str, reference: str, candidate: str) -> Divergence | None:
    """Where the candidate's words part from the reference's, past the first `GRACE_WORDS`; None if they agree."""
    ref, cand = reference.split(), candidate.split()
    for i, (a, b) in enumerate(zip(ref, cand, strict=False)):
        if a != b:
            if i < GRACE_WORDS:
                return None
            return Divergence(prompt, i, " ".join(ref[max(0, i - 3): i + 5]), " ".join(cand[max(0, i - 3): i + 5]))
    return None


async def _answers(base_url: str, api_key: str | None) -> list[str]:
    import httpx

    from specdec_tui.loop.health_probe import auth_headers

    out: list[str] = []
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0), headers=auth_headers(api_key)) as client:
        for prompt in PROMPTS:
            resp = await client.post(base_url + "/v1/completions", json={
                "prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0})
            resp.raise_for_status()
            out.append(answer_text(resp.content))
    return out


def answer_text(body: bytes) -> str:
    """The text of a /v1/completions answer; ValueError in words for any other body (not JSON, nested past the
    parser's depth — the standard library's `json` raised RecursionError past every handler —, no choices[0].text)."""
    from specdec_tui.loop.health_probe import json_of

    try:
        doc = json_of(body)
    except ValueError as err:
        raise ValueError(f"the answer to /v1/completions is not JSON ({err}): is it an SGLang server?") from None
    choices = doc.get("choices") if isinstance(doc, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    text = first.get("text") if isinstance(first, dict) else None
    if not isinstance(text, str):
        raise ValueError("the answer to /v1/completions has no choices[0].text: is it an SGLang server?")
    return text


async def _answers_of(host: Host, text: str, timeout_s: float, api_key: str | None) -> list[str] | None:
    await host.push(text)
    await host.restart()
    if not await wait_settled(host, timeout_s):
        return None
    return await _answers(host.info.base_url, api_key)


async def run_gate(host: Host, candidate: str, *, reference: str | None = None, timeout_s: float = 120.0,
                   api_key: str | None = None) -> GateResult:
    """Answers of `reference` (default: the candidate without speculation), then of the candidate, compared.
    The host is left running the candidate."""
    started = time.monotonic()
    ref_answers = await _answers_of(host, reference or without_speculation(candidate), timeout_s, api_key)
    cand_answers = await _answers_of(host, candidate, timeout_s, api_key)
    took = time.monotonic() - started
    if ref_answers is None or cand_answers is None:
        which = "reference" if ref_answers is None else "candidate"
        return GateResult(False, seconds=took, note=f"the {which} unit did not come up")
    found = [d for p, r, c in zip(PROMPTS, ref_answers, cand_answers, strict=True)
             if (d := first_divergence(p, r, c)) is not None]
    return GateResult(not found, found, took)


async def gate_quietly(host: Host, candidate: str, *, timeout_s: float = 120.0,
                       api_key: str | None = None) -> GateResult:
    """run_gate that turns a host or HTTP failure into a failed result in words (a sweep or tune is ending:
    its winner is not promoted, but its measurements stand)."""
    import httpx

    started = time.monotonic()
    try:
        return await run_gate(host, candidate, timeout_s=timeout_s, api_key=api_key)
    except (HostError, httpx.HTTPError, KeyError, IndexError, ValueError) as err:
        return GateResult(False, seconds=time.monotonic() - started,
                          note=f"the gate could not compare answers: {type(err).__name__}: {err}")


def _short(text: str) -> str:
    text = terminal_safe(" ".join(text.split()))
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def verdict_lines(result: GateResult) -> list[str]:
    """The gate's verdict in words: passed, or NOT_PROMOTED and the first divergence (both texts shortened)."""
    if result.passed:
        return [f"correctness gate passed: {len(PROMPTS)} prompts at temperature 0 answered as without "
                f"speculation ({result.seconds:.0f} s)"]
    lines = [NOT_PROMOTED]
    if result.note:
        lines.append(f"  {terminal_safe(result.note)}")
    if result.divergences:
        d = result.divergences[0]
        lines.append(f"  {len(result.divergences)} of {len(PROMPTS)} prompts diverged; the first: "
                     f"\"{_short(d.prompt)}\" at word {d.at_word}")
        lines.append(f"    without speculation: \"{_short(d.reference)}\"")
        lines.append(f"    the winner:          \"{_short(d.candidate)}\"")
    return lines
