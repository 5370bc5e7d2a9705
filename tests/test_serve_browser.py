"""`specdec-tui serve --demo` in a real headless Chromium: the page loads, the panel draws, keys pressed in the
browser start a benchmark on the demo host and the table fills; stopping `serve` ends the panel and the demo's
simulated server. Screenshots are kept in test-artifacts/serve-browser/ (the test prints their paths)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from specdec_tui.core import paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace, free_port
from tests.cdp_browser import Chromium
from tests.proc_helpers import group_alive, running
from tests.tmux_session import program

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "serve-browser"
# serve's stop: the panel quits, then stops the simulated server (which gets up to 10 s itself to stop).
STOP_TIMEOUT_S = 15
# The c=1 row of the bench table once its level is done: "  1   2,258     –  –   2,472 … ━━━━━━━━ 100%"
C1_DONE = re.compile(r"^\s*1\s+(?P<tok_s>\d[\d,]*(?:\.\d+)?)\s.*\s100%", re.MULTILINE)



def service_pids(workspace: Path) -> tuple[int | None, int | None]:
    """(main pid, process group) of the demo's simulated server, from the local host's run file."""
    for run_file in (workspace / "run").glob("*.json"):
        data = json.loads(run_file.read_text())
        return data.get("main_pid") or None, data.get("pgid") or None
    return None, None


def printed_url(proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 30) -> str:
    """The page URL serve prints, with this start's token."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if match := re.search(r"(http://\S+/\?token=\S+)", log.read_text(errors="replace")):
            return match[1]
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"serve printed no URL with a token:\n{log.read_text(errors='replace')}")


def wait_until_serving(proc: subprocess.Popen[bytes], url: str, log: Path, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"serve did not answer on {url}:\n{log.read_text(errors='replace')}")


async def test_the_demo_panel_in_a_browser_benchmarks_and_stops_with_serve(browser: Chromium, tmp_path: Path) -> None:
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)  # the workspace the served panel will open
    port = free_port()
    log = tmp_path / "serve.log"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # the browser sets the size
    with log.open("wb") as out:
        serve = subprocess.Popen([*program(), "serve", "--demo", "--port", str(port)], stdout=out,
                                 stderr=subprocess.STDOUT, env=env, start_new_session=True)
    main_pid = pgid = None
    try:
        url = printed_url(serve, log)
        wait_until_serving(serve, url, log)
        await browser.open(url)
        first = await browser.wait_for_screen(lambda s: "specdec-tui — demo" in s and "4 Bench" in s,
                                              "the panel's first frame in the page")
        assert "1 Config" in first and "2 Journal" in first and "Traceback" not in first
        print(f"screenshot: {await browser.screenshot(ARTIFACTS / '1-panel.png')}")

        await browser.press("4")
        await browser.wait_for_screen(lambda s: "No benchmark yet" in s and "READY" in s,
                                      "the Bench tab with the demo server READY")
        main_pid, pgid = service_pids(ws.root)
        assert running(main_pid), "the panel in the browser did not start the demo's simulated server"

        await browser.press("b")
        screen = await browser.wait_for_screen(lambda s: C1_DONE.search(s) is not None, "the c=1 row to fill",
                                               timeout_s=120)
        match = C1_DONE.search(screen)
        assert match is not None and float(match["tok_s"].replace(",", "")) > 0, screen
        print(f"screenshot: {await browser.screenshot(ARTIFACTS / '2-bench.png')}")

        # Stopping serve (Ctrl+C, SIGTERM) with the tab still open quits that tab's panel at once, and the panel
        # stops the simulated server. (Left to aiohttp's shutdown, the open session held serve for 23 s here.)
        serve.send_signal(signal.SIGTERM)
        try:
            code = serve.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"serve still ran {STOP_TIMEOUT_S} s after SIGTERM") from None
        assert code == 0, log.read_text(errors="replace")
        deadline = time.monotonic() + 15
        while (running(main_pid) or group_alive(serve.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not group_alive(serve.pid), "a panel process outlived serve"
        assert not running(main_pid), "the demo's simulated server outlived serve"
        assert await browser.evaluate("document.body.classList.contains('-closed')"), "the page did not show the session ended"
    finally:
        if browser.proc is not None and browser.proc.poll() is None:
            try:
                print(f"screenshot: {await browser.screenshot(ARTIFACTS / '3-last.png')}")
            except Exception as err:  # a dead page must not hide the test's own failure
                print(f"no last screenshot: {err}")
        if group_alive(serve.pid):
            os.killpg(serve.pid, signal.SIGKILL)
        serve.wait(timeout=10)
        for group in {pgid, service_pids(ws.root)[1]}:
            if group and group_alive(group):
                os.killpg(group, signal.SIGKILL)
