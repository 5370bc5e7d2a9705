"""The Fleet tab's poll runs off the panel's event loop (issue 34: 16 hosts polled every 2 s on it held typed keys
for seconds): the feed's rows still come, read from real demo hosts, and the panel's loop never runs the poll."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from specdec_tui.core.config import Config, HostConfig
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop import fleet
from specdec_tui.ui import messages as m
from specdec_tui.ui.fleet_feed import FleetFeed

from .ui_helpers import wait_for


class PollerOnRecord(fleet.FleetPoller):
    """The real poller, noting the thread each poll and each host read ran on."""

    threads: list[int] = []

    async def poll(self) -> list[fleet.FleetRow]:
        PollerOnRecord.threads.append(threading.get_ident())
        return await super().poll()


class Panel(App[None]):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.feed = FleetFeed(self, config, None)
        self.rows: list[list[fleet.FleetRow]] = []

    def compose(self) -> ComposeResult:
        yield Static("fleet")

    def on_fleet_rows(self, message: m.FleetRows) -> None:
        self.rows.append(message.rows)

    async def on_unmount(self) -> None:
        await self.feed.close()


async def test_the_fleet_poll_runs_off_the_panels_loop_and_its_rows_come(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    hosts = {}
    for name in ("a", "b"):
        ws = ensure_demo_workspace(tmp_path / name, time_scale=200)
        hosts[name] = HostConfig(name=name, address="local", workspace=str(ws.root), unit=ws.unit_name)
    monkeypatch.setattr(fleet, "FleetPoller", PollerOnRecord)
    PollerOnRecord.threads = []
    app = Panel(Config(hosts=hosts, default_host="a"))
    async with app.run_test() as pilot:
        app.feed.show(True)
        await wait_for(pilot, lambda: bool(app.rows), "the first poll's rows")
        assert [row.name for row in app.rows[0]] == ["a", "b"]
        assert all(row.state != fleet.UNREACHABLE for row in app.rows[0]), app.rows[0]
        assert PollerOnRecord.threads and threading.get_ident() not in PollerOnRecord.threads
        app.feed.show(False)
    assert not any(thread.name == "fleet-poll" for thread in threading.enumerate())  # closed with the panel
