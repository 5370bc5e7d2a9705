"""The panel on a host whose HTTP port holds a server that misbehaves (a newcomer's and an attacker's pass): the
Health pane says in words what is wrong, no traceback, and the keys stay live. The demo host's own service runs
(systemd's view: active), its base URL pointed at a loopback server that cuts /health mid-answer, or whose
/server_info is 5,000 nested brackets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from textual.widgets import TabbedContent

from specdec_tui.core.config import Config, UIConfig
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.ui.app import SpecdecApp, make_app

from .loopback_http import serving
from .ui_helpers import FAST_PROFILE, started, wait_for


async def cut_mid_answer(request: web.Request) -> web.StreamResponse:
    """200 with a length of 1,000 bytes, two sent, then the connection closed."""
    resp = web.StreamResponse(status=200)
    resp.content_length = 1000
    await resp.prepare(request)
    await resp.write(b"OK")
    assert request.transport is not None
    request.transport.close()
    return resp


async def health_ok(request: web.Request) -> web.Response:
    return web.Response(text="")


async def models(request: web.Request) -> web.Response:
    return web.json_response({"data": [{"id": "m"}]})


async def nested_info(request: web.Request) -> web.Response:
    return web.Response(text='{"speculative_algorithm": ' + "[" * 5000, content_type="application/json")


@pytest.fixture
async def cutting_server() -> AsyncIterator[str]:
    async with serving(get={"/health": cut_mid_answer}) as url:
        yield url


@pytest.fixture
async def nesting_server() -> AsyncIterator[str]:
    async with serving(get={"/health": health_ok, "/v1/models": models, "/server_info": nested_info}) as url:
        yield url


def panel_on(root: Path, base_url: str) -> SpecdecApp:
    """The demo panel whose host answers HTTP at `base_url` (its own service still runs under the demo)."""
    ws = ensure_demo_workspace(root / "demo", time_scale=200)
    base = demo_config(ws)
    config = Config(hosts=base.hosts, profiles={"default": FAST_PROFILE}, default_host=base.default_host,
                    ui=UIConfig())
    host = LocalHost(ws.root, ws.unit_name, base_url, name="demo")
    return make_app(config, host, Session(host="demo", unit=ws.unit_name, profile=FAST_PROFILE), session_path=None)


def health_words(app: SpecdecApp) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query("HealthPane Static"))


async def test_a_health_answer_cut_mid_way_is_said_so_not_port_not_open(tmp_path: Path, cutting_server: str) -> None:
    app = panel_on(tmp_path, cutting_server)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("3")
        await wait_for(pilot, lambda: "mid-answer" in health_words(app), "the Health pane's words", steps=800)
        words = health_words(app)
        assert "cut or garbled mid-answer" in words and "port not open yet" not in words, words
        await pilot.press("1")  # the keys stay live
        await wait_for(pilot, lambda: app.main.query_one(TabbedContent).active == "config", "the Config tab")


async def test_a_server_info_nested_past_the_parser_s_depth_is_no_error_screen(tmp_path: Path,
                                                                              nesting_server: str) -> None:
    """It raised RecursionError past the probe's handlers: "The unit could not be restarted", the panel stuck."""
    app = panel_on(tmp_path, nesting_server)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("3")
        await wait_for(pilot, lambda: "READY" in health_words(app) or "server info" in health_words(app),
                       "the Health pane", steps=800)
        assert type(app.screen).__name__ == "MainScreen", type(app.screen).__name__
        await pilot.press("1")
        await wait_for(pilot, lambda: app.main.query_one(TabbedContent).active == "config", "the Config tab")
