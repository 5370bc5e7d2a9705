"""The demo workspace in a directory whose path has a space (macOS keeps user data under "Application Support"):
its unit's WorkingDirectory= is the path as systemd reads it, and the demo's server starts and answers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace


async def test_a_workspace_under_a_path_with_a_space_starts_its_server(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "Application Support" / "demo", time_scale=200)
    unit = UnitFile.parse(ws.unit_path.read_text())
    assert unit.get("Service", "WorkingDirectory") == str(ws.root)  # literal, no quotes around it
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    await host.connect()
    try:
        result = await host.restart()
        assert result.ok, result
        status = await host.status()
        assert status.active_state == "active", status
        async with httpx.AsyncClient() as client:
            for _ in range(300):
                try:
                    if (await client.get(f"{ws.base_url}/health", timeout=2)).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the demo server never answered /health")
    finally:
        await host.stop()
        await host.close()
