"""The panel on the demo cluster (`specdec-tui --demo --nodes 2`): it starts every node, a push goes to every
node with its own --node-rank, and the journal pane shows each node's lines tagged with the node."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from specdec_tui.core.config import Config
from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.cluster import ClusterHost
from specdec_tui.hosts.factory import open_host
from specdec_tui.hosts.local.demo_cluster import DEMO_CLUSTER, ensure_demo_cluster
from specdec_tui.loop.states import Busy
from specdec_tui.ui.app import make_app
from specdec_tui.ui.widgets.flag_form import widget_id

from .ui_helpers import FAST_PROFILE, record_notifications, started, wait_for

pytestmark = pytest.mark.timeout(180)


async def test_the_panel_drives_a_two_node_demo_cluster(tmp_path: Path) -> None:
    demo = ensure_demo_cluster(tmp_path / "cluster", 2, time_scale=200)
    config = Config(hosts=demo.hosts, clusters=demo.clusters, profiles={"default": FAST_PROFILE},
                    default_host=DEMO_CLUSTER)
    host = open_host(config, DEMO_CLUSTER)
    assert isinstance(host, ClusterHost)
    app = make_app(config, host, Session(host=DEMO_CLUSTER, unit=host.info.unit, profile=FAST_PROFILE),
                   session_path=tmp_path / "s.toml")
    seen = record_notifications(app)
    units = [Path(n.host.info.unit_path) for n in host.nodes]
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await started(pilot)
            await wait_for(pilot, lambda: app.config_pane.running_text != "", "the unit to load")
            await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                           "the cluster to start", steps=1200)
            seen.clear()
            steps = app.screen.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input)
            steps.focus()
            await pilot.press("end", "backspace", "2")
            await pilot.pause()
            await pilot.press("escape")
            await pilot.press("p")
            await wait_for(pilot, lambda: any(n.startswith("Server is healthy") for n in seen), "healthy after push",
                           steps=1200)
            flags = [UnitFile.parse(u.read_text()).flags() for u in units]
            assert [(f["node-rank"], f["speculative-num-steps"]) for f in flags] == [("0", "2"), ("1", "2")]
            pane = app.main.journal_pane
            await wait_for(pilot, lambda: any(" [demo-1] " in line for line in pane.shown_lines), "node 1's lines")
            assert any(" [demo-0] " in line and "ready to roll" in line for line in pane.shown_lines)
    finally:
        await host.close()
