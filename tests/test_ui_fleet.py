"""The Fleet tab under Pilot: every configured host as a row, and enter switches the panel's active host without
restarting it (its unit, journal and health follow; the edit on the old host stays a draft; trials record the host)."""

from __future__ import annotations

from pathlib import Path

from specdec_tui.core import drafts
from specdec_tui.core.config import Config, HostConfig
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.fleet import FleetRow
from specdec_tui.loop.states import Busy
from specdec_tui.ui.app import SpecdecApp, make_app
from specdec_tui.ui.widgets.fleet_table import FleetTable

from .ui_helpers import FAST_PROFILE, record_notifications, started, wait_for


def two_host_app(tmp_path: Path) -> SpecdecApp:
    hosts: dict[str, HostConfig] = {}
    for name, steps in (("a", 1), ("b", 2)):
        ws = ensure_demo_workspace(tmp_path / name, time_scale=200)
        if steps != 1:
            unit = ws.unit_path.read_text().replace("--speculative-num-steps 1", f"--speculative-num-steps {steps}")
            ws.unit_path.write_text(unit.replace("--speculative-num-draft-tokens 2", f"--speculative-num-draft-tokens {steps + 1}"))
        hosts[name] = HostConfig(name=name, address="local", workspace=str(ws.root), unit=ws.unit_name)
    config = Config(hosts=hosts, profiles={"default": FAST_PROFILE}, default_host="a")
    ws_a = ensure_demo_workspace(tmp_path / "a")
    host = LocalHost(ws_a.root, ws_a.unit_name, ws_a.base_url, name="a")
    return make_app(config, host, Session(host="a", unit=ws_a.unit_name), session_path=tmp_path / "a-session.toml")


async def test_the_fleet_tab_lists_every_host_and_enter_makes_one_active(tmp_path: Path) -> None:
    app = two_host_app(tmp_path)
    notes = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: "--speculative-num-steps 1" in app.config_pane.text, "a's unit in the Config tab")
        # the panel starts a's inactive demo service by itself, after the unit has loaded; a switch is refused while
        # that runs, and idle before that start is not idle for good: wait for its end
        await wait_for(pilot, lambda: app.trial_loop is not None and app.trial_loop.busy is Busy.IDLE
                       and any(n.startswith("Server is healthy") for n in notes), "a's start to end", steps=1200)
        assert await app.config_pane.set_flag("speculative-num-steps", "3")  # an edit on a, not pushed
        await pilot.press("6")
        table = app.main.fleet_table
        await wait_for(pilot, lambda: table.row_names == ["a", "b"], "both hosts in the Fleet tab")
        assert table.cell_text("a", "host") == "▶ a" and table.cell_text("b", "host") == "  b"
        assert table.cell_text("b", "spec") == "NEXTN steps=2 topk=1 draft=3"
        assert table.cell_text("a", "spec") == "NEXTN steps=1 topk=1 draft=2"
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.host_name == "b", "the switch to b")
        await wait_for(pilot, lambda: "--speculative-num-steps 2" in app.config_pane.text, "b's unit in the Config tab")
        assert "b · sglang-demo.service" in app.sub_title
        assert app.session.host == "b" and app.session_path is not None and "b" in app.session_path.name
        assert app.trial_loop is not None and app.trial_loop.host is app.host and app.host.info.name == "b"
        assert any("Active host: b" in n for n in notes)
        await pilot.press("6")
        await wait_for(pilot, lambda: app.main.fleet_table.cell_text("b", "host") == "▶ b", "b marked active")
    draft = drafts.load_draft("a", "sglang-demo.service")
    assert draft is not None and "--speculative-num-steps 3" in draft  # the edit on a is kept as a's draft


async def test_the_fleet_tab_refuses_hosts_that_are_one_server_naming_them(tmp_path: Path) -> None:
    """Issue 35 (6): two names for one demo unit are refused in the tab, in words, with no rows (the CLI's rule)."""
    ws = ensure_demo_workspace(tmp_path / "shared", time_scale=200)
    hosts = {n: HostConfig(name=n, address="local", workspace=str(ws.root), unit=ws.unit_name) for n in ("a", "b")}
    config = Config(hosts=hosts, profiles={"default": FAST_PROFILE}, default_host="a")
    app = make_app(config, None, Session(host="a", unit=ws.unit_name), session_path=None)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("6")
        table = app.main.fleet_table
        note = table.query_one("#fleet-note")
        await wait_for(pilot, lambda: "Not polled" in str(note.render()), "the refusal in the Fleet tab")
        assert "hosts a and b are one server" in str(note.render()) and table.row_names == []


def fixed_rows() -> list[FleetRow]:
    return [
        FleetRow("gpu-a", "ready", "serving", model="Qwen3.5-122B-A10B",
                 spec={"algorithm": "NEXTN", "steps": "3", "topk": "1", "draft_tokens": "4"},
                 max_running_requests=17, last_c1_tok_s=234.1, best_tok_s=1426.0),
        FleetRow("gpu-b", "failing", "unit failed (exit-code, exit status 1)", spec={"algorithm": "EAGLE3", "steps": "5"},
                 errors_since_start=3, cause="RuntimeError: CUDA error: an illegal memory access was encountered",
                 findings=("start_failure",)),
        FleetRow("bastion-c", "unreachable", "no answer within 5 s"),
    ]


def test_fleet_rows_render_at_80_columns(snap_compare) -> None:
    from textual.app import App, ComposeResult

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield FleetTable(id="fleet-table")

        def on_mount(self) -> None:
            self.query_one(FleetTable).set_rows(fixed_rows(), active="gpu-a")

    assert snap_compare(Host(), terminal_size=(80, 24))


async def test_the_selected_row_says_why_it_is_not_ready_and_what_its_journal_blamed() -> None:
    from textual.app import App, ComposeResult

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield FleetTable(id="fleet-table")

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        table = app.query_one(FleetTable)
        table.set_rows(fixed_rows(), active="gpu-a")
        table.table.focus()
        await pilot.press("down")
        assert table.detail_text == ("gpu-b: failing — unit failed (exit-code, exit status 1)\n3 error(s) since it started; "
                                     "cause: RuntimeError: CUDA error: an illegal memory access was encountered\n"
                                     "doctor: start_failure (specdec-tui doctor --host gpu-b)")
        await pilot.press("down")
        assert table.detail_text == "bastion-c: unreachable — no answer within 5 s"
