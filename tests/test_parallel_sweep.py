"""Sweeps on several hosts at once: local demo hosts, each with its own workspace and its own simulated SGLang
server, real HTTP, one session file; the one-host sweep of the same values is the anchor."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.config_file import load_config
from specdec_tui.core.session import Session, load_session
from specdec_tui.core.sweep_rules import choose
from specdec_tui.core.sweep_runs import separate_sweeps
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.factory import open_host
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import DemoWorkspace, ensure_demo_workspace
from specdec_tui.loop.parallel_sweep import UnitsDiffer, run_parallel_sweep, split_values
from specdec_tui.loop.same_server import refuse_same_server
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep import run_sweep
from specdec_tui.loop.sweep_plan import (
    OnHost,
    SweepError,
    SweepHostFailed,
    SweepPlan,
    SweepValueStarted,
    edit_for_value,
)
from specdec_tui.loop.trial import TrialLoop

STEPS = "speculative-num-steps"
# Ordinary text at temperature 0.5: the draft's acceptance (~0.7) makes steps=3 a clear peak of c=1 tok/s, so a
# shared, loaded machine's noise cannot decide the winner (greedy repetitive prompts plateau from steps 3 on).
PROFILE = BenchProfile(name="t", concurrency=(1, 4), requests=4, max_tokens=48, temperature=0.5, ignore_eos=True,
                       prompts="realistic", request_timeout_s=60, stall_timeout_s=30)
TIME_SCALE = 5.0  # the timed test: slow enough that the servers mostly wait (as on GPUs), not fight for 2 cores
FAST = 25.0  # the others
SIX = ("1", "2", "3", "4", "5", "6")


class Hosts:
    """Demo workspaces under one directory, and trial loops on them sharing one session file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspaces: dict[str, DemoWorkspace] = {}
        self.loops: list[TrialLoop] = []

    def make(self, names: tuple[str, ...], *, time_scale: float = FAST) -> list[TrialLoop]:
        session = Session(host=names[0], unit="sglang-demo.service", profile=PROFILE)
        path = self.root / f"{'-'.join(names)}.toml"
        loops = []
        for name in names:
            ws = self.workspaces[name] = ensure_demo_workspace(self.root / name, time_scale=time_scale)
            host = LocalHost(ws.root, ws.unit_name, ws.base_url, name=name)
            loops.append(TrialLoop(host=host, session=session, profile=PROFILE, base_url=ws.base_url,
                                   session_path=path, healthy_timeout_s=120))
        self.loops += loops
        return loops

    def unit_bytes(self, name: str) -> bytes:
        return self.workspaces[name].unit_path.read_bytes()


@pytest.fixture
async def hosts(tmp_path: Path) -> AsyncIterator[Hosts]:
    made = Hosts(tmp_path)
    try:
        yield made
    finally:
        for loop in made.loops:
            await loop.host.close()


def flags_of(text: str) -> dict[str, str | None]:
    return UnitFile.parse(text).flags()


async def test_three_hosts_pick_the_one_host_winner_faster_and_end_where_they_began(hosts: Hosts) -> None:
    # One value per host, two runs each: the three values are measured side by side under the same load. (The demo
    # hosts share this machine's 2 cores; with 1..6 the first round ran while the others started and, under a
    # loaded machine, measured up to 20% low — enough to move the winner. Real hosts share no CPU.)
    plan = SweepPlan(STEPS, ("2", "3", "4"), repeats=2, stop_after_worse=False)
    (solo,) = hosts.make(("solo",), time_scale=TIME_SCALE)
    started = time.monotonic()
    anchor = await run_sweep(solo, await solo.read_running(), plan)
    one_host_s = time.monotonic() - started

    loops = hosts.make(("a", "b", "c"), time_scale=TIME_SCALE)
    before = {name: hosts.unit_bytes(name) for name in "abc"}
    events: list[object] = []
    started = time.monotonic()
    outcome = await run_parallel_sweep(loops, plan, on_event=events.append)
    three_hosts_s = time.monotonic() - started

    # The same winner as the one-host sweep, chosen by the same rule over every host's trials.
    assert anchor.winner == outcome.winner == "3", (anchor.reasons, outcome.reasons)
    assert [p.value for p in outcome.curve] == ["2", "3", "4"]  # judged in plan order whatever host finished first
    speed_up = one_host_s / three_hosts_s
    assert speed_up >= 1.8, f"1 host {one_host_s:.1f} s, 3 hosts {three_hosts_s:.1f} s: {speed_up:.2f}×"

    # Round-robin, each host on its own server; progress names the host of every value.
    assert outcome.host_of_value == {"2": "a", "3": "b", "4": "c"}
    assert sorted((e.value, e.host) for e in events if isinstance(e, SweepValueStarted)) == sorted(
        outcome.host_of_value.items())
    assert {e.host for e in events if isinstance(e, OnHost)} == {"a", "b", "c"}

    # One session file holds every trial, each with its host, and the rule gives the same winner from it.
    saved = load_session(loops[0].session_path)
    assert sorted((t.sweep["value"], t.sweep["repeat"], t.host) for t in saved.trials) == sorted(
        (v, r, h) for v, h in outcome.host_of_value.items() for r in (1, 2))
    assert all(t.status == "ok" for t in saved.trials)
    assert len({t.id for t in saved.trials}) == 6
    assert choose(separate_sweeps(saved.trials)[0].by_value, plan.objective).winner.value == outcome.winner
    # Each host pushed its own unit (its own port): the value's edit of the unit it ran before.
    for t in saved.trials:
        assert t.unit_text == edit_for_value(before[t.host].decode(), STEPS, t.sweep["value"])

    # Not asked to apply: every host is back on the unit it started with, byte for byte, stopped as it was.
    assert outcome.left_on_by_host == {"a": "original", "b": "original", "c": "original"}
    assert outcome.left_on == "original" and not outcome.host_failures
    for loop in loops:
        assert hosts.unit_bytes(loop.host.info.name) == before[loop.host.info.name]
        assert not (await loop.host.status()).is_running


async def test_apply_best_leaves_every_host_on_the_winner(hosts: Hosts) -> None:
    loops = hosts.make(("a", "b", "c"))
    before = {name: hosts.unit_bytes(name).decode() for name in "abc"}
    plan = SweepPlan(STEPS, ("1", "2", "3", "4"), repeats=1, stop_after_worse=False, apply_best=True)
    outcome = await run_parallel_sweep(loops, plan)

    assert outcome.winner is not None
    assert outcome.left_on == "winner" and set(outcome.left_on_by_host.values()) == {"winner"}
    for loop in loops:
        name = loop.host.info.name
        now = hosts.unit_bytes(name).decode()
        assert now == edit_for_value(before[name], STEPS, outcome.winner) == outcome.final_unit_by_host[name]
        assert flags_of(now)["port"] == flags_of(before[name])["port"]  # the winner, on the host's own port
        assert (await loop.host.status()).active_state == "active"


async def test_units_that_differ_in_another_flag_are_refused_naming_flag_and_host(hosts: Hosts) -> None:
    loops = hosts.make(("a", "b", "c"))
    ws = hosts.workspaces["c"]
    ws.unit_path.write_text(UnitFile.parse(ws.unit_path.read_text()).set_flag("mem-fraction-static", "0.8").text)
    before = {name: hosts.unit_bytes(name) for name in "abc"}

    with pytest.raises(UnitsDiffer) as refused:
        await run_parallel_sweep(loops, SweepPlan(STEPS, SIX, repeats=1))
    assert str(refused.value).startswith("host c's unit differs from a's in --mem-fraction-static: 0.85 on a, 0.8 on c")
    assert {name: hosts.unit_bytes(name) for name in "abc"} == before  # nothing pushed
    assert loops[0].session.trials == []


async def test_units_that_differ_only_in_the_swept_flag_and_port_are_accepted(hosts: Hosts) -> None:
    loops = hosts.make(("a", "b"))
    ws = hosts.workspaces["b"]
    # b runs steps 2 (and the draft tokens that go with it), a runs steps 1; their ports differ too.
    ws.unit_path.write_text(UnitFile.parse(ws.unit_path.read_text()).set_flags(
        {STEPS: "2", "speculative-num-draft-tokens": "3"}).text)
    before = {name: hosts.unit_bytes(name) for name in "ab"}
    outcome = await run_parallel_sweep(loops, SweepPlan(STEPS, ("1", "3"), repeats=1))
    assert outcome.host_of_value == {"1": "a", "3": "b"} and outcome.winner == "3"
    assert {name: hosts.unit_bytes(name) for name in "ab"} == before


@pytest.fixture
def taken_port() -> Iterator[socket.socket]:
    """A listening socket: whatever server a host starts on its port cannot bind it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        yield sock


async def test_a_host_that_fails_is_reported_and_the_others_trials_are_kept(hosts: Hosts,
                                                                         taken_port: socket.socket) -> None:
    loops = hosts.make(("a", "b", "c"))
    ws = hosts.workspaces["c"]  # c's server cannot start at all: another process holds its port
    ws.unit_path.write_text(UnitFile.parse(ws.unit_path.read_text()).set_flag(
        "port", str(taken_port.getsockname()[1])).text)
    events: list[object] = []
    outcome = await run_parallel_sweep(loops, SweepPlan(STEPS, SIX, repeats=1, stop_after_worse=False),
                                       on_event=events.append)

    failed = [e for e in events if isinstance(e, SweepHostFailed)]
    assert [(e.host, e.values) for e in failed] == [("c", ("3", "6"))]
    assert outcome.host_failures.keys() == {"c"} and outcome.host_failures["c"] == failed[0].reason
    saved = load_session(loops[0].session_path)
    kept = {t.sweep["value"]: (t.host, t.status) for t in saved.trials}
    assert kept == {"1": ("a", "ok"), "4": ("a", "ok"), "2": ("b", "ok"), "5": ("b", "ok"), "3": ("c", "failed")}
    assert outcome.winner is not None and outcome.winner != "3"
    assert outcome.left_on_by_host["a"] == outcome.left_on_by_host["b"] == "original"


async def test_a_stop_is_judged_in_plan_order_and_later_values_are_not(hosts: Hosts) -> None:
    loops = hosts.make(("a", "b", "c"))
    plan = SweepPlan(STEPS, SIX, repeats=1, min_running_requests=20)  # steps 3: max_running_requests 17
    outcome = await run_parallel_sweep(loops, plan)

    assert outcome.stopped is not None and "fell to 17 at 3, below the floor of 20" in outcome.stopped
    assert [p.value for p in outcome.curve] == ["1", "2", "3"]  # what the one-host sweep would have judged
    ran_after = [v for v in ("4", "5", "6") if v in outcome.trials_by_value]
    assert outcome.past_stop == ran_after  # begun before the stop was known: kept, not judged
    assert all(s.value in ("1", "2", "3") for s in outcome.choice.stats)


async def test_a_cancelled_parallel_sweep_puts_every_host_back(hosts: Hosts) -> None:
    loops = hosts.make(("a", "b", "c"))
    before = {name: hosts.unit_bytes(name) for name in "abc"}
    task: asyncio.Task[object] | None = None

    def cancel_on_the_second_round(event: object) -> None:
        if isinstance(event, SweepValueStarted) and event.value == "4":
            assert task is not None
            task.cancel()

    task = asyncio.create_task(run_parallel_sweep(loops, SweepPlan(STEPS, SIX, repeats=1, stop_after_worse=False),
                                                  on_event=cancel_on_the_second_round))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert {name: hosts.unit_bytes(name) for name in "abc"} == before
    for loop in loops:
        assert not (await loop.host.status()).is_running  # none ran before the sweep
        assert loop.busy is Busy.IDLE
    saved = load_session(loops[0].session_path)
    assert {t.sweep["value"] for t in saved.trials} >= {"1", "4"}
    assert next(t for t in saved.trials if t.sweep["value"] == "4").status == "cancelled"


def test_split_is_round_robin() -> None:
    assert split_values(SIX, 3) == [("1", "4"), ("2", "5"), ("3", "6")]
    assert split_values(("1", "2"), 3) == [("1",), ("2",), ()]


# ---------------------------------------------------------------------------------------------- the command


def write_config(tmp_path: Path, names: tuple[str, ...]) -> tuple[Path, dict[str, DemoWorkspace]]:
    workspaces = {n: ensure_demo_workspace(tmp_path / n, time_scale=25) for n in names}
    config = tmp_path / "config.toml"
    config.write_text("".join(f'[hosts.{n}]\naddress = "local"\nworkspace = "{ws.root}"\n'
                              for n, ws in workspaces.items()))
    return config, workspaces


SMALL = ["--concurrency", "1,4", "--requests", "4", "--max-tokens", "32", "--repeats", "1"]


def test_sweep_command_on_three_hosts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config, workspaces = write_config(tmp_path, ("a", "b", "c"))
    before = {n: ws.unit_path.read_bytes() for n, ws in workspaces.items()}
    session = tmp_path / "sweep.toml"
    code = main(["sweep", "--host", "a", "--host", "b", "--host", "c", "--config", str(config), "--values", "1..3",
                 "--session", str(session), "--json", "--no-early-stop", *SMALL])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    trials, summary = lines[:-1], lines[-1]
    assert sorted((t["sweep"]["value"], t["host"]) for t in trials) == [("1", "a"), ("2", "b"), ("3", "c")]
    assert summary["host_of_value"] == {"1": "a", "2": "b", "3": "c"}
    assert summary["left_on_by_host"] == {"a": "original", "b": "original", "c": "original"}
    assert "on 3 hosts at once (a, b, c)" in err
    assert "[2/3] steps=2 on b" in err and "  · c: push" in err
    assert {t.host for t in load_session(session).trials} == {"a", "b", "c"}
    assert {n: ws.unit_path.read_bytes() for n, ws in workspaces.items()} == before


def test_sweep_command_refuses_hosts_whose_units_differ(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config, workspaces = write_config(tmp_path, ("a", "b"))
    unit = workspaces["b"].unit_path
    unit.write_text(UnitFile.parse(unit.read_text()).set_flag("tp", "2").text)
    before = {n: ws.unit_path.read_bytes() for n, ws in workspaces.items()}
    code = main(["sweep", "--host", "a", "--host", "b", "--config", str(config), "--values", "1..4", *SMALL])
    _, err = capsys.readouterr()
    assert code == 1
    assert "host b's unit differs from a's in --tp-size: 4 on a, 2 on b" in err, err  # --tp, by its canonical name
    assert "Traceback" not in err
    assert {n: ws.unit_path.read_bytes() for n, ws in workspaces.items()} == before  # nothing pushed
    code = main(["sweep", "--host", "a", "--host", "a", "--config", str(config), "--values", "1..4", *SMALL])
    assert code == 1 and "--host a is given twice" in capsys.readouterr().err


def test_rehearsal_hosts_sharing_the_demo_unit_are_refused_naming_them(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path) -> None:
    """Issue 35 (6): three rehearsal hosts without their own workspace are one demo unit; a sweep on them drove it
    three times at once and recorded trials measured on another value's server. A configured `unit` is the unit
    each runs (every one reported sglang-demo.service)."""
    config = tmp_path / "config.toml"
    config.write_text("".join(f'[hosts.{n}]\naddress = "local"\n' for n in ("a", "b", "c")))
    code = main(["sweep", "--host", "a", "--host", "b", "--host", "c", "--config", str(config), "--values", "1..3",
                 "--session", str(tmp_path / "s.toml"), *SMALL])
    _, err = capsys.readouterr()
    assert code == 1 and "hosts a, b and c are one server" in err and "sglang-demo.service" in err, err
    assert "Traceback" not in err and not (tmp_path / "s.toml").exists()
    config.write_text("".join(f'[hosts.{n}]\naddress = "local"\nunit = "sglang-{n}.service"\n' for n in ("a", "b")))
    opened = [open_host(load_config(config), n) for n in ("a", "b")]
    assert [h.info.unit for h in opened] == ["sglang-a.service", "sglang-b.service"]
    assert [Path(h.info.unit_path).name for h in opened] == ["sglang-a.service", "sglang-b.service"]
    refuse_same_server([(h.info.name, h.info) for h in opened])  # two units: two servers, not refused


async def test_the_panels_parallel_sweep_refuses_hosts_that_are_one_server(tmp_path: Path) -> None:
    """Issue 35 (6), the engine the panel's sweep screen runs (the CLI refuses before it): two names for one demo
    unit are refused naming them, before anything is pushed or recorded."""
    ws = ensure_demo_workspace(tmp_path / "shared", time_scale=FAST)
    session = Session(host="a", unit=ws.unit_name, profile=PROFILE)
    loops = [TrialLoop(host=LocalHost(ws.root, ws.unit_name, ws.base_url, name=n), session=session, profile=PROFILE,
                       base_url=ws.base_url, session_path=None, healthy_timeout_s=60) for n in ("a", "b")]
    before = ws.unit_path.read_bytes()
    with pytest.raises(SweepError) as refused:
        await run_parallel_sweep(loops, SweepPlan(STEPS, ("1", "2"), repeats=1))
    assert str(refused.value).startswith("hosts a and b are one server") and ws.unit_name in str(refused.value)
    assert ws.unit_path.read_bytes() == before and session.trials == []
