"""`specdec-tui serve` lets no foreign page drive the panel (issue 36, Security 1), in a real headless Chromium:
a page served from ANOTHER origin (127.0.0.1 on another port) opens websockets to serve, with and without the
token serve printed; none opens, no byte of the panel reaches that page and no panel process starts. The URL
serve prints opens the panel; the same address without its token is refused; more panels than --max-panels
are refused."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from specdec_tui.hosts.local.workspace import free_port
from tests.cdp_browser import Chromium
from tests.proc_helpers import _stat_fields, group_alive
from tests.tmux_session import program

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

URL_LINE = re.compile(r"^\s+(http://\S+/\?token=(\S+))$", re.MULTILINE)

HOSTILE_PAGE = """<!doctype html><html><body><script>
window.results = {};
function attack(name, url) {
  const r = window.results[name] = {opened: false, bytes: 0, closed: null, error: false};
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => { r.opened = true; ws.send(JSON.stringify(["stdin", "4"])); ws.send(JSON.stringify(["stdin", "b"])); };
  ws.onmessage = (e) => { r.bytes += e.data.byteLength || e.data.length || 0; };
  ws.onerror = () => { r.error = true; };
  ws.onclose = (e) => { r.closed = e.code; };
}
for (const [name, url] of Object.entries(TARGETS)) attack(name, url);
</script></body></html>"""


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(entry / "stat")
            if fields and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                members.append(int(entry.name))
    return members


def parent(pid: int) -> int | None:
    fields = _stat_fields(Path(f"/proc/{pid}/stat"))
    return int(fields[1]) if fields else None



class Served:
    def __init__(self, proc: subprocess.Popen[bytes], log: Path, port: int) -> None:
        self.proc, self.log, self.port = proc, log, port
        self.url = self.token = ""

    def wait_for_url(self, timeout_s: float = 30) -> None:
        """Until serve listens; then the URL it printed (a serve that prints no token leaves `url` empty)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited with {self.proc.returncode}:\n{text}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            except OSError:
                time.sleep(0.1)
                continue
            if match := URL_LINE.search(self.log.read_text(errors="replace")):
                self.url, self.token = match[1], match[2]
            return
        raise AssertionError(f"serve did not listen:\n{self.log.read_text(errors='replace')}")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    log = tmp_path / "serve.log"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    with log.open("wb") as out:
        proc = subprocess.Popen([*program(), "serve", "--demo", "--port", str(port), "--max-panels", "1"],
                                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    serve = Served(proc, log, port)
    try:
        serve.wait_for_url()
        yield serve
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        finally:
            if group_alive(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


async def hostile_site(targets: dict[str, str]) -> tuple[web.AppRunner, str]:
    page = HOSTILE_PAGE.replace("TARGETS", json.dumps(targets))

    async def index(_request: web.Request) -> web.Response:
        return web.Response(text=page, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", index)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}/"


async def test_a_page_from_another_origin_opens_no_panel_even_with_the_token(browser: Chromium, served: Served) -> None:
    base = f"ws://127.0.0.1:{served.port}"
    served.token = served.token or "unknown"  # a page on another site would not know it anyway
    targets = {"plain textual-serve socket": f"{base}/ws?width=80&height=24",
               "a guessed token": f"{base}/ws/guess?width=80&height=24",
               "the leaked token": f"{base}/ws/{served.token}?width=80&height=24"}
    runner, site = await hostile_site(targets)
    try:
        await browser.open(site)
        deadline = time.monotonic() + 20
        results: dict[str, dict[str, object]] = {}
        while time.monotonic() < deadline:
            results = await browser.evaluate("window.results") or {}
            if len(results) == len(targets) and all(r["closed"] is not None for r in results.values()):
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(1)  # any byte of a panel that did start would have arrived by now
        results = await browser.evaluate("window.results")
    finally:
        await runner.cleanup()
    for name, result in results.items():
        assert result["opened"] is False and result["bytes"] == 0, f"{name}: {result}"
        assert result["closed"] is not None, f"{name} still connecting: {result}"
    assert group_members(served.proc.pid) == [served.proc.pid], "a panel process started for the foreign page"


async def test_the_printed_url_opens_the_panel_and_the_address_without_its_token_is_refused(
        browser: Chromium, served: Served) -> None:
    for url in (f"http://127.0.0.1:{served.port}/", f"http://127.0.0.1:{served.port}/?token=wrong"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10)
        assert refused.value.code == 403 and b"open the URL that `serve` printed" in refused.value.read()
    assert served.url, f"serve printed no URL with a token:\n{served.log.read_text(errors='replace')}"
    await browser.open(served.url)
    await browser.wait_for_screen(lambda s: "specdec-tui — demo" in s, "the panel's first frame in the page")

    # --max-panels 1: a second panel, even from the page's own origin with the token, is refused
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as full:
            await http.ws_connect(f"ws://127.0.0.1:{served.port}/ws/{served.token}?width=80&height=24",
                                  headers={"Origin": f"http://127.0.0.1:{served.port}"})
    assert full.value.status == 503
    panels = [pid for pid in group_members(served.proc.pid) if parent(pid) == served.proc.pid]
    assert len(panels) == 1, panels  # one panel (serve's one child); the refused socket started none
