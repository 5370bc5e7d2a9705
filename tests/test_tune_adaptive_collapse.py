"""A tiers schedule that collapses throughput when load crosses a tier boundary is caught by the check launch and
not shipped (vllm#49548's failure, on SGLang's own mechanism): the real simulator on a demo host, a tune over
steps 0/3 at c=1 and c=16 whose schedule is speculation at c=1 and none at c=16, so its tiers switch at batch 16.

With SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND=1 in the unit (upstream's experimental flag: the zero-step tier skips
the draft extend, "an upshift to steps>0 would draft from this stale state"), the requests that decoded in the
steps-0 tier draft from holes once the batch drains below 16: c=16 falls well under the static schedule's figure
there, and the tiers stay unshipped. The same tune without the flag holds and ships them beside the unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session
from specdec_tui.core.tune_objective import Slo
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.tune import TuneOutcome, TunePlan
from specdec_tui.loop.tune_host import run_host_tune

pytestmark = pytest.mark.timeout(400)

# one wave of 16 chat requests of natural lengths (up to 900 tokens): the batch drains across the tier at 16
PROFILE = BenchProfile(name="t", concurrency=(1, 16), requests=16, max_tokens=1000, temperature=0.7,
                       ignore_eos=False, prompts="realistic", warmup=0)
SKIP = "Environment=SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND=1"


async def tune(root: Path, skip_extend: bool) -> tuple[TuneOutcome, Path]:
    ws = ensure_demo_workspace(root, time_scale=25)
    if skip_extend:
        text = ws.unit_path.read_text()
        ws.unit_path.write_text(text.replace("[Service]\n", f"[Service]\n{SKIP}\n", 1))
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="a")
    runner = TrialLoop(host=host, session=Session(host="a", unit=ws.unit_name, profile=PROFILE), profile=PROFILE,
                       base_url=ws.base_url, session_path=root / "s.toml", healthy_timeout_s=300)
    plan = TunePlan({"speculative-num-steps": ("0", "3")}, PROFILE.concurrency, Slo(ttft_p99_ms=60000), budget=3)
    await host.connect()
    try:
        outcome = await run_host_tune([runner], plan, adaptive_file=root / "s.adaptive.json")
    finally:
        await host.close()
    return outcome, ws.unit_path.parent


def steps_at(outcome: TuneOutcome) -> dict[int, str | None]:
    return {c.concurrency: dict(c.point).get("speculative-num-steps") if c.point else None for c in outcome.schedule}


async def test_a_schedule_that_collapses_across_its_tier_boundary_is_caught_and_not_shipped(tmp_path: Path) -> None:
    outcome, unit_dir = await tune(tmp_path / "skip", skip_extend=True)
    assert steps_at(outcome) == {1: "3", 16: "0"}
    assert outcome.adaptive is not None and outcome.adaptive.to_json() == {
        "1": {"candidate_steps": [0, 3]}, "16": {"candidate_steps": [0]}}
    check = outcome.adaptive_check
    assert check is not None and not check.result.failed, outcome.adaptive_note
    assert [c for c, _, _ in check.collapsed] == [16], check.words()
    assert "adaptive collapses under load (c=16:" in check.words() and "not shipped" in check.words()
    assert outcome.adaptive_shipped == {}
    assert not (unit_dir / "sglang-demo.adaptive.json").exists()  # nothing shipped beside the unit
    assert (unit_dir / "sglang-demo.adaptive-check.json").exists()  # what collapsed stays there to look at


async def test_the_same_schedule_without_the_skip_holds_and_is_shipped(tmp_path: Path) -> None:
    outcome, unit_dir = await tune(tmp_path / "warm", skip_extend=False)
    assert steps_at(outcome) == {1: "3", 16: "0"}
    check = outcome.adaptive_check
    assert check is not None and check.ok, check and check.words()
    shipped = unit_dir / "sglang-demo.adaptive.json"
    assert outcome.adaptive_shipped == {"a": str(shipped)}
    assert json.loads(shipped.read_text()) == outcome.adaptive.to_json()  # type: ignore[union-attr]
