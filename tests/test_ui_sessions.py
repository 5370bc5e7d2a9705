"""The session side of the panel: saved sessions list, compare two trials, a sweep and a replay with progress."""

from __future__ import annotations

import argparse
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.results import Dist, LevelResult, ServerFacts
from specdec_tui.core.session import Session, Trial, load_session, save_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.sessions import list_sessions
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep_form import FormError, SweepForm, plan_from_form
from specdec_tui.ui.screens.compare_screen import CompareScreen
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sessions_screen import SessionsScreen
from specdec_tui.ui.screens.sweep_form_screen import SweepFormScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen

from .ui_helpers import (
    OFFLINE_UNIT,
    applied_as,
    demo_app,
    demo_idle,
    demo_unit_file,
    offline_app,
    record_notifications,
    started,
    wait_for,
)

STEPS = "speculative-num-steps"
WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def level(c: int, tok_s: float, req: float, ttft: float) -> LevelResult:
    return LevelResult(concurrency=c, requests=8, output_tokens=800, duration_s=1.0, output_tok_s=tok_s,
                       per_request_tok_s=Dist(p50=req), ttft_ms=Dist(p50=ttft))


def trial(i: int, steps: int, c1: float, c4: float, mrr: int, ttft: float = 50.0) -> Trial:
    unit = UnitFile.parse(OFFLINE_UNIT).set_flags({STEPS: str(steps), "speculative-num-draft-tokens": str(steps + 1)})
    return Trial(id=i, unit_text=unit.text, flags=unit.flags(), started_at=WHEN, status="ok", label=f"steps={steps}",
                 facts=ServerFacts(max_running_requests=mrr), levels=[level(1, c1, c1, ttft), level(4, c4, c4 / 4, ttft * 2)])


def seed_session(host: str = "gpu-box", created: datetime = WHEN) -> Session:
    """The seed's steps 1 → 2 → 3: 123 → 186 → 234 tok/s at c=1, capacity 26 → 21 → 17."""
    return Session(host=host, unit="sglang.service", created=created,
                   trials=[trial(1, 1, 123.0, 400.0, 26), trial(2, 2, 186.0, 420.0, 21, ttft=40.0), trial(3, 3, 234.0, 380.0, 17)])


# -- pure parts -----------------------------------------------------------------------------------------


def test_sweep_form_parses_ranges_and_refuses_in_words() -> None:
    profile = BenchProfile(concurrency=(1, 4))
    plan = plan_from_form(SweepForm(STEPS, "1..3,5", "2", "throughput"), profile)
    assert plan.values == ("1", "2", "3", "5") and plan.repeats == 2
    assert plan.objective.kind == "throughput" and plan.objective.concurrency == 4
    with pytest.raises(FormError, match="values: a range is written like 1..6"):
        plan_from_form(SweepForm(STEPS, "1..x", "1", "c1"), profile)
    with pytest.raises(FormError, match="repeats: between 1 and 20"):
        plan_from_form(SweepForm(STEPS, "1,2", "0", "c1"), profile)
    with pytest.raises(FormError, match="not a whole number"):
        plan_from_form(SweepForm(STEPS, "1,two", "1", "c1"), profile)


def test_sessions_are_listed_newest_first_with_best_c1_and_unreadable_files_named(tmp_path: Path) -> None:
    save_session(seed_session("old-box", datetime(2026, 1, 1, tzinfo=UTC)), tmp_path / "a.toml")
    save_session(seed_session("new-box"), tmp_path / "b.toml")
    (tmp_path / "broken.toml").write_text("schema_version = 99\n")
    rows = list_sessions(tmp_path)
    readable = [r for r in rows if not r.problem]
    assert [r.host for r in readable] == ["new-box", "old-box"]
    assert readable[0].trials == 3 and readable[0].best_c1_tok_s == 234.0 and readable[0].best_c1_trial == "steps=3"
    broken = next(r for r in rows if r.problem)
    assert "newer specdec-tui" in broken.problem


# -- screens (pushed onto the offline app until the app binds them) -------------------------------------


async def test_sessions_screen_lists_saved_files_and_opens_one_offline() -> None:
    directory = sessions_dir()
    directory.mkdir(parents=True)
    save_session(seed_session("gpu-box"), directory / "20260301-093000-gpu-box.toml")
    save_session(seed_session("other", datetime(2026, 2, 1, tzinfo=UTC)), directory / "20260201-other.toml")
    app = offline_app()
    chosen: list[Path | None] = []
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        app.push_screen(SessionsScreen(directory), chosen.append)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        assert screen.table.row_count == 2
        assert screen.cell_text(0, "host") == "gpu-box"
        assert screen.cell_text(0, "date") == "2026-03-01 09:30"
        assert screen.cell_text(0, "best_c1").startswith("234.0")
        await pilot.press("enter")
        await pilot.pause()
    assert chosen == [directory / "20260301-093000-gpu-box.toml"]
    assert load_session(chosen[0]).trials[-1].label == "steps=3"


async def test_compare_screen_shows_the_delta_of_two_trials_and_all_trials() -> None:
    session = seed_session()
    app = offline_app(trials=session.trials)
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        app.push_screen(CompareScreen(app.session, 1, 2))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert screen.level_cell(1, "tok_a") == "123.0" and screen.level_cell(1, "tok_b") == "186.0"
        assert screen.level_cell(1, "tok_d") == "+51.2%"  # (186 - 123) / 123
        assert screen.level_cell(1, "ttft_d") == "-20.0%"
        flags = str(screen.query_one("#compare-flags").render())
        assert "--speculative-num-steps: 1 → 2" in flags
        assert "26 → 21" in str(screen.query_one("#compare-capacity").render())
        assert screen.query_one("#compare-all").row_count == 3
        await pilot.press("right_square_bracket")
        assert (screen.a_id, screen.b_id) == (2, 3)
        assert screen.level_cell(1, "tok_d") == "+25.8%"  # 186 → 234


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_compare_screen_snapshot(snap_compare, size: tuple[int, int]) -> None:
    app = offline_app(trials=seed_session().trials)

    async def open_compare(pilot) -> None:
        await started(pilot)
        app.push_screen(CompareScreen(app.session, 2, 3))
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=open_compare)


def test_sessions_screen_snapshot(snap_compare, private_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(private_dirs)  # a relative folder: the picture holds no temp path
    directory = Path("snap-sessions")
    directory.mkdir()
    save_session(seed_session("gpu-box"), directory / "20260301-093000-gpu-box.toml")
    (directory / "broken.toml").write_text("schema_version = 99\n")
    app = offline_app()

    async def open_list(pilot) -> None:
        await started(pilot)
        app.push_screen(SessionsScreen(directory))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 20), run_before=open_list)


async def test_sweep_form_says_what_is_wrong_then_returns_a_plan() -> None:
    app = offline_app()
    plans: list[object] = []
    async with app.run_test(size=(100, 40)) as pilot:
        await started(pilot)
        app.push_screen(SweepFormScreen(BenchProfile(concurrency=(1, 4)), values="1..3", repeats=1), plans.append)
        await pilot.pause()
        form = app.screen
        form.query_one("#sweep-values").value = "3..1"
        await pilot.press("enter")
        await pilot.pause()
        assert "runs backwards" in str(form.query_one("#sweep-form-error").render())
        assert isinstance(app.screen, SweepFormScreen)
        form.query_one("#sweep-values").value = "1..3"
        await pilot.press("enter")
        await pilot.pause()
    assert len(plans) == 1 and plans[0].values == ("1", "2", "3") and plans[0].repeats == 1


async def test_sweep_on_the_demo_host_fills_progress_names_a_winner_and_applies_it(tmp_path: Path) -> None:
    session_file = tmp_path / "session.toml"
    app = demo_app(tmp_path, time_scale=200.0, session_path=session_file)
    unit_file = demo_unit_file(tmp_path)
    outcomes: list[object] = []
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        original = unit_file.read_text()
        plan = plan_from_form(SweepForm(STEPS, "1..3", "1", "c1"), app.config.profile())
        app.push_screen(SweepScreen(app.trial_loop, plan), outcomes.append)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the apply-the-winner question", steps=2400)
        outcome = screen.outcome
        assert outcome is not None and outcome.winner in ("1", "2", "3")
        # Progress filled for every value: status, figures, the capacity falling as steps rise.
        for value in ("1", "2", "3"):
            assert screen.cell_text(value, "status").startswith("ok")
            assert float(screen.cell_text(value, "c1").replace(",", "")) > 0
        mrr = [int(screen.cell_text(v, "mrr")) for v in ("1", "2", "3")]
        assert mrr == sorted(mrr, reverse=True) and mrr[0] > mrr[-1]
        assert outcome.choice is not None  # ★ only when the winner's interval excludes the runner-up's (issue 33)
        mark = "★ winner" if outcome.choice.clear else "pick: no clear difference"
        assert mark in screen.cell_text(outcome.winner, "status")
        # Each value's start said which of how many and, once one was done, the time left at that pace.
        starts = [line for line in screen.log_lines if line.startswith("[")]
        assert starts[0] == "[1/3] steps=1 · estimating the time left…"
        assert starts[1].startswith("[2/3] steps=2 · about ") and starts[1].endswith(" left")
        result = str(screen.query_one("#sweep-result").render())
        assert outcome.choice is not None
        said = f"{outcome.winner} wins" if outcome.choice.clear else f"{outcome.winner} is the pick"  # "wins": clear
        assert outcome.choice.headline(STEPS) in result and said in result
        if outcome.choice.runner_up is not None:
            assert outcome.choice.confidence is not None
            assert f"confidence: {outcome.choice.confidence.text}" in result  # against the runner-up (issue 33)
            # 200× fast, a request may come in one chunk (no per-request rate): then the line says there is no interval
            assert any(w in result for w in ("95 % intervals separate", "no clear difference", "no interval")), result
        else:  # the others fell below the objective's floor at the highest level (CI saw it): each says so
            reasons = " ".join(outcome.choice.reasons)
            assert all(f"{v}: rejected" in reasons for v in ("1", "2", "3") if v != outcome.winner), reasons
        assert "ran before the sweep" in result
        assert unit_file.read_text() == original  # not applied yet
        await pilot.press("y")
        await wait_for(pilot, lambda: f"now runs the {applied_as(screen)}" in str(screen.query_one("#sweep-result").render()),
                       "the winner applied", steps=2400)
        assert UnitFile.parse(unit_file.read_text()).flags()[STEPS] == outcome.winner
        await pilot.press("escape")
        await pilot.pause()
    assert outcomes and outcomes[0] is outcome
    saved = load_session(session_file)
    assert [t.sweep.get("value") for t in saved.trials] == ["1", "2", "3"]


async def test_replay_on_the_demo_host_shows_drift_per_trial_and_restores_the_unit(tmp_path: Path) -> None:
    from specdec_tui.loop.sweep_plan import edit_for_value
    from specdec_tui.ui.screens.replay_screen import ReplayScreen

    app = demo_app(tmp_path, time_scale=25.0)  # 200× fast, requests come in one chunk: no per-request figures
    unit_file = demo_unit_file(tmp_path)
    async with app.run_test(size=(140, 30)) as pilot:
        await demo_idle(pilot)
        original = unit_file.read_text()
        runner = app.trial_loop
        # enough requests a level, each long enough to stream in several chunks, for intervals (issue 33)
        runner.use_profile(replace(runner.profile, requests=12, max_tokens=64))
        first = await runner.run_trial(edit_for_value(original, STEPS, "2"))
        assert first.status == "ok" and first.levels
        await runner.run_trial(original)  # back on the original unit before the replay
        app.push_screen(ReplayScreen(runner, app.session, [first.id]))
        await wait_for(pilot, lambda: app.screen.outcome is not None, "the replay", steps=2400)
        screen = app.screen
        assert screen.cell_text(first.id, "status") == "ok"
        assert float(screen.cell_text(first.id, "new").replace(",", "")) > 0
        assert screen.cell_text(first.id, "drift").endswith("%")
        result = str(screen.query_one("#replay-result").render())
        assert "ran before the replay" in result
        # reproduced or not by then-against-now intervals, not by ±10 %, and the cell says so
        verdict = screen.cell_text(first.id, "verdict")
        assert verdict.endswith("(intervals)"), [len(lv.tok_s_samples) for t in app.session.trials for lv in t.levels]
        assert "1 measured trial(s) reproduced by 95 % intervals (then against now)." in result
        replayed = app.session.trials[-1]  # then against now, with intervals (issue 33)
        assert f"trial {first.id} → {replayed.id}: c=" in " ".join(result.split())
        assert unit_file.read_text() == original
        assert app.session.trials[-1].replay_of == first.id


async def test_escape_during_a_sweep_cancels_it_and_the_unit_that_ran_before_is_back(tmp_path: Path) -> None:
    # Long enough (5 values × 3 runs at a slower time scale) that the sweep is still running when the keys
    # arrive: a finished sweep would already be asking "apply the winner?".
    app = demo_app(tmp_path, time_scale=50.0)
    unit_file = demo_unit_file(tmp_path)
    closed: list[object] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_idle(pilot)
        original = unit_file.read_text()
        plan = plan_from_form(SweepForm(STEPS, "2..6", "3", "c1"), app.config.profile())
        app.push_screen(SweepScreen(app.trial_loop, plan), closed.append)
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: unit_file.read_text() != original, "the first value pushed", steps=2400)
        await pilot.press("ctrl+q")  # quitting under a sweep is refused: it could leave a tried value behind
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, SweepScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, SweepScreen)  # a running sweep is cancelled first, not left behind
        await wait_for(pilot, lambda: not screen.running, "the cancel", steps=2400)
        assert "cancelled" in str(screen.query_one("#sweep-result").render())
        assert unit_file.read_text() == original
        await pilot.press("escape")
        await pilot.pause()
    assert closed == [None]


# -- wired into the panel: keys o / v / S, and the CLI's offline start ------------------------------------


async def test_o_lists_saved_sessions_and_enter_opens_one_offline_with_table_and_unit() -> None:
    directory = sessions_dir()
    directory.mkdir(parents=True)
    save_session(seed_session("gpu-box"), directory / "20260301-093000-gpu-box.toml")
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, SessionsScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert app.host is None and [t.label for t in app.session.trials] == ["steps=1", "steps=2", "steps=3"]
        assert "gpu-box" in app.sub_title
        table = app.main.query_one("#bench-table")
        assert table.cell_text(1, "tok_s") == "234.0" and table.cell_text(1, "delta") == "+25.8%"
        assert "--speculative-num-steps 3" in app.config_pane.running_text
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen) and (app.screen.a_id, app.screen.b_id) == (2, 3)


async def test_sweep_refused_offline_in_words() -> None:
    app = offline_app(trials=seed_session().trials)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("S")
        await pilot.pause()
        assert not isinstance(app.screen, SweepFormScreen)
        assert any("offline session" in n and "sweep needs a host" in n for n in seen)


async def test_S_runs_a_sweep_from_the_panel_and_the_trials_list_follows(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=200.0)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        # The demo starts its inactive service by itself, after the unit has loaded: idle before that start is
        # not idle for good (S then says "Wait for the start to finish before a sweep."). Wait for its end.
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                       "the demo's own start to end", steps=1200)
        await pilot.press("escape")  # out of the text field: S is a key, not a letter
        assert not app.config_pane.dirty
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, SweepFormScreen)
        app.screen.query_one("#sweep-values").value = "1..3"
        app.screen.query_one("#sweep-repeats").value = "1"
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SweepScreen) and app.busy == "sweep"
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the apply-the-winner question", steps=2400)
        assert screen.outcome.winner in ("1", "2", "3")
        await pilot.press("n")
        await pilot.press("escape")
        await pilot.pause()
        assert app.busy is Busy.IDLE and app.screen is app.main
        assert app.main.query_one("#trials-list").trial_ids == [t.id for t in app.session.trials]
        assert len(app.session.trials) == 3


def test_offline_session_file_builds_an_app_without_a_host(tmp_path: Path) -> None:
    from specdec_tui.cli import tui_cmd

    path = tmp_path / "saved.toml"
    save_session(seed_session(), path)
    args = argparse.Namespace(demo=False, headless=False, config=None, host=None, session=str(path), profile=None)
    app = tui_cmd.offline_app(args, tui_cmd.resolve_config(None))
    assert app is not None and app.host is None and app.session_path == path
    # the newest trial before the first frame, the others loaded after it (issue 36: tests/test_huge_session.py)
    assert [t.label for t in app.session.trials] == ["steps=3"] and app.trials_to_load == 3
    folder = argparse.Namespace(**{**vars(args), "session": str(tmp_path)})
    assert tui_cmd.offline_app(folder, tui_cmd.resolve_config(None)).sessions.open_sessions_from == tmp_path
    live = argparse.Namespace(**{**vars(args), "host": "demo"})
    assert tui_cmd.offline_app(live, tui_cmd.resolve_config(None)) is None


async def test_palette_and_help_offer_the_session_actions() -> None:
    from specdec_tui.ui.commands import palette_entries

    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        titles = {entry.title for entry in palette_entries(app)}
        assert {"Sessions", "Compare", "Sweep", "Replay"} <= titles
        ids = {row.binding_id for row in app.help_rows()}
        assert {"sessions", "compare", "sweep", "replay", "compare-next", "sweep-close"} <= ids
        compare = next(e for e in palette_entries(app) if e.title == "Compare")
        await compare.run()  # the palette awaits what it runs
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)


async def test_the_sweep_form_keeps_what_was_typed_and_remembers_it(tmp_path: Path) -> None:
    """Issue 35 (12): "1..3" typed in the runs field became 13 (an integer field drops the dots), and the form
    forgot its values each time it opened."""
    app = demo_app(tmp_path, time_scale=200.0)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                       "the demo's own start to end", steps=1200)
        await pilot.press("escape")
        app.sessions.sweep()
        await pilot.pause()
        form = app.screen
        assert isinstance(form, SweepFormScreen)
        form.query_one("#sweep-values").value = "2..3"
        form.query_one("#sweep-repeats").focus()
        form.query_one("#sweep-repeats").value = ""
        await pilot.press(*"1..3", "enter")
        await pilot.pause()
        assert form.query_one("#sweep-repeats").value == "1..3"
        error = str(form.query_one("#sweep-form-error").render())
        assert "1..3 is not a whole number of runs per value (a range goes in the values field)" in error, error
        await pilot.press("escape")
        await pilot.pause()
        app.sessions.sweep()
        await pilot.pause()
        again = app.screen
        assert isinstance(again, SweepFormScreen) and again is not form
        assert (again.query_one("#sweep-values").value, again.query_one("#sweep-repeats").value) == ("2..3", "1..3")
