"""A real headless Chromium (Debian's `chromium`) driven over the Chrome DevTools Protocol with aiohttp's
websocket client: open a page, read what its xterm.js terminal shows, press keys, take screenshots.

textual-serve's page keeps its xterm.js `Terminal` in a closure and draws it on a canvas, so there is no DOM
text to read. A script installed before the page's own records the terminal when the page assigns
`this.terminal = new Terminal(...)`; the test then reads that terminal's buffer, which is what the canvas draws.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

# Before the page's script runs: the first object to get a `terminal` property keeps it as an own property,
# and the value is also left on `window` for the test.
CAPTURE_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true, enumerable: true});
    window.__capturedTerminal = value;
  },
});
"""

# The terminal's visible rows as text, one line per row; null before the page made its terminal.
READ_SCREEN = """
(() => {
  const term = window.__capturedTerminal;
  if (!term) return null;
  const buffer = term.buffer.active, rows = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
})()
"""

# (key, code, windowsVirtualKeyCode) for the keys the tests press.
KEYS = {**{str(d): (str(d), f"Digit{d}", 48 + d) for d in range(10)},
        **{c: (c, f"Key{c.upper()}", ord(c.upper())) for c in "abcdefghijklmnopqrstuvwxyz"}}


class CdpError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium process on a private profile, with one page."""

    def __init__(self, profile_dir: Path, width: int = 1600, height: int = 1000) -> None:
        self.profile_dir = profile_dir
        self.size = (width, height)
        self.proc: subprocess.Popen[bytes] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self.console: list[str] = []

    @staticmethod
    def executable() -> str | None:
        return shutil.which("chromium")

    async def start(self, timeout_s: float = 30) -> None:
        exe = self.executable()
        assert exe is not None
        self.profile_dir.mkdir(parents=True, exist_ok=True)
        args = [exe, "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={self.profile_dir}",
                f"--window-size={self.size[0]},{self.size[1]}", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--enable-unsafe-swiftshader",  # software WebGL on a machine without a GPU
                # network only on loopback: any other name fails at once (the page asks Google for a web font)
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run its sandbox as root
        self.proc = subprocess.Popen([*args, "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        port_file = self.profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc.poll() is not None:
                raise CdpError(f"chromium exited with {self.proc.returncode} before it listened")
            if time.monotonic() > deadline:
                raise CdpError("chromium did not open its DevTools port")
            await asyncio.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        self._session = aiohttp.ClientSession()
        async with self._session.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json()
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = await self._session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        await self.call("Page.enable")
        await self.call("Runtime.enable")
        await self.call("Page.addScriptToEvaluateOnNewDocument", source=CAPTURE_TERMINAL)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept or dropped)."""
        assert self._ws is not None
        msg_id = next(self._ids)
        await self._ws.send_str(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            message = await self._ws.receive()
            if message.type != aiohttp.WSMsgType.TEXT:
                raise CdpError(f"DevTools connection ended during {method}: {message.type!r}")
            data = json.loads(message.data)
            if data.get("method") == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in data["params"]["args"]))
            if data.get("id") != msg_id:
                continue
            if "error" in data:
                raise CdpError(f"{method}: {data['error']}")
            return dict(data.get("result", {}))

    async def open(self, url: str) -> None:
        await self.call("Page.navigate", url=url)

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise CdpError(f"page error: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def screen(self) -> str:
        """The terminal's rows as text ("" until the page has made its terminal)."""
        return await self.evaluate(READ_SCREEN) or ""

    async def wait_for_screen(self, condition: Any, what: str, timeout_s: float = 60) -> str:
        """Poll the terminal until `condition(text)` holds; fail with the last screen if it never does."""
        deadline = time.monotonic() + timeout_s
        text = ""
        while time.monotonic() < deadline:
            text = await self.screen()
            if condition(text):
                return text
            await asyncio.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; the page's terminal showed:\n{text}")

    async def press(self, key: str) -> None:
        """A real key press on the focused terminal, as the keyboard would send it."""
        name, code, vk = KEYS[key]
        await self.evaluate("window.__capturedTerminal.focus()")
        await self.call("Input.dispatchKeyEvent", type="keyDown", key=name, code=code, text=name,
                        windowsVirtualKeyCode=vk)
        await self.call("Input.dispatchKeyEvent", type="keyUp", key=name, code=code, windowsVirtualKeyCode=vk)

    async def screenshot(self, path: Path) -> Path:
        data = await self.call("Page.captureScreenshot", format="png")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path

    async def close(self) -> None:
        """Close the connection and kill the browser (its whole process group, which it was started in)."""
        if self._ws is not None:
            await self._ws.close()
        if self._session is not None:
            await self._session.close()
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Chromium]:
    """A real headless Chromium with a private profile, closed after the test (skipped, or failed in CI, without it)."""
    from tests.conftest import require

    require(Chromium.executable() is not None, "chromium is not installed (apt-get install chromium)")
    chromium = Chromium(tmp_path / "chromium-profile")
    try:
        await chromium.start()
        yield chromium
    finally:
        await chromium.close()
