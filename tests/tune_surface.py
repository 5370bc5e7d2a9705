"""A deterministic surface for the tuner's tests: configuration → every level's figures, or a failed start.

Shaped like the real trade-off: deeper drafts pay at low load and cost at high load (the verify batch grows),
a wide tree costs memory; steps × topk above a budget does not fit the pool (a memory failure) and large
drafts with big graphs do not capture. Pure, so a test can compute the grid's answer exactly."""

from __future__ import annotations

import math
from collections.abc import Mapping

from specdec_tui.core.tune_objective import FailureKind, LaunchResult, LevelFigures, Point
from specdec_tui.loop.tune_space import Candidate

LEVELS = (1, 4, 16, 32)
GRID_SPACE = {"speculative-num-steps": ("0", "1", "3", "5", "7"),
              "speculative-eagle-topk": ("0", "1", "2", "4", "8"),
              "speculative-num-draft-tokens": ("0", "2", "4", "8", "16", "32")}


def _ints(point: Point) -> tuple[int, int, int]:
    v: Mapping[str, str] = dict(point)
    steps = int(v.get("speculative-num-steps", "0"))
    default_topk, default_draft = ("1", str(steps + 1)) if steps else ("0", "0")  # a chain when not in the space
    return (steps, int(v.get("speculative-eagle-topk", default_topk)),
            int(v.get("speculative-num-draft-tokens", default_draft)))


def fails(point: Point) -> FailureKind | None:
    steps, topk, draft = _ints(point)
    if steps * topk >= 28:
        return FailureKind.MEMORY
    if draft >= 32:
        return FailureKind.CAPTURE
    return None


def max_running(point: Point) -> int:
    steps, topk, draft = _ints(point)
    return max(4, 48 - 2 * draft - steps)


def figures(point: Point, concurrency: int) -> LevelFigures:
    steps, topk, draft = _ints(point)
    accept = 1.0 if steps == 0 else 1.0 + (1.0 - 0.8 ** min(steps, draft)) / 0.2 * (1 + 0.05 * math.log2(topk))
    verify_tokens = concurrency * max(draft, 1)
    step_ms = 12.0 + 0.04 * verify_tokens + 0.4 * steps
    running = min(concurrency, max_running(point))
    tok_s = running * accept / (step_ms / 1000.0)
    itl = step_ms / accept * 1.6
    queue = max(0, concurrency - running) / running
    ttft = 120.0 + 8.0 * verify_tokens ** 0.5 + 900.0 * queue
    return LevelFigures(concurrency, round(tok_s, 3), ttft, itl, accept if steps else None)


def launch(point: Point, levels: tuple[int, ...] = LEVELS) -> LaunchResult:
    kind = fails(point)
    if kind is not None:
        return LaunchResult(point, failure=f"did not start ({kind.value})", failure_kind=kind)
    return LaunchResult(point, tuple(figures(point, c) for c in levels), max_running(point))


class FakeLauncher:
    """A host that launches on the surface; `launched` lists what it started, in order."""

    def __init__(self, name: str = "fake", levels: tuple[int, ...] = LEVELS) -> None:
        self._name, self.levels = name, levels
        self.launched: list[Point] = []

    @property
    def name(self) -> str:
        return self._name

    async def launch(self, candidate: Candidate, why: str) -> LaunchResult:
        self.launched.append(candidate.point)
        return launch(candidate.point, self.levels)
