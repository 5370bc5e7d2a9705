"""The measured schedule as SGLang's adaptive speculation, checked by one more launch: the unit with
`--speculative-adaptive --speculative-adaptive-config FILE` measured across every level (so across the tiers'
boundaries); a level that falls well below what the schedule's own configuration measured there is a collapse
(vllm#49548: a schedule that drops throughput when load crosses a threshold) and is reported, not shipped.

Only where the release knows `--speculative-adaptive`. The tiers go beside the unit on the host that runs the check
(`Host.upload`: a local host's unit directory, or over SSH), as `<unit>.adaptive-check.json`; only a check that
holds ships them, as `<unit>.adaptive.json` beside every tuned host's unit (`loop.tune_host`). A collapse ships
nothing: the check file stays for a look at what collapsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.flag_table import spec_for
from specdec_tui.core.tune_objective import AdaptiveSchedule, LaunchResult, LevelChoice, point_of
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.tune_space import DRAFT, STEPS, TOPK, Candidate

ADAPTIVE, ADAPTIVE_CONFIG = "speculative-adaptive", "speculative-adaptive-config"
COLLAPSE = 0.85  # a level below this share of the schedule's own figure there has collapsed


def release_supports_adaptive() -> bool:
    return spec_for(ADAPTIVE) is not None and spec_for(ADAPTIVE_CONFIG) is not None


def adaptive_unit(base_text: str, tiers: AdaptiveSchedule, config_path: str) -> str | None:
    """The base unit running adaptive speculation with `config_path`: a chain (topk 1, the only tree adaptive
    supports), starting at the first tier's best steps. None when the schedule's first tier is no speculation."""
    first = max(tiers.tiers[0].candidate_steps)
    if first == 0 or UnitFile.parse(base_text).get_flag("speculative-algorithm") is None:
        return None
    unit = UnitFile.parse(base_text).set_flags({STEPS: str(first), TOPK: "1", DRAFT: str(first + 1),
                                                ADAPTIVE: None, ADAPTIVE_CONFIG: config_path})
    return unit.text


@dataclass(frozen=True, slots=True)
class AdaptiveCheck:
    result: LaunchResult
    collapsed: tuple[tuple[int, float, float], ...]  # (level, measured, the schedule's figure there)

    @property
    def ok(self) -> bool:
        return not self.result.failed and not self.collapsed

    def words(self) -> str:
        if self.result.failed:
            return f"the adaptive unit did not start: {self.result.failure}"
        if self.collapsed:
            worst = ", ".join(f"c={c}: {got:,.0f} tok/s where the schedule measured {want:,.0f}"
                              for c, got, want in self.collapsed)
            return f"adaptive collapses under load ({worst}); not shipped: keep the static choice"
        return "adaptive holds the schedule's throughput at every level"


def judge(result: LaunchResult, choices: Sequence[LevelChoice]) -> AdaptiveCheck:
    collapsed = []
    for choice in choices:
        level = result.level(choice.concurrency)
        if choice.point is None or level is None:
            continue
        if level.tok_s < COLLAPSE * choice.tok_s:
            collapsed.append((choice.concurrency, level.tok_s, choice.tok_s))
    return AdaptiveCheck(result, tuple(collapsed))


def adaptive_candidate(unit_text: str) -> Candidate:
    """The adaptive unit as a launch of its own (its point names the adaptive flag, so it is never taken for a
    static configuration of the space)."""
    return Candidate(point_of({ADAPTIVE: "on"}), unit_text, ())


def tiers_json(tiers: AdaptiveSchedule) -> bytes:
    """The tiers as `--speculative-adaptive-config` JSON (SGLang reads integer-string batch-size keys)."""
    return orjson.dumps(tiers.to_json(), option=orjson.OPT_INDENT_2) + b"\n"


def check_file(unit: str) -> str:
    """The name the tiers are checked under, beside `unit`."""
    return f"{unit.rsplit('.', 1)[0]}.adaptive-check.json"


def shipped_file(unit: str) -> str:
    """The name the tiers are shipped under, beside `unit`, once their check held."""
    return f"{unit.rsplit('.', 1)[0]}.adaptive.json"


def write_tiers(tiers: AdaptiveSchedule, path: Path) -> Path:
    write_atomic(path, tiers_json(tiers))
    return path
