"""The correctness gate from the panel's Sweep and Tune screens (Pilot, the real demo host and simulator), as the
CLI runs it: with the simulator's corrupt-drafts fault in the unit the measured winner answers unlike the same unit
without speculation, so the screen says so (the first divergence), offers nothing to apply and the host keeps the
unit it ran before; a healthy sweep's winner passes and is offered. A tune's schedule and tiers file never name a
configuration the gate rejected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.loop.correctness_gate import NOT_PROMOTED
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.loop.tune_adaptive import release_supports_adaptive
from specdec_tui.ui.app import SpecdecApp, make_app
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen
from specdec_tui.ui.screens.tune_screen import TuneScreen

from .ui_helpers import applied_as, demo_ready, record_notifications, start_tune, wait_for

pytestmark = pytest.mark.timeout(300)
PROFILE = BenchProfile(name="demo", concurrency=(1,), requests=4, warmup=0, max_tokens=32)
STEPS = "speculative-num-steps"


def demo(root: Path, *, corrupt: bool) -> tuple[SpecdecApp, str]:
    """A demo panel (200× fast) whose unit carries the corrupt-drafts fault when asked; and that unit."""
    ws = ensure_demo_workspace(root / "demo", time_scale=200)
    text = ws.unit_path.read_text(encoding="utf-8")
    if corrupt:
        text = UnitFile.parse(text).set_flags({"sim-fault": "corrupt-drafts"}).text
        ws.unit_path.write_text(text, encoding="utf-8")
    base = demo_config(ws)
    config = Config(hosts=base.hosts, profiles={"default": PROFILE}, default_host=base.default_host)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    app = make_app(config, host, Session(host="demo", unit=ws.unit_name, profile=PROFILE),
                   session_path=root / "session.toml")
    return app, text


def result_of(screen: SweepScreen | TuneScreen, task: str) -> str:
    return str(screen.query_one(f"#{task}-result", Static).render())


async def sweep(pilot, app: SpecdecApp) -> SweepScreen:
    assert app.trial_loop is not None
    screen = SweepScreen(app.trial_loop, plan_from_form(SweepForm(STEPS, "1..2", "1", "c1"), PROFILE))
    app.push_screen(screen)
    await wait_for(pilot, lambda: screen.outcome is not None, "the sweep to end", steps=4000)
    await pilot.pause(0.2)
    return screen


async def test_a_sweep_whose_winner_corrupts_answers_offers_nothing_to_apply(tmp_path: Path) -> None:
    app, before = demo(tmp_path, corrupt=True)
    notes = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, notes)
        screen = await sweep(pilot, app)
        assert screen.outcome is not None and screen.outcome.winner is not None and screen.outcome.promoted is None
        result = result_of(screen, "sweep")
        assert NOT_PROMOTED in result and 'prompts diverged; the first: "What is the capital of France?' in result
        assert not isinstance(app.screen, ConfirmScreen)  # no "Apply the winner?" question
        assert app.host is not None and await app.host.read_unit() == before


async def test_a_healthy_sweeps_winner_passes_the_gate_and_is_offered(tmp_path: Path) -> None:
    app, _ = demo(tmp_path, corrupt=False)
    notes = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, notes)
        screen = await sweep(pilot, app)
        assert screen.outcome is not None and screen.outcome.gate is not None and screen.outcome.gate.passed
        assert "correctness gate passed: 6 prompts at temperature 0" in result_of(screen, "sweep")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the apply question")
        question = app.screen.question  # type: ignore[attr-defined]
        asked = (f"Apply the winner --{STEPS} {screen.outcome.winner}?" if applied_as(screen) == "winner"
                 else f"Apply --{STEPS} {screen.outcome.winner}? It shows no clear difference")  # a pick (issue 33)
        assert asked in question


async def test_a_tune_whose_choices_corrupt_answers_pushes_nothing_and_names_none_in_its_schedule(
        tmp_path: Path) -> None:
    app, before = demo(tmp_path, corrupt=True)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        screen = await start_tune(pilot, app, f"{STEPS}=1,2", "ttft_p99=30s", "2")
        await wait_for(pilot, lambda: screen.outcome is not None, "the tune's end", steps=4000)
        outcome = screen.outcome
        assert outcome is not None and outcome.best is not None and outcome.promoted is None
        assert outcome.gate is not None and not outcome.gate.passed
        result = result_of(screen, "tune")
        assert NOT_PROMOTED in result and "Nothing to push: the choice failed the correctness gate" in result
        # every configuration the schedule named was gated and rejected: it names none, and no tiers are written
        assert [c.point for c in outcome.schedule] == [None] * len(outcome.schedule)
        assert outcome.adaptive is None and outcome.adaptive_file is None
        tiers = (tmp_path / "session.toml").with_suffix(".adaptive.json")
        assert release_supports_adaptive() and not tiers.exists()
        await pilot.press("a")
        await pilot.pause(0.2)
        assert app.screen is screen and "Not pushed: the choice failed the correctness gate" in str(
            screen.query_one("#tune-status", Static).render())
        assert app.host is not None and await app.host.read_unit() == before


async def test_a_healthy_tunes_schedule_and_tiers_name_only_gated_configurations(tmp_path: Path) -> None:
    app, _ = demo(tmp_path, corrupt=False)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        screen = await start_tune(pilot, app, f"{STEPS}=1,2", "ttft_p99=30s", "2")
        await wait_for(pilot, lambda: screen.outcome is not None, "the tune's end", steps=4000)
        outcome = screen.outcome
        assert outcome is not None and outcome.promoted == outcome.best and outcome.gate is not None
        assert "correctness gate passed" in result_of(screen, "tune")
        named = {dict(c.point)[STEPS] for c in outcome.schedule if c.point is not None}
        assert named and outcome.adaptive_file is not None
        tiers = json.loads(outcome.adaptive_file.read_text())
        assert {str(s) for tier in tiers.values() for s in tier["candidate_steps"]} <= named
