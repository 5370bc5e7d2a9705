"""The panel's sweep on several hosts: the form's hosts field (at 80x24), and a sweep from the panel's host and
another demo host at once, each with its own workspace, ending with "apply the winner?" on both."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from specdec_tui.core.config import BenchProfile, Config, HostConfig
from specdec_tui.core.session import Session, load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep_form import FormError, SweepForm, hosts_from_form, plan_from_form
from specdec_tui.loop.sweep_plan import edit_for_value
from specdec_tui.ui.app import SpecdecApp, make_app
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sweep_form_screen import SweepFormScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen

from .ui_helpers import FAST_PROFILE, applied_as, offline_app, record_notifications, started, wait_for

STEPS = "speculative-num-steps"


def test_hosts_field_lists_config_hosts_with_the_active_one_first() -> None:
    assert hosts_from_form("", ["a", "b"], "a") == ("a",)
    assert hosts_from_form("c, a b", ["a", "b", "c"], "a") == ("a", "c", "b")
    with pytest.raises(FormError, match=r"hosts: no host named nope in the config \(configured: a, b\)"):
        hosts_from_form("a, nope", ["a", "b"], "a")
    with pytest.raises(FormError, match="hosts: include a, the host this panel runs on"):
        hosts_from_form("b", ["a", "b"], "a")
    profile = BenchProfile(concurrency=(1, 4))
    assert plan_from_form(SweepForm(STEPS, "1..3", "1", "c1", "a"), profile, configured=["a", "b"], active="a").hosts == ()
    assert plan_from_form(SweepForm(STEPS, "1..3", "1", "c1", "a,b"), profile, configured=["a", "b"],
                          active="a").hosts == ("a", "b")


async def test_the_form_with_hosts_fits_80x24_and_returns_a_plan_for_several_hosts() -> None:
    app = offline_app()
    plans: list[object] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        app.push_screen(SweepFormScreen(BenchProfile(concurrency=(1, 4)), values="1..6", repeats=1,
                                        configured=["gpu-a", "gpu-b", "gpu-c"], active="gpu-a"), plans.append)
        await pilot.pause()
        form = app.screen
        for widget in ("#sweep-flag", "#sweep-values", "#sweep-repeats", "#sweep-objective", "#sweep-hosts",
                       "#sweep-form-error", "#start", "#cancel"):
            region = form.query_one(widget).region
            assert region.y >= 0 and region.bottom <= 24, (widget, region)  # on screen, nothing cut off
        hosts = form.query_one("#sweep-hosts")
        assert hosts.value == "gpu-a"  # the active host by default
        hosts.value = "gpu-a, gpu-x"
        await pilot.press("enter")
        await pilot.pause()
        assert "hosts: no host named gpu-x" in str(form.query_one("#sweep-form-error").render())
        hosts.value = "gpu-a gpu-c"
        await pilot.click("#start")
        await pilot.pause()
    assert len(plans) == 1 and plans[0].hosts == ("gpu-a", "gpu-c") and plans[0].values == tuple("123456")


async def start_panel_sweep(pilot: Pilot[None], app: SpecdecApp, seen: list[str], values: str) -> SweepScreen:
    """Once the demo host's own start is over (it starts its inactive service by itself after reading the unit),
    the sweep form filled for hosts a and b and started: the Sweep screen."""
    await started(pilot)
    await wait_for(pilot, lambda: app.trial_loop is not None and app.trial_loop.busy is Busy.IDLE
                   and any(n.startswith("Server is healthy") for n in seen), "the panel's own start", steps=1200)
    app.action_sweep()
    await pilot.pause()
    form = app.screen
    assert isinstance(form, SweepFormScreen)
    form.query_one("#sweep-values").value = values
    form.query_one("#sweep-repeats").value = "1"
    form.query_one("#sweep-hosts").value = "a, b"
    await pilot.press("enter")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, SweepScreen), seen
    return screen


async def test_a_panel_sweep_on_two_hosts_runs_both_and_applies_the_winner_on_both(tmp_path: Path) -> None:
    workspaces = {n: ensure_demo_workspace(tmp_path / n, time_scale=100.0) for n in ("a", "b")}
    config = Config(hosts={n: HostConfig(name=n, address="local", workspace=str(ws.root), healthy_timeout_s=60)
                           for n, ws in workspaces.items()},
                    profiles={"default": FAST_PROFILE}, default_host="a")
    host = LocalHost(workspaces["a"].root, workspaces["a"].unit_name, workspaces["a"].base_url, name="a")
    session_file = tmp_path / "session.toml"
    app = make_app(config, host, Session(host="a", unit="sglang-demo.service", profile=FAST_PROFILE),
                   session_path=session_file)
    before = {n: ws.unit_path.read_text() for n, ws in workspaces.items()}
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await start_panel_sweep(pilot, app, seen, "1..4")
        assert "on a, b" in str(screen.query_one("#sweep-title").render())
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the apply-the-winner question",
                       steps=2400)
        outcome = screen.outcome
        assert outcome is not None and outcome.winner is not None
        assert outcome.host_of_value == {"1": "a", "2": "b", "3": "a", "4": "b"}
        for value in ("1", "2", "3", "4"):
            assert screen.cell_text(value, "status").startswith("ok")
        result = str(screen.query_one("#sweep-result").render())
        assert "Ran: 1 on a, 2 on b, 3 on a, 4 on b" in result and "The hosts run the units they ran before" in result
        assert {n: ws.unit_path.read_text() for n, ws in workspaces.items()} == before
        await pilot.press("y")
        await wait_for(pilot, lambda: f"Every host now runs the {applied_as(screen)}" in str(screen.query_one("#sweep-result").render()),
                       "the winner applied on both hosts", steps=2400)
        for name, ws in workspaces.items():
            now = ws.unit_path.read_text()
            assert now == edit_for_value(before[name], STEPS, outcome.winner)
            assert UnitFile.parse(now).flags()["port"] == UnitFile.parse(before[name]).flags()["port"]
        await pilot.press("escape")
        await pilot.pause()
    saved = load_session(session_file)
    assert sorted((t.sweep["value"], t.host) for t in saved.trials if t.sweep) == sorted(outcome.host_of_value.items())
    other = LocalHost(workspaces["b"].root, workspaces["b"].unit_name, workspaces["b"].base_url, name="b")
    await other.stop()  # b's service was started by the sweep's own host object, which leaves it running


async def test_a_panel_sweep_whose_other_host_cannot_be_reached_stops_in_words_and_pushes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other hosts are connected by `loop.host_group` (through `OtherHosts`): b listens nowhere (a loopback
    port nothing holds), so the sweep stops before anything is pushed, naming b and saying why in its own words."""
    from tests.loopback_ssh import closed_port

    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ssh of the machine's
    ws = ensure_demo_workspace(tmp_path / "a", time_scale=100.0)
    config = Config(hosts={"a": HostConfig(name="a", address="local", workspace=str(ws.root), healthy_timeout_s=60),
                           "b": HostConfig(name="b", address="127.0.0.1", port=closed_port())},
                    profiles={"default": FAST_PROFILE}, default_host="a")
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="a")
    app = make_app(config, host, Session(host="a", unit="sglang-demo.service", profile=FAST_PROFILE),
                   session_path=tmp_path / "session.toml")
    before = ws.unit_path.read_text()
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await start_panel_sweep(pilot, app, seen, "1..2")
        await wait_for(pilot, lambda: not screen.running, "the sweep's end", steps=600)
        result = str(screen.query_one("#sweep-result").render())
        assert result.startswith("Sweep failed: b: cannot reach 127.0.0.1 over SSH"), result
        assert screen.others.loops == [] and screen.loops == [screen.runner]
        await pilot.press("escape")
        await pilot.pause()
    assert ws.unit_path.read_text() == before
    await host.stop()
