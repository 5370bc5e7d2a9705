"""Issue 17 point 3: a sweep says what the benchmark says about inflating settings (from bench.validity), and
its explanation gives each value's score and spread, says when one run cannot measure noise, and what the
winner costs at the highest concurrency."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.bench.validity import content_warnings, trials_sweep_warnings
from specdec_tui.cli.main import main
from specdec_tui.cli.render import sweep_table
from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import Dist, LevelResult, ServerFacts
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.sweep_rules import choose, curve
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.ui.app import make_app
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen
from tests.test_latency_views import text

from .ui_helpers import wait_for

DEMO = BenchProfile(name="demo", concurrency=(1, 64), max_tokens=128, ignore_eos=True, prompts="repetitive")
STEPS = "speculative-num-steps"


def trial(i: int, value: str, c1: float, c64: float, mrr: int, ttft_p99_ms: float, profile: BenchProfile = DEMO) -> Trial:
    return Trial(id=i, unit_text="", status="ok", profile=profile, sweep={"flag": STEPS, "value": value, "repeat": 1},
                 facts=ServerFacts(max_running_requests=mrr),
                 levels=[LevelResult(concurrency=1, requests=8, output_tok_s=c1, ttft_ms=Dist(p99=60.0)),
                         LevelResult(concurrency=64, requests=64, output_tok_s=c64, ttft_ms=Dist(p99=ttft_p99_ms))])


# the seed: more steps win at c=1 and lose capacity (26 → 21 → 17), so the top level queues harder
ONE_RUN = {"1": [trial(1, "1", 123.0, 1_500.0, 26, 3_100.0)], "2": [trial(2, "2", 186.0, 1_400.0, 21, 5_200.0)],
           "3": [trial(3, "3", 234.0, 1_130.0, 17, 14_100.0)]}


def test_with_one_run_each_the_explanation_says_noise_was_not_measured_and_gives_each_score() -> None:
    reasons = choose(ONE_RUN).reasons
    assert reasons[1].startswith("1 run each: noise not measured")
    assert reasons[2] == "scores: 1: 123.0 · 2: 186.0 · 3: 234.0"
    assert not any("MAD 0.0" in r for r in reasons)


def test_with_repeats_each_value_has_its_median_and_spread() -> None:
    repeated = {v: ts + [trial(10 + i, v, ts[0].levels[0].output_tok_s + 4, 1_450.0, 26 - 4 * i, 4_000.0)
                         for _ in range(1)] + [trial(20 + i, v, ts[0].levels[0].output_tok_s - 2, 1_450.0, 26, 4_000.0)]
                for i, (v, ts) in enumerate(ONE_RUN.items())}
    reasons = choose(repeated).reasons
    scores = next(r for r in reasons if r.startswith("scores (median, spread): "))
    assert "3: 231.0 (234.0, MAD 2.0 over 3 runs)" in scores
    assert not any(r.startswith("1 run each") for r in reasons)


def test_the_explanation_says_what_the_winner_costs_at_the_highest_concurrency() -> None:
    choice = choose(ONE_RUN)
    assert choice.winner is not None and choice.winner.value == "3"
    assert choice.reasons[-1] == ("cost at c=64: 1,130.0 tok/s against 1,500.0 for 1 (-24.7%), TTFT p99 14.1 s "
                                  "(queues: >17 running)")


def test_the_sweep_table_shows_spread_and_ttft_at_the_highest_concurrency() -> None:
    out = text(sweep_table(STEPS, curve(ONE_RUN), choose(ONE_RUN)))
    row3 = next(line for line in out.splitlines() if line.replace("│", " ").split()[:1] == ["3"])
    assert "1 run: noise not measured" in row3 and "14,100" in row3 and "1,130.0 q>17" in row3


def test_a_sweep_names_the_caveats_the_benchmark_gives_for_the_settings_its_trials_ran() -> None:
    bench_says = content_warnings(0.0, True, True, [])
    sweep_says = trials_sweep_warnings(t for ts in ONE_RUN.values() for t in ts)
    assert sweep_says == ["winner picked under settings that inflate acceptance (and tok/s): temperature 0 with "
                          "ignore_eos, repetitive prompt set; decide with temperature > 0 and the realistic prompts"]
    assert [w.split(":")[0] for w in bench_says] == ["temperature 0 with ignore_eos", "repetitive prompt set"]
    realistic = BenchProfile(temperature=0.7)
    assert trials_sweep_warnings([trial(9, "1", 1.0, 1.0, 26, 1.0, profile=realistic)]) == []


SMALL = ["--concurrency", "1,4", "--requests", "4", "--max-tokens", "32", "--time-scale", "25"]


def test_the_cli_sweep_warns_and_explains(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["sweep", "--host", "demo", "--values", "1..2", "--repeats", "1", "--prompts", "repetitive",
                 "--session", str(tmp_path / "s.toml"), *SMALL])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "⚠ winner picked under settings that inflate acceptance (and tok/s): " in out
    assert "repetitive prompt set; decide with temperature > 0 and the realistic prompts" in out
    assert "1 run each: noise not measured" in out
    assert "at c=4 the winner is also the fastest" in out or "cost at c=4:" in out


async def test_the_panel_sweep_warns_from_the_start_and_explains_the_winner(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=200.0)
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1, 4), requests=4, warmup=0, max_tokens=16, ignore_eos=True)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"),
                   Session(host="demo", unit=ws.unit_name, profile=profile), session_path=tmp_path / "s.toml")
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.trial_loop is not None and app.trial_loop.busy is Busy.IDLE and app.health is not None
                       and app.health.state == "ready", "the demo start to end", steps=1200)
        app.push_screen(SweepScreen(app.trial_loop, plan_from_form(SweepForm(STEPS, "1..2", "1", "c1"), profile)))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        warning = str(screen.query_one("#sweep-warnings").render())
        assert ("winner picked under settings that inflate acceptance (and tok/s): temperature 0 with ignore_eos;"
                in " ".join(warning.split()))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) or screen.outcome is not None,
                       "the sweep to end", steps=2400)
        result = " ".join(str(screen.query_one("#sweep-result").render()).split())
        assert "1 run each: noise not measured" in result
        assert "at c=4 the winner is also the fastest" in result or "cost at c=4:" in result
