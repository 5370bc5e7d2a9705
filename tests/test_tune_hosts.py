"""`specdec-tui tune` against real demo hosts (the simulated SGLang server on loopback, real HTTP): on three hosts
at once, resumed after the process is killed mid-launch, hosts put back as they were, and the adaptive-config
JSON it writes accepted by the simulator's own start-up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.core.session import load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import DemoWorkspace, ensure_demo_workspace

SPACE = ["--space", "speculative-num-steps=0,1,2,3,5", "--space", "speculative-eagle-topk=1,2"]
TUNE = [*SPACE, "--slo", "ttft_p99=2s", "--concurrency", "1,4", "--profile", "tiny"]


def write_config(tmp_path: Path, names: tuple[str, ...], time_scale: float = 25) -> tuple[Path, dict[str, DemoWorkspace]]:
    workspaces = {n: ensure_demo_workspace(tmp_path / n, time_scale=time_scale) for n in names}
    config = tmp_path / "config.toml"
    config.write_text('default_profile = "tiny"\n[profiles.tiny]\nconcurrency = [1, 4]\nrequests = 4\n'
                      'max_tokens = 32\ntemperature = 0.5\nprompts = "realistic"\n'
                      + "".join(f'[hosts.{n}]\naddress = "local"\nworkspace = "{ws.root}"\n'
                                for n, ws in workspaces.items()))
    return config, workspaces


def tagged(session: Path) -> list[tuple[str, str, str]]:
    """(point, status, host) of every tune trial in the session, in order."""
    return [(json.dumps(t.sweep["tune"]["point"], sort_keys=True), t.status, t.host)
            for t in load_session(session).trials if t.sweep.get("tune")]


def test_tune_on_three_hosts_at_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config, workspaces = write_config(tmp_path, ("a", "b", "c"))
    before = {n: ws.unit_path.read_bytes() for n, ws in workspaces.items()}
    session = tmp_path / "tune.toml"
    code = main(["tune", "--host", "a", "--host", "b", "--host", "c", "--config", str(config), *TUNE,
                 "--budget", "9", "--session", str(session), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out.splitlines()[-1])
    assert "on 3 hosts at once (a, b, c)" in err and "Traceback" not in err
    assert result["best"]["flags"]["speculative-num-steps"] in {"0", "1", "2", "3", "5"}
    assert result["objective"] > 0 and result["level"] in (1, 4)
    assert result["retried_failures"] == 0 and result["failed"] == []
    assert 1 <= result["launches"] <= 9
    assert [lv["concurrency"] for lv in result["schedule"]] == [1, 4]
    trials = tagged(session)
    assert len(trials) == result["launches"] and all(status == "ok" for _, status, _ in trials)
    # a point is launched twice only as a repeat of the best two, when they are within the noise
    assert len({p for p, _, _ in trials}) + err.count("(again)") == len(trials)
    assert {h for _, _, h in trials} == {"a", "b", "c"}  # every host launched
    for name in "abc":
        assert f"on {name}" in err
    # every host is back on the unit it ran before
    assert {n: ws.unit_path.read_bytes() for n, ws in workspaces.items()} == before
    # tier JSON written beside the session for --speculative-adaptive-config
    tiers = json.loads(Path(result["adaptive_config_file"]).read_text())
    assert tiers == result["adaptive_config"] and all("candidate_steps" in t for t in tiers.values())
    # ... and checked by one more launch: the simulator started with it and every level was measured
    check = result["adaptive_check"]
    assert check is not None and sorted(check["levels"]) == ["1", "4"], check
    adaptive = [t for t in load_session(session).trials if t.sweep.get("tune", {}).get("point") == {
        "speculative-adaptive": "on"}]
    assert len(adaptive) == 1 and adaptive[0].status == "ok"
    # the tiers went beside the unit of the host that ran the check (Host.upload), which the unit names
    checked = next(ws.unit_path.parent / "sglang-demo.adaptive-check.json" for n, ws in workspaces.items()
                   if n == adaptive[0].host)
    assert f"--speculative-adaptive-config {checked}" in adaptive[0].unit_text
    assert json.loads(checked.read_text()) == tiers
    assert (result["adaptive_shipped"] is not None) == check["ok"]


def test_tune_refuses_hosts_whose_units_differ(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config, workspaces = write_config(tmp_path, ("a", "b"))
    unit = workspaces["b"].unit_path
    unit.write_text(UnitFile.parse(unit.read_text()).set_flag("tp", "2").text)
    code = main(["tune", "--host", "a", "--host", "b", "--config", str(config), *TUNE])
    err = capsys.readouterr().err
    assert code == 1 and "host b's unit differs from a's in --tp-size: 4 on a, 2 on b" in err, err
    assert "Traceback" not in err


def _run_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "specdec_tui.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)


def test_a_tune_killed_mid_launch_resumes_without_repeating_its_launches(tmp_path: Path) -> None:
    config, workspaces = write_config(tmp_path, ("a",), time_scale=5)  # slow enough to be killed inside a launch
    before = workspaces["a"].unit_path.read_bytes()
    session = tmp_path / "tune.toml"
    args = ["tune", "--host", "a", "--config", str(config), *TUNE, "--budget", "6", "--session", str(session),
            "--json"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = _run_cli(args, env)
    assert first.stderr is not None
    seen = ""
    deadline = time.monotonic() + 300
    while "[3/" not in seen and time.monotonic() < deadline:  # two launches landed, the third has begun
        line = first.stderr.readline()
        if not line:
            break
        seen += line
    assert "[3/" in seen, seen
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    landed = [t for t in tagged(session) if t[1] in ("ok", "failed")]
    assert len(landed) == 2
    assert workspaces["a"].unit_path.read_bytes() != before  # the kill left the host on one of the tune's units

    second = subprocess.run([sys.executable, "-m", "specdec_tui.cli.main", *args], capture_output=True, text=True,
                            env=env, timeout=600)
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout.splitlines()[-1])
    assert "2 launch(es) resumed from the session" in second.stderr
    # each resumed launch listed as a new one is, with what it measured (it said "2 resumed" and no more)
    first_landed = [line for line in seen.splitlines() if line.startswith("  ") and not line.startswith("  ·")
                    and "best so far" not in line][:2]
    lines = second.stderr.splitlines()
    for number, line in enumerate(first_landed, 1):
        label = line.strip().split(":")[0].removesuffix(" on a")  # the landed line names its host
        header = f"[{number}/5] {label} (resumed from the session)"  # of 6: one kept to check the tiers
        assert header in lines, second.stderr
        at = lines.index(header)
        assert lines[at + 1] == line, (lines[at + 1], line)
    assert result["resumed"] == 2 and result["launches"] <= 6
    done = [t for t in tagged(session) if t[1] in ("ok", "failed")]
    assert len(done) == result["launches"]
    points = [p for p, _, _ in done]
    assert len(set(points)) == len(points)  # the two launches before the kill were not launched again
    assert [p for p, _, _ in done[:2]] == [p for p, _, _ in landed]
    # the host ends on the unit from before the first tune started, not on the killed launch's
    assert workspaces["a"].unit_path.read_bytes() == before
    assert "it will end on the unit recorded in the session when the tune started" in second.stderr


async def test_a_refused_capture_on_the_simulator_is_learned_as_a_region(tmp_path: Path) -> None:
    # At --mem-fraction-static 0.93 the simulated server's CUDA graphs for 2+ steps do not fit (sim.startup's memory
    # plan): the first such start fails with SGLang's own "Capture cuda graph failed", deeper ones are not launched.
    from specdec_tui.core.config import BenchProfile
    from specdec_tui.core.session import Session
    from specdec_tui.core.tune_objective import FailureKind, Slo, point_label
    from specdec_tui.hosts.local.host import LocalHost
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.loop.tune import TunePlan
    from specdec_tui.loop.tune_host import run_host_tune
    from specdec_tui.loop.tune_search import at_least_as_hungry

    ws = ensure_demo_workspace(tmp_path / "h", time_scale=25)
    profile = BenchProfile(name="tiny", concurrency=(1, 4), requests=4, max_tokens=32)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="h")
    runner = TrialLoop(host=host, session=Session(host="h", unit=ws.unit_name, profile=profile), profile=profile,
                       base_url=ws.base_url, session_path=tmp_path / "s.toml", healthy_timeout_s=120)
    space = {"speculative-num-steps": ("1", "2", "4", "5", "6", "7"), "mem-fraction-static": ("0.93",)}
    before = ws.unit_path.read_bytes()
    try:
        await host.connect()
        outcome = await run_host_tune([runner], TunePlan(space, (1, 4), Slo(ttft_p99_ms=5000.0), budget=6))
    finally:
        await host.close()
    failed = [r for r in outcome.results if r.failed]
    assert failed and all(r.failure_kind is FailureKind.CAPTURE for r in failed), [r.failure for r in failed]
    launched = [r.point for r in outcome.results]
    for i, point in enumerate(launched):  # nothing launched inside the region of a failure that came before it
        assert not any(at_least_as_hungry(point, f.point, f.failure_kind) for f in failed
                       if launched.index(f.point) < i and f.failure_kind is not None)
    assert outcome.retried_failures == 0
    # every deeper draft (which the simulator would refuse too) is predicted to fail and cost no launch
    spared = {dict(c.point)["speculative-num-steps"] for c, _ in outcome.predicted_failures}
    steps_launched = {dict(p)["speculative-num-steps"] for p in launched}
    assert spared | steps_launched == set(space["speculative-num-steps"]), [point_label(p) for p in launched]
    assert len(failed) <= 2 and all(int(s) >= 2 for s in spared), (spared, [point_label(p) for p in launched])
    assert ws.unit_path.read_bytes() == before


def test_a_tune_refuses_hosts_that_are_one_server_naming_them(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    """Issue 35 (6): rehearsal hosts without their own workspace are one demo unit; a tune on them would launch
    several candidates into that one unit at once."""
    config = tmp_path / "config.toml"
    config.write_text('default_profile = "tiny"\n[profiles.tiny]\nconcurrency = [1, 4]\nrequests = 4\n'
                      'max_tokens = 32\n' + "".join(f'[hosts.{n}]\naddress = "local"\n' for n in ("a", "b")))
    code = main(["tune", "--host", "a", "--host", "b", "--config", str(config), *TUNE, "--budget", "2",
                 "--session", str(tmp_path / "t.toml")])
    _, err = capsys.readouterr()
    assert code != 0 and "hosts a and b are one server" in err and "Traceback" not in err, err
