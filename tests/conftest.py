"""Shared fixtures: every test gets private config/data dirs so nothing touches the user's files."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.trial import TrialLoop
from tests.test_sim_support import SimProcess

# The real sshd + systemd test host (tests/hostlab): session-scoped fixtures `hostlab`, `lab_service`, ...
pytest_plugins = ["tests.hostlab.fixtures", "tests.tmux_session", "tests.cdp_browser"]

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(autouse=True)
def private_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path_factory.mktemp("specdec-home")
    monkeypatch.setenv("SPECDEC_TUI_DATA_DIR", str(root / "data"))
    monkeypatch.setenv("SPECDEC_TUI_CONFIG_DIR", str(root / "config"))
    monkeypatch.delenv("SPECDEC_TUI_CONFIG", raising=False)
    return root


def require(condition: bool, reason: str) -> None:
    """Skip when a system facility is missing — but in CI (CI=true) a missing facility is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI requires it: {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def stop_leftover_services(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test that had a temporary directory: the demo services it left running there are stopped
    (`tests/leftover_services.py`: a host that keeps its service running, as a real one does, outlived pytest)."""
    yield
    tmp = request.node.funcargs.get("tmp_path")
    if isinstance(tmp, Path):
        from tests.leftover_services import stop_supervisors, supervisors_under

        stop_supervisors(supervisors_under(tmp))


# A small benchmark profile for trials on the demo host: two levels, a few short requests.
DEMO_TEST_PROFILE = BenchProfile(name="t", concurrency=(1, 4), requests=4, max_tokens=48, temperature=0.0,
                                 ignore_eos=True, prompts="repetitive", request_timeout_s=30, stall_timeout_s=10)


@pytest.fixture
async def demo_runner(tmp_path: Path) -> AsyncIterator[TrialLoop]:
    """A TrialLoop on a private demo host (the real simulator, 25× faster) with a session file."""
    ws = ensure_demo_workspace(tmp_path / "ws", time_scale=25)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    session = Session(host="demo", unit=ws.unit_name, profile=DEMO_TEST_PROFILE)
    runner = TrialLoop(host=host, session=session, profile=DEMO_TEST_PROFILE, base_url=ws.base_url,
                         session_path=tmp_path / "session.toml", healthy_timeout_s=60)
    try:
        yield runner
    finally:
        await host.close()


@pytest.fixture
def sim() -> Iterator[Callable[..., SimProcess]]:
    """`sim(*args)` starts `python -m specdec_tui.sim ARGS` as a real process on loopback; each is stopped after."""
    procs: list[SimProcess] = []

    def start(*args: str) -> SimProcess:
        p = SimProcess(list(args)).start()
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.stop()
