"""Adaptive speculation (`--speculative-adaptive`, `--speculative-adaptive-config FILE`): steps chosen per round
by the running batch, as SGLang 0.5.23 does it.

Facts read (not copied) from srt/speculative/adaptive_spec_params.py: the config is JSON whose integer-string
keys are batch-size tiers, each with `candidate_steps` (non-negative ints; 0 = no drafting) and optional
`ema_alpha` (0.2), `update_interval` (5), `warmup_batches` (10), `up_hysteresis` (0.0), `down_hysteresis`
(-0.25); top-level keys are defaults for every tier. A batch is padded up to the next captured CUDA-graph batch
size and routed to the largest tier key <= that (else the smallest). Each tier keeps its own steps, starting at
the launch steps when they are its candidate (else its middle candidate), and an EMA of accepted drafts per
request started at steps - 1; after the warm-up, every `update_interval` rounds it drops a candidate while
ema <= prev - 0.5 + down (0.5 + down when prev is 0), else rises while ema > cur - 0.5 + up; at 0 it probes
the next candidate. Switching states logs "Switch adaptive runtime state: ..." (eagle_worker_v2.py) and a
tier's decision "Adaptive spec params updated: steps a -> b (ema_accept_len=x)".
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field
from pathlib import Path

# upstream DEFAULT_ADAPTIVE_CONFIG (0.5.23): tiers by batch size and their candidate steps
DEFAULT_TIERS: dict[int, tuple[int, ...]] = {1: (1, 3, 5, 7), 8: (0, 1, 3), 32: (0, 1), 64: (0,)}
DEFAULT_DOWN = {1: -0.25, 8: 0.0, 32: 0.0, 64: 0.0}


class AdaptiveConfigError(ValueError):
    """A config SGLang refuses, in its words."""


@dataclass(slots=True)
class Tier:
    candidates: list[int]
    steps: int
    ema: float
    ema_alpha: float = 0.2
    update_interval: int = 5
    warmup: int = 10
    up: float = 0.0
    down: float = -0.25
    rounds: int = 0

    def observe(self, correct_drafts: list[int]) -> int | None:
        """Feeds one verify round; returns new steps when the tier decides to switch."""
        if not correct_drafts:
            return None
        if self.steps > 0:
            self.ema = (1 - self.ema_alpha) * self.ema + self.ema_alpha * sum(correct_drafts) / len(correct_drafts)
        self.rounds += 1
        if self.rounds <= self.warmup or (self.rounds - self.warmup) % self.update_interval:
            return None
        return self._decide()

    def _decide(self) -> int | None:
        i = self.candidates.index(self.steps)
        old = i
        if self.steps == 0:
            i = min(i + 1, len(self.candidates) - 1)
            if self.candidates[i] > 0 and self.ema < 0:
                self.ema = float(self.candidates[i] - 1)
        else:
            while i > 0:
                prev = self.candidates[i - 1]
                threshold = (0.5 if prev == 0 else prev - 0.5) + self.down
                if self.ema > threshold:
                    break
                i -= 1
            if i == old:
                while i < len(self.candidates) - 1 and self.ema > self.candidates[i] - 0.5 + self.up:
                    i += 1
        target = self.candidates[i]
        if target == self.steps:
            return None
        self.steps = target
        return target


@dataclass(slots=True)
class AdaptivePolicy:
    """Routes a batch to its tier; the tier's current steps are the round's steps."""

    tiers: dict[int, Tier]
    graph_bs: list[int] = field(default_factory=list)

    @property
    def candidate_steps(self) -> list[int]:
        return sorted({s for t in self.tiers.values() for s in t.candidates})

    def tier_for(self, batch: int) -> Tier:
        padded = batch
        if self.graph_bs:
            i = bisect.bisect_left(self.graph_bs, batch)
            padded = self.graph_bs[i] if i < len(self.graph_bs) else batch
        keys = sorted(self.tiers)
        j = bisect.bisect_right(keys, padded) - 1
        return self.tiers[keys[max(0, j)]]

    def steps_for(self, batch: int) -> int:
        return self.tier_for(batch).steps


def load_tiers(path: str | None) -> dict[int, dict[str, object]]:
    """The tiers of a config file (or upstream's defaults), validated with upstream's words."""
    if path is None:
        return {k: {"candidate_steps": list(v), "down_hysteresis": DEFAULT_DOWN[k]} for k, v in DEFAULT_TIERS.items()}
    try:
        raw = json.loads(Path(path).read_text())
    except FileNotFoundError as err:
        raise AdaptiveConfigError(f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'") from err
    except json.JSONDecodeError as err:
        raise AdaptiveConfigError(f"json.decoder.JSONDecodeError: {err}") from err
    if not isinstance(raw, dict):
        raise AdaptiveConfigError("AttributeError: 'list' object has no attribute 'items'")
    common = {k: v for k, v in raw.items() if not k.isdigit()}
    tiers: dict[int, dict[str, object]] = {}
    for key, entry in raw.items():
        if not key.isdigit():
            continue
        steps = entry.get("candidate_steps") if isinstance(entry, dict) else None
        if not isinstance(steps, list) or not steps or not all(isinstance(s, int) and s >= 0 for s in steps):
            raise AdaptiveConfigError(
                f"ValueError: BS {key}: candidate_steps must be a list of non-negative ints, got {steps!r}")
        tiers[int(key)] = {**common, **entry}
    if not tiers:
        raise AdaptiveConfigError(
            "ValueError: speculative_adaptive_config must contain at least one integer-string BS key, e.g. "
            f'{{"1": {{"candidate_steps": [1,3,7]}}}}. Got keys: {list(raw.keys())}')
    return tiers


def candidate_steps(path: str | None) -> list[int]:
    return sorted({int(s) for t in load_tiers(path).values() for s in t["candidate_steps"]})  # type: ignore[attr-defined]


def _num(entry: dict[str, object], key: str, default: float) -> float:
    value = entry.get(key, default)
    return float(value) if isinstance(value, (int, float)) else default


def build_policy(path: str | None, initial_steps: int) -> AdaptivePolicy:
    tiers: dict[int, Tier] = {}
    for bs, entry in sorted(load_tiers(path).items()):
        cands = sorted({int(s) for s in entry["candidate_steps"]})  # type: ignore[attr-defined]
        steps = initial_steps if initial_steps in cands else cands[len(cands) // 2]
        tiers[bs] = Tier(candidates=cands, steps=steps, ema=float(steps - 1),
                         ema_alpha=_num(entry, "ema_alpha", 0.2), update_interval=int(_num(entry, "update_interval", 5)),
                         warmup=int(_num(entry, "warmup_batches", 10)), up=_num(entry, "up_hysteresis", 0.0),
                         down=_num(entry, "down_hysteresis", -0.25))
    return AdaptivePolicy(tiers)
