"""A server whose answers have the wrong shape (issue 36, tracebacks): a `/v1/models` that answers a JSON list (or
a string, or a `data` that is not a list) is a server that names no model, for the panel's health probe, `bench`
and `fleet` alike; never an AttributeError."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from aiohttp import web

from specdec_tui.loop.health_probe import probe_http
from tests.loopback_http import serving


@pytest.fixture(params=[[{"id": "m"}], "models", {"data": {"id": "m"}}, {"data": "m"}])
async def odd_server(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    async def health(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def models(_request: web.Request) -> web.Response:
        return web.json_response(request.param)

    async def server_info(_request: web.Request) -> web.Response:
        return web.json_response({"max_running_requests": 8})

    async with serving(get={"/health": health, "/v1/models": models, "/server_info": server_info}) as url:
        yield url


async def test_a_models_answer_of_the_wrong_shape_names_no_model(odd_server: str) -> None:
    async with httpx.AsyncClient(timeout=5) as client:
        probe = await probe_http(client, odd_server)
    assert probe.reachable and probe.health_status == 200
    assert probe.models == ()
    assert probe.server_info == {"max_running_requests": 8}  # the rest of the probe still stands
