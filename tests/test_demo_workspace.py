"""The demo workspace and the host factory: the demo unit runs the real simulator under LocalHost."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import httpx
import pytest

from specdec_tui.core import paths
from specdec_tui.core.config import Config, HostConfig
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.errors import HostError
from specdec_tui.hosts.factory import open_host
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace

pytestmark = pytest.mark.timeout(60)
FAST = 50.0  # time scale: the simulated startup takes a fraction of a second


def test_a_new_workspace_holds_the_seed_like_unit_on_a_free_port(tmp_path: Path):
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=FAST)
    unit = UnitFile.parse(ws.unit_path.read_text())
    flags = unit.flags()
    assert unit.exec_start.argv[0] == sys.executable
    assert unit.exec_start.python_module == "specdec_tui.sim"
    assert flags["model-path"] == "Qwen/Qwen3.5-122B-A10B"
    assert flags["speculative-algorithm"] == "NEXTN" and flags["speculative-num-steps"] == "1"
    assert flags["port"] == str(ws.port) and flags["host"] == "127.0.0.1"
    assert float(flags["time-scale"] or 0) == FAST
    assert unit.get("Service", "Type") == "simple"
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3" in unit.get_all("Service", "Environment")
    assert ws.base_url == f"http://127.0.0.1:{ws.port}"


def test_rerunning_keeps_the_users_unit_edits(tmp_path: Path):
    ws = ensure_demo_workspace(tmp_path / "demo")
    edited = UnitFile.parse(ws.unit_path.read_text()).set_flag("speculative-num-steps", "3").text
    ws.unit_path.write_text(edited)
    again = ensure_demo_workspace(tmp_path / "demo")
    assert again.port == ws.port
    assert again.unit_path.read_text() == edited


def test_rerunning_repicks_the_port_when_something_else_listens_on_it(tmp_path: Path):
    ws = ensure_demo_workspace(tmp_path / "demo")
    before = ws.unit_path.read_text()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", ws.port))
        squatter.listen()
        again = ensure_demo_workspace(tmp_path / "demo")
    assert again.port != ws.port
    after = again.unit_path.read_text()
    assert after == before.replace(f"--port {ws.port}", f"--port {again.port}")


def test_demo_config_points_the_demo_host_at_the_workspace(tmp_path: Path):
    ws = ensure_demo_workspace(tmp_path / "demo")
    config = demo_config(ws)
    assert config.default_host == "demo"
    assert config.hosts["demo"].base_url == ws.base_url
    assert config.hosts["demo"].address == ""
    assert "default" in config.profiles


def test_factory_opens_the_demo_and_local_hosts_on_the_demo_workspace():
    host = open_host(Config(), None)
    assert isinstance(host, LocalHost) and host.info.name == "demo" and host.info.kind == "local"
    assert host.workspace == paths.demo_dir()
    local = open_host(Config(hosts={"bench-box": HostConfig(name="bench-box", address="local")}), "bench-box")
    assert isinstance(local, LocalHost) and local.info.name == "bench-box"


def test_factory_names_the_configured_hosts_for_an_unknown_name():
    config = Config(hosts={"llm-two": HostConfig(name="llm-two", address="llm-two.example")})
    with pytest.raises(HostError, match="configured: llm-two") as err:
        open_host(config, "llm-three")
    assert "--host" in err.value.hint


def test_factory_hands_ssh_hosts_to_sshhost():
    ssh = pytest.importorskip("specdec_tui.hosts.ssh.host")
    config = Config(hosts={"llm-two": HostConfig(name="llm-two", address="llm-two.example")})
    host = open_host(config, "llm-two")  # constructing it must not connect anywhere
    assert isinstance(host, ssh.SSHHost)


async def wait_for_message(host: LocalHost, text: str, after: str | None = None) -> str:
    async with asyncio.timeout(30):
        async for record in host.journal(after_cursor=after, follow=True):
            if text in record.message:
                return record.cursor
    raise AssertionError("journal ended")


async def server_steps(base_url: str) -> int:
    async with httpx.AsyncClient(timeout=5) as client:
        info = (await client.get(f"{base_url}/server_info")).json()
    return int(info["speculative_num_steps"])


async def test_the_demo_unit_runs_the_simulator_and_a_restart_applies_a_pushed_change(tmp_path: Path):
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=FAST)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, stop_timeout_s=5)
    try:
        first = await host.restart()
        assert first.ok and first.status.is_running
        ready = await wait_for_message(host, "The server is fired up and ready to roll!")
        assert await server_steps(ws.base_url) == 1

        pushed = UnitFile.parse(await host.read_unit()).set_flag("speculative-num-steps", "2")
        pushed = pushed.set_flag("speculative-num-draft-tokens", "3")
        await host.push(pushed.text)
        assert await server_steps(ws.base_url) == 1  # not restarted: the loaded unit still runs

        second = await host.restart()
        assert second.status.main_pid != first.status.main_pid
        await wait_for_message(host, "The server is fired up and ready to roll!", after=ready)
        assert await server_steps(ws.base_url) == 2
    finally:
        await host.close()
    with pytest.raises(ProcessLookupError):
        os.killpg(second.status.main_pid, 0)


async def test_a_flag_the_server_rejects_fails_the_unit_with_its_error_in_the_journal(tmp_path: Path):
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=FAST)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url)
    broken = UnitFile.parse(await host.read_unit()).set_flag("speculative-num-stepz", "4")
    await host.push(broken.text)
    try:
        await host.restart()
        await wait_for_message(host, "Failed with result 'exit-code'.")
        status = await host.status()
        assert status.is_failed and status.exec_main_status == 2  # argparse's usage error
        errors = [r async for r in host.journal(follow=False) if r.priority == 3]
        assert any("--speculative-num-stepz" in r.message for r in errors)
    finally:
        await host.close()


def test_a_unit_that_runs_this_python_is_told_without_the_unit_parser_and_others_are_parsed(tmp_path) -> None:
    """`--demo` checks its unit's program at every start; the common case (this Python) is read off the ExecStart=
    line, so the unit parser is not imported before the first frame. Any other program goes through the parser."""

    from specdec_tui.core.systemd_quote import quote_arg
    from specdec_tui.hosts.local.workspace import _runs_this_python, demo_unit_text, with_current_python

    text = demo_unit_text(30000, workdir=tmp_path)
    assert _runs_this_python(text) and with_current_python(text) == text
    gone = text.replace(quote_arg(sys.executable), str(tmp_path / "deleted-venv" / "bin" / "python3"), 1)
    assert not _runs_this_python(gone)
    assert with_current_python(gone) == text  # repaired: this Python again


def test_a_demo_unit_on_another_installs_python_runs_this_installs_simulator(tmp_path: Path) -> None:
    """A newcomer's fresh clone started the demo workspace a previous clone had made, and its unit still ran that
    clone's venv (it existed, so it was kept): the demo ran an older simulator than the code in front of them. The
    program is the tool's, not an edit: it becomes this Python, the flags as they were."""
    from specdec_tui.core.systemd_quote import quote_arg
    from specdec_tui.hosts.local.workspace import ensure_demo_workspace

    other = tmp_path / "old-clone" / ".venv" / "bin" / "python3"
    other.parent.mkdir(parents=True)
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    root = tmp_path / "demo"
    ws = ensure_demo_workspace(root)
    unit = ws.unit_path
    edited = unit.read_text().replace(quote_arg(sys.executable), str(other), 1).replace(
        "--speculative-num-steps 1", "--speculative-num-steps 4")
    assert str(other) in edited
    unit.write_text(edited)
    ensure_demo_workspace(root)
    now = unit.read_text()
    assert str(other) not in now and quote_arg(sys.executable) in now
    assert "--speculative-num-steps 4" in now  # the operator's edit kept


def test_the_demo_benchmarks_a_workload_to_tune_for_and_names_the_seeds_trap_beside_it(tmp_path: Path) -> None:
    """Issue 35 (12): the demo's default profile was one the tool itself flags as no tuning target (warnings on
    every demo run); the trap is a named profile beside a realistic default."""
    from specdec_tui.bench.validity import profile_sweep_warnings
    from specdec_tui.hosts.local.workspace import demo_config

    config = demo_config(ensure_demo_workspace(tmp_path / "ws"))
    assert config.profile().name == "demo" and profile_sweep_warnings(config.profile()) == []
    trap = config.profiles["seed-trap"]
    assert (trap.temperature, trap.ignore_eos, trap.prompts) == (0.0, True, "repetitive")
    assert profile_sweep_warnings(trap)


async def test_a_sessions_profile_is_the_one_its_trials_ran(tmp_path: Path) -> None:
    """Issue 35 (12): a panel's demo session said [profile] "default" while its trials ran "demo"."""
    from specdec_tui.core.session import Session
    from specdec_tui.hosts.local.host import LocalHost
    from specdec_tui.hosts.local.workspace import DEMO_PROFILE
    from specdec_tui.loop.trial import TrialLoop

    ws = ensure_demo_workspace(tmp_path / "ws")
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    runner = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name), profile=DEMO_PROFILE,
                       base_url=ws.base_url)
    assert runner.session.profile.name == "default"  # a fresh session, no trial yet
    runner.start_trial(await runner.read_running())
    assert runner.session.profile.name == "demo"
    await host.close()
