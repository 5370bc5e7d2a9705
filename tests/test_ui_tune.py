"""The panel's Tune screen under Pilot, on the demo host (the simulated server, real HTTP): reached by its key and
the palette, the search shown live (a row per launch, the best, the next candidate), the choice pushed with `a`
the ordinary way, and the form's mistakes said in words."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.states import Busy
from specdec_tui.loop.tune_space import unit_for
from specdec_tui.ui.commands import palette_entries
from specdec_tui.ui.screens.tune_screen import TuneScreen

from .ui_helpers import (
    demo_app,
    demo_ready,
    demo_unit_file,
    hold_unit_read,
    offline_app,
    record_notifications,
    start_tune,
    started,
    wait_for,
)


def text_of(screen: TuneScreen, widget: str) -> str:
    return str(screen.query_one(f"#tune-{widget}", Static).render())


async def test_tune_from_its_key_shows_the_search_live_and_pushes_the_choice(tmp_path: Path) -> None:
    app = demo_app(tmp_path, session_path=tmp_path / "session.toml")
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        screen = await start_tune(pilot, app, "speculative-num-steps=0,1,3", "ttft_p99=5s", "4")
        await wait_for(pilot, lambda: screen.running, "the tune's start")
        assert app.busy is not Busy.IDLE  # the loop is held by the tune: no other intent meanwhile
        await wait_for(pilot, lambda: screen.outcome is not None, "the tune's end", steps=2400)
        outcome = screen.outcome
        assert outcome is not None and outcome.best is not None
        table = screen.query_one("#tune-surface", DataTable)
        assert table.row_count == len([r for r in outcome.results if r.point[0][0] != "speculative-adaptive"]) >= 2
        assert text_of(screen, "best").startswith("best: steps=")
        next_line = text_of(screen, "next")  # the adaptive check, the last thing said; no stale "next: …"
        assert next_line == "" or next_line.startswith("adaptive check: "), next_line
        chart = str(screen.query_one("#tune-chart").render())
        assert "tok/s per level" in chart and "c=1" in chart  # the surface so far, a series a level
        assert chart.rstrip().splitlines()[-1].strip() == "steps"  # by the configuration the space varies
        result = text_of(screen, "result")
        assert "Choice: steps=" in result and "Schedule: c=1:" in result and "a pushes the choice" in result
        chosen = dict(outcome.best)["speculative-num-steps"]
        await pilot.press("a")
        await wait_for(pilot, lambda: not isinstance(app.screen, TuneScreen), "the screen to close")
        # the ordinary push: the host's unit becomes the choice (so u rolls it back)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and app.trial_loop is not None and app.trial_loop.running_text is not None
                       and (UnitFile.parse(app.trial_loop.running_text).get_flag("speculative-num-steps") or "0") == chosen,
                       "the choice pushed", steps=1200)
        if chosen == "0":
            assert UnitFile.parse(app.trial_loop.running_text).get_flag("speculative-algorithm") is None


async def test_the_tune_holds_the_loop_from_its_first_step_while_the_host_is_slow_to_answer(tmp_path: Path) -> None:
    """The tune claimed the trial loop only once it had read the host's unit (an SSH round trip; longer on a loaded
    machine, where the test above saw the loop idle with the screen running): meanwhile b started a benchmark under
    the tune. The read is held open here: the loop is the tune's already, and b is refused in words."""
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        loop = app.trial_loop
        assert loop is not None
        release = hold_unit_read(loop)  # the host slow to answer
        screen = await start_tune(pilot, app, "speculative-num-steps=1,2", "ttft_p99=5s", "2")
        await wait_for(pilot, lambda: screen.running and app.busy is Busy.TUNE, "the loop held by the tune")
        await pilot.press("b")
        await wait_for(pilot, lambda: any("before a bench" in n for n in seen), "b refused in words")
        assert not app.bench_running and loop.refusal(Busy.BENCH) is not None
        release.set()
        await pilot.press("escape")  # cancels the tune: the unit that ran before is back
        await wait_for(pilot, lambda: not screen.running and app.busy is Busy.IDLE, "the tune cancelled", steps=2400)


async def test_the_form_says_what_is_wrong_and_starts_nothing(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_ready(pilot, seen)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, TuneScreen), "the Tune screen")
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        for widget in ("#tune-space", "#tune-slo", "#tune-budget", "#tune-status", "#tune-surface"):
            region = screen.query_one(widget).region
            assert region.y >= 0 and region.bottom <= 24, (widget, region)  # fits 80x24
        shown = app.export_screenshot().replace("&#160;", " ")
        for name in ("flags to search", "SLO", "budget"):  # each field named on screen, not just "24"
            assert f">{name}<" in shown or f" {name}" in shown, name
        screen.query_one("#tune-slo", Input).value = "p99=2s"
        screen.query_one("#tune-slo", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert "Cannot start: SLO 'p99=2s': expected METRIC_pNN=LIMIT" in text_of(screen, "status")
        assert not screen.running and app.busy is Busy.IDLE
        screen.query_one("#tune-space", Input).value = "tp=1,2"
        screen.query_one("#tune-slo", Input).value = "ttft_p99=2s"
        await pilot.press("enter")
        await pilot.pause()
        assert "the tuner searches speculative-algorithm" in text_of(screen, "status")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TuneScreen), "escape closes it")


async def test_tune_is_in_the_palette_with_its_key() -> None:
    app = offline_app()
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        entries = [e for e in palette_entries(app) if e.title == "Tune"]
        assert len(entries) == 1 and entries[0].help == "keys: T"
        ran = entries[0].run()  # offline: no host to tune, said in words
        if ran is not None:
            await ran  # type: ignore[misc]
        await pilot.pause()
        assert not isinstance(app.screen, TuneScreen)
        assert any("offline session: a tune needs a host" in n for n in seen), seen


async def test_tune_across_two_identical_hosts_from_the_screen(tmp_path: Path) -> None:
    """The hosts field: the panel's own host and another of the config launch at once, each put back after."""
    from dataclasses import replace

    from specdec_tui.hosts.local.workspace import demo_host_config, ensure_demo_workspace

    app = demo_app(tmp_path, session_path=tmp_path / "session.toml")
    other = ensure_demo_workspace(tmp_path / "b", time_scale=200.0)
    app.config = replace(app.config, hosts={**app.config.hosts, "b": replace(
        demo_host_config(other), name="b", address="local", workspace=str(other.root))})
    before = other.unit_path.read_bytes()
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        screen = await start_tune(pilot, app, "speculative-num-steps=0,3", "ttft_p99=5s", "4", hosts="demo, b")
        await wait_for(pilot, lambda: screen.outcome is not None or "stopped" in text_of(screen, "status"),
                       "the tune's end", steps=2400)
        outcome = screen.outcome
        assert outcome is not None, text_of(screen, "status")
        assert {r.host for r in outcome.results} == {"demo", "b"}  # both hosts launched
        table = screen.query_one("#tune-surface", DataTable)
        labels = {str(table.get_row_at(i)[1]).split(":")[0] for i in range(table.row_count)}
        assert labels == {"demo", "b"}, labels  # each row says where it ran
        assert "a pushes the choice on demo, b" in text_of(screen, "result")
        assert other.unit_path.read_bytes() == before  # the other host runs the unit it ran before
        # a: the choice onto both hosts, each its own edit (its own port), the panel's through its ordinary push
        assert outcome.promoted is not None
        chosen = dict(outcome.promoted)
        assert unit_for(before.decode(), chosen) != before.decode()  # `a` has something to change on b
        await pilot.press("a")
        await wait_for(pilot, lambda: not isinstance(app.screen, TuneScreen), "the choice pushed on b", steps=2400)
        own = tmp_path / "demo" / "units" / "sglang-demo.service"

        def runs_choice(unit_path: Path) -> bool:  # steps=0 may win: unit_for takes the speculative flags out
            base = screen.base_text if unit_path == own else before.decode()
            return unit_path.read_text() == unit_for(base, chosen)

        try:
            await wait_for(pilot, lambda: runs_choice(own) and app.busy is Busy.IDLE, "the panel's own push",
                           steps=2400)
        except AssertionError:
            raise AssertionError(f"the panel's own push: {seen}, busy {app.busy}") from None
        assert runs_choice(other.unit_path)
        assert not [n for n in seen if "not on every host" in n], seen
        assert UnitFile.parse(other.unit_path.read_text()).get_flag("--port") == \
            UnitFile.parse(before.decode()).get_flag("--port")  # b keeps its own port
        on_b = [t for t in app.session.trials if t.host == "b" and t.unit_text == other.unit_path.read_text()]
        assert on_b and on_b[-1].status != "failed" and on_b[-1].facts is not None  # restarted onto it, healthy



async def test_a_pushes_nothing_over_a_unit_another_terminal_changed_during_the_tune(tmp_path: Path) -> None:
    """Issue 35: the choice is made against the unit the tune started from; changed on the host since (another
    terminal), `a` pushes nothing and says so in words (it pushed over the other terminal's unit before)."""
    from specdec_tui.ui.screens.unit_changed_screen import UnitChangedScreen

    from .test_ui_unit_changed_elsewhere import no_periodic_read, other_terminal_sets

    app = demo_app(tmp_path, session_path=tmp_path / "session.toml")
    seen = record_notifications(app)
    unit_file = demo_unit_file(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        screen = await start_tune(pilot, app, "speculative-num-steps=1,2", "ttft_p99=5s", "2")
        await wait_for(pilot, lambda: screen.outcome is not None, "the tune's end", steps=2400)
        await no_periodic_read(pilot, app)
        theirs = other_terminal_sets(unit_file, "chunked-prefill-size", "1024")
        await pilot.press("a")
        await wait_for(pilot, lambda: any("The tune's choice was not pushed: the unit on demo changed outside this "
                                          "panel" in note for note in seen), "the refusal in words", steps=1200)
        assert unit_file.read_text() == theirs  # nothing pushed over the other terminal's unit
        assert not isinstance(app.screen, UnitChangedScreen)  # no edit of the form's own to keep or drop


async def test_a_tune_whose_other_host_cannot_be_reached_stops_in_words_and_the_panel_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other hosts are connected by `loop.host_group` (through `OtherHosts`): b listens nowhere (a loopback port
    nothing holds), so the tune stops before any launch, in b's own words, and the panel's host is free again."""
    from dataclasses import replace

    from specdec_tui.core.config import HostConfig
    from tests.loopback_ssh import closed_port

    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ssh of the machine's
    app = demo_app(tmp_path, session_path=tmp_path / "session.toml")
    app.config = replace(app.config, hosts={**app.config.hosts,
                                            "b": HostConfig(name="b", address="127.0.0.1", port=closed_port())})
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        screen = await start_tune(pilot, app, "speculative-num-steps=0,3", "ttft_p99=5s", "4", hosts="demo, b")
        await wait_for(pilot, lambda: "stopped" in text_of(screen, "status"), "the tune's end", steps=600)
        assert "b: cannot reach 127.0.0.1 over SSH" in text_of(screen, "status"), text_of(screen, "status")
        assert screen.outcome is None and screen.others is not None and screen.others.loops == []
        assert not [t for t in app.session.trials if t.sweep.get("tune")]  # nothing launched
        await wait_for(pilot, lambda: app.busy is Busy.IDLE, "the panel's host free again")
