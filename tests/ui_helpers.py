"""Helpers for the app-shell Pilot tests: apps on the demo workspace or an offline session."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from textual.app import App
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.widgets import Input

from specdec_tui.core.config import BenchProfile, Config, UIConfig
from specdec_tui.core.session import Session, Trial
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import (
    demo_config,
    demo_unit_text,
    ensure_demo_workspace,
)
from specdec_tui.loop.states import Busy
from specdec_tui.ui.app import SpecdecApp, make_app

if TYPE_CHECKING:
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.ui.screens.tune_screen import TuneScreen

FAST_PROFILE = BenchProfile(concurrency=(1, 4), requests=4, warmup=0, max_tokens=16)
# A fixed unit for offline screens: no ports, no PIDs, no paths that vary between machines.
OFFLINE_UNIT = demo_unit_text(30000, time_scale=1.0).replace(demo_unit_text(30000).split("ExecStart=")[1].split(" ")[0], "/usr/bin/python3")


def offline_app(*, theme: str = "specdec-dark", trials: list[Trial] | None = None) -> SpecdecApp:
    session = Session(host="demo", unit="sglang-demo.service", trials=trials or [Trial(id=1, unit_text=OFFLINE_UNIT, label="base")])
    return make_app(Config(ui=UIConfig(theme=theme)), None, session, session_path=None)


def demo_app(root: Path, *, time_scale: float = 200.0, ui: UIConfig | None = None, source: str | None = None,
             session_path: Path | None = None) -> SpecdecApp:
    ws = ensure_demo_workspace(root / "demo", time_scale=time_scale)
    base = demo_config(ws)
    config = Config(hosts=base.hosts, profiles={"default": FAST_PROFILE}, default_host=base.default_host,
                    ui=ui or UIConfig(), source=source)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    session = Session(host="demo", unit=ws.unit_name, profile=FAST_PROFILE)
    return make_app(config, host, session, session_path=session_path)


async def wait_for(pilot: Pilot, condition: Callable[[], bool], what: str, steps: int = 600) -> None:
    """Let the app run until `condition` holds (event-driven polling; fails with `what` if it never does)."""
    for _ in range(steps):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def started(pilot: Pilot) -> None:
    """Let the panel finish its start: the first frame shows the unit as text, then the Config pane replaces it
    and the other tabs are mounted (MainScreen's start sequence). Tests that read those widgets begin here."""
    app = pilot.app
    if isinstance(app, SpecdecApp):
        await wait_for(pilot, lambda: app.main_or_none is not None and app.main.tabs_mounted, "the panel's start")


async def demo_ready(pilot: Pilot, seen: list[str]) -> None:
    """The demo panel started and its server healthy (the demo starts its service by itself); `seen` is
    `record_notifications(app)`."""
    app = pilot.app
    await started(pilot)
    await wait_for(pilot, lambda: isinstance(app, SpecdecApp) and app.busy is Busy.IDLE
                   and any(n.startswith("Server is healthy") for n in seen), "the demo start", steps=1200)


async def demo_idle(pilot: Pilot, steps: int = 1200) -> None:
    """The demo panel started, its unit read into the form, its server ready and its trial loop idle: where a
    test that drives the loop itself (a sweep, a replay, a rate search pushed as a screen) begins."""
    app = pilot.app
    assert isinstance(app, SpecdecApp)
    await started(pilot)
    await wait_for(pilot, lambda: app.config_pane.running_text != "" and app.trial_loop is not None
                   and app.trial_loop.busy is Busy.IDLE and app.health is not None and app.health.state == "ready",
                   "the demo start to end", steps=steps)


def demo_unit_file(root: Path) -> Path:
    """The unit file of `demo_app(root)`'s host: what another terminal (or the test) reads and writes."""
    return root / "demo" / "units" / "sglang-demo.service"


def footer_text(app: SpecdecApp) -> str:
    """The keys the footer offers now, as drawn."""
    return " ".join(str(key.render()) for key in app.screen.query("FooterKey"))


def record_notifications(app: SpecdecApp) -> list[str]:
    """Every notification text the app shows from now on (wraps the public `App.notify`)."""
    seen: list[str] = []
    original = app.notify

    def notify(message: str, *args: object, **kwargs: object) -> None:
        seen.append(str(message))
        original(message, *args, **kwargs)  # type: ignore[arg-type]

    app.notify = notify  # type: ignore[method-assign]
    return seen


def applied_as(screen: object) -> str:
    """How a sweep screen names the value it applied: "winner" when the intervals separated it from the runner-up,
    "pick" when it showed no clear difference (issue 33)."""
    outcome = screen.outcome  # type: ignore[attr-defined]
    return "winner" if outcome is None or outcome.choice is None or outcome.choice.clear else "pick"


async def start_tune(pilot: Pilot, app: SpecdecApp, space: str, slo: str, budget: str, *,
                     hosts: str | None = None) -> TuneScreen:
    """T, the form filled (space, SLO, budget, and the hosts field when given), enter: the Tune screen, its search
    started."""
    from specdec_tui.ui.screens.tune_screen import TuneScreen  # with the tests that tune, not every Pilot test

    await pilot.press("T")
    await wait_for(pilot, lambda: isinstance(app.screen, TuneScreen), "the Tune screen")
    screen = app.screen
    assert isinstance(screen, TuneScreen)
    fields = {"#tune-space": space, "#tune-slo": slo, "#tune-budget": budget}
    if hosts is not None:
        fields["#tune-hosts"] = hosts
    for field, value in fields.items():
        screen.query_one(field, Input).value = value
    screen.query_one("#tune-space", Input).focus()
    await pilot.press("enter")
    return screen


@contextmanager
def restyled_ids(app: App[Any]) -> Iterator[list[str]]:
    """The ids of every node the app's stylesheet restyles meanwhile (through its public `update_nodes`)."""
    seen: list[str] = []
    update_nodes = app.stylesheet.update_nodes

    def counted(nodes: Iterable[DOMNode], animate: bool = False) -> None:
        nodes = list(nodes)
        seen.extend(str(node.id) for node in nodes)
        update_nodes(nodes, animate=animate)

    app.stylesheet.update_nodes = counted  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        app.stylesheet.update_nodes = update_nodes  # type: ignore[method-assign]


@contextmanager
def cells_rendered(app: App[Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every renderable the app's console renders to lines meanwhile (a table's cells go through it, one a call)."""
    seen: list[object] = []
    render_lines: Callable[..., Any] = app.console.render_lines

    def counted(renderable: object, *args: Any, **kwargs: Any) -> Any:
        seen.append(renderable)
        return render_lines(renderable, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(app.console, "render_lines", counted)
        yield seen


def hold_unit_read(loop: TrialLoop) -> asyncio.Event:
    """The host slow to answer: `loop`'s next reads of the running unit wait until the returned event is set."""
    release = asyncio.Event()
    read_running = loop.read_running

    async def slow_read() -> str:
        await release.wait()
        return await read_running()

    loop.read_running = slow_read  # type: ignore[method-assign]
    return release
