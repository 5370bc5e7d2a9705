"""The rate search as a panel task screen (issue 33), against the real simulator behind the demo host: `M` (the
footer and help name it; the palette offers it) opens the load form for the SLO, then the screen shows the probes
used, the rate being probed, each verdict and the bracket so far, names the saturation it met, and ends with the
answer the CLI prints (`RateSearch.words`); the probes are one trial of the session, drawn against the rate."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, Static

from specdec_tui.bench.events import LevelProgress
from specdec_tui.bench.rate_search import MAX_PROBES, RateSearch, probe_words
from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.loop.rate_search import RateProbeDone, RateProbeStarted
from specdec_tui.loop.states import Busy
from specdec_tui.ui.app import make_app
from specdec_tui.ui.commands import palette_entries
from specdec_tui.ui.screens.bench_form_screen import BenchFormScreen
from specdec_tui.ui.screens.rate_search_screen import RateSearchScreen

from .ui_helpers import demo_idle, footer_text, record_notifications, wait_for

pytestmark = pytest.mark.timeout(240)
SLO = "ttft_p90=300ms"


async def test_rate_search_screen_shows_probes_verdicts_saturation_and_the_answer(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=25.0)
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1,), requests=24, warmup=2, cooldown=2, max_tokens=32,
                           ignore_eos=True, seed=1)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    session = Session(host="demo", unit=ws.unit_name, profile=profile)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"), session,
                   session_path=tmp_path / "s.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_idle(pilot)
        assert any(e.title == "Max rate within SLO" and e.help == "keys: M" for e in palette_entries(app))  # type: ignore[arg-type]
        assert "M Rate" in footer_text(app)
        assert any(row.binding_id == "rate-search" and row.keys == "M" and row.description.startswith("Max rate")
                   for row in app.help_rows())
        await pilot.press("M")
        await wait_for(pilot, lambda: isinstance(app.screen, BenchFormScreen), "the load form")
        form = app.screen
        form.query_one("#bench-slo", Input).value = SLO
        form.query_one("#bench-rate", Input).value = "2000"  # far past what the simulator serves: it saturates
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RateSearchScreen), "the rate-search screen")
        screen = app.screen
        assert isinstance(screen, RateSearchScreen)
        await wait_for(pilot, lambda: screen.outcome is not None, "the rate search to end", steps=4000)
        seen = screen.progress_lines
        search = screen.outcome
        assert isinstance(search, RateSearch)
        assert any(text.startswith("probe 1 of ≤ 6 at 2000 req/s") for text in seen), seen[:5]
        assert any("nothing met yet, missed at 2000" in text for text in seen), seen
        assert 2 <= len(search.probes) <= MAX_PROBES
        assert search.saturated and "queue growing" in search.saturation  # named, as the CLI names it
        assert "saturated at 2000 requests/s" in screen.progress_text()
        assert screen.cell_text(0, "verdict") == "missed" and "queue growing" in screen.cell_text(0, "why")
        assert search.probes[0].level.saturated in screen.cell_text(0, "why")
        assert [screen.cell_text(i, "rate") for i in range(len(search.probes))] == [f"{p.rate:.4g}" for p in search.probes]
        result = str(screen.query_one("#rate-search-result", Static).content)
        assert result.startswith(search.words())
        trial = session.trials[-1]
        assert [lv.rate for lv in trial.levels] == [p.rate for p in search.probes]
        assert trial.notes == search.words() and trial.status == "ok"
        assert app.trial_loop.busy is Busy.IDLE
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, RateSearchScreen), "the screen to close")
        chart = app.main.tok_chart  # the probes, drawn against the rate they ran at
        await wait_for(pilot, lambda: chart.by_rate and bool(chart.series), "the chart to draw the search")
        assert sorted(x for x, _ in chart.series[-1][1]) == sorted(p.rate for p in search.probes)


async def test_rate_search_without_an_slo_is_refused_in_words(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=25.0)
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1,), requests=8, warmup=0, max_tokens=16)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"),
                   Session(host="demo", unit=ws.unit_name, profile=profile), session_path=tmp_path / "s.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_idle(pilot)
        seen = record_notifications(app)
        await pilot.press("M")
        await wait_for(pilot, lambda: isinstance(app.screen, BenchFormScreen), "the load form")
        await pilot.press("enter")  # the SLO left empty
        await wait_for(pilot, lambda: not isinstance(app.screen, BenchFormScreen), "the form to close")
        assert not isinstance(app.screen, RateSearchScreen)
        assert any("needs an SLO" in n for n in seen), seen


def _probe(rate: float, served: float, ttft_p99: float, *, saturated: str = "", missed: tuple[str, ...] = ()) -> LevelResult:
    duration = 80 / served
    good = 80 if not missed and not saturated else 31
    return LevelResult(concurrency=0, requests=80, output_tokens=80 * 32, duration_s=duration,
                       output_tok_s=80 * 32 / duration, ttft_ms=Dist(p50=ttft_p99 / 3, p99=ttft_p99),
                       itl_ms=Dist(p50=6.0, p99=14.0), rate=rate, peak_in_flight=int(rate * ttft_p99 / 1000) + 2,
                       good_requests=good, goodput_req_s=good / duration, goodput_tok_s=good * 32 / duration,
                       slo_missed=list(missed), saturated=saturated)


class SearchHost(App[None]):
    """The screen mid-search, fed the loop's own events (no worker): two probes done, the third running."""

    def on_mount(self) -> None:
        profile = BenchProfile(requests=80, slo=("ttft_p99=2s", "itl_p99=50ms"))
        screen = RateSearchScreen(None, profile)
        screen.started = 0.0
        self.push_screen(screen)
        sat = "queue growing: served 21.3 of 32 requests/s"
        events: list[object] = [
            RateProbeStarted(0, MAX_PROBES, 8.0),
            RateProbeDone(0, p1 := _probe(8.0, 8.0, 420.0), True, probe_words(p1), 8.0, None, ""),
            RateProbeStarted(1, MAX_PROBES, 32.0),
            RateProbeDone(1, p2 := _probe(32.0, 21.3, 9100.0, saturated=sat, missed=("ttft p99 9100 ms > 2000 ms",)),
                          False, probe_words(p2), 8.0, 32.0, f"at 32 requests/s: {sat}"),
            RateProbeStarted(2, MAX_PROBES, 17.0),
            LevelProgress(0, 41, 0, 1312, 540.5, in_flight=9),
        ]
        for event in events:
            screen.post_task_event(event)


def test_rate_search_screen_snapshot_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(SearchHost(), terminal_size=(80, 24))


async def test_escape_cancels_a_running_search_and_the_probes_so_far_are_kept(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=2.0)  # slow: the first probe is still running
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1,), requests=400, warmup=0, cooldown=0, max_tokens=64,
                           ignore_eos=True, slo=(SLO,))
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    session = Session(host="demo", unit=ws.unit_name, profile=profile)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"), session,
                   session_path=tmp_path / "s.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_idle(pilot)
        await pilot.press("M")
        await wait_for(pilot, lambda: isinstance(app.screen, BenchFormScreen), "the load form")
        await pilot.press("enter")  # the profile's SLO, the first rate 8 req/s
        await wait_for(pilot, lambda: isinstance(app.screen, RateSearchScreen), "the rate-search screen")
        screen = app.screen
        assert isinstance(screen, RateSearchScreen)
        await wait_for(pilot, lambda: any(line.startswith("probe 1:") and " done," in line for line in screen.log_lines),
                       "the first probe's progress", steps=1200)
        assert app.trial_loop.busy is Busy.RATE_SEARCH
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running, "the cancel", steps=1200)
        result = str(screen.query_one("#rate-search-result", Static).content)
        assert result.startswith("Rate search cancelled") and "Nothing was pushed" in result
        assert session.trials[-1].status == "cancelled" and app.trial_loop.busy is Busy.IDLE
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, RateSearchScreen), "the screen to close")
