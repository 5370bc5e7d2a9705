"""A tune on the real lab host (sshd + systemd, the simulated SGLang server as its unit): the adaptive tiers are
uploaded beside the unit over SSH (`Host.upload`), the check launch runs there with the unit naming that file,
and the tiers are shipped beside the unit only when the check holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session
from specdec_tui.core.tune_objective import Slo
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.tune import TunePlan
from specdec_tui.loop.tune_host import run_host_tune
from tests.hostlab.fixtures import UNIT

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(400)]

PROFILE = BenchProfile(name="t", concurrency=(1, 4), requests=4, max_tokens=48, prompts="repetitive", warmup=0,
                       temperature=0.0, ignore_eos=True)
UNIT_DIR = "/etc/systemd/system"


async def test_upload_writes_beside_the_unit_and_refuses_a_unit_name(lab_service, make_ssh_host) -> None:
    host = make_ssh_host()
    path = await host.upload("specdec-lab.notes.json", b'{"a": 1}\n')
    assert path == f"{UNIT_DIR}/specdec-lab.notes.json"
    assert lab_service.read_on_host(path) == b'{"a": 1}\n'
    assert await host.upload("specdec-lab.notes.json", b"{}\n") == path  # replaced whole
    assert lab_service.read_on_host(path) == b"{}\n"
    assert lab_service.lab.run(["ls", "-A", f"{UNIT_DIR}/.specdec/new"]).stdout == ""  # nothing left staged
    for bad in ("evil.service", "../x.json", ".hidden", "a/b.json"):
        with pytest.raises(HostError, match="was not uploaded"):
            await host.upload(bad, b"{}")
    lab_service.lab.run(["rm", "-f", path])


async def test_a_tune_over_ssh_checks_its_tiers_beside_the_unit_and_ships_them_only_if_they_hold(
        lab_service, make_ssh_host, tmp_path: Path) -> None:
    host = make_ssh_host(base_url=lab_service.base_url)
    before = lab_service.read_on_host()
    session = Session(host="lab", unit=UNIT, profile=PROFILE)
    runner = TrialLoop(host=host, session=session, profile=PROFILE, base_url=lab_service.base_url,
                       session_path=tmp_path / "s.toml", healthy_timeout_s=120)
    plan = TunePlan({"speculative-num-steps": ("0", "3")}, PROFILE.concurrency, Slo(ttft_p99_ms=60000), budget=3)
    outcome = await run_host_tune([runner], plan, adaptive_file=tmp_path / "s.adaptive.json")

    assert outcome.adaptive is not None and outcome.adaptive_check is not None, outcome.adaptive_note
    tiers = outcome.adaptive.to_json()
    checked = f"{UNIT_DIR}/specdec-lab.adaptive-check.json"
    assert json.loads(lab_service.read_on_host(checked)) == tiers  # the file landed on the lab host
    adaptive = [t for t in session.trials if t.sweep.get("tune", {}).get("point") == {"speculative-adaptive": "on"}]
    assert len(adaptive) == 1 and adaptive[0].status == "ok", adaptive  # the server read it and served every level
    assert f"--speculative-adaptive-config {checked}" in adaptive[0].unit_text
    assert [lv.concurrency for lv in adaptive[0].levels] == [1, 4]
    assert "--speculative-adaptive" in adaptive[0].unit_text and outcome.launches == 3
    shipped = f"{UNIT_DIR}/specdec-lab.adaptive.json"
    on_host = lab_service.lab.run(["cat", shipped], check=False)
    if outcome.adaptive_check.ok:
        assert outcome.adaptive_shipped == {"lab": shipped}
        assert json.loads(on_host.stdout) == tiers
    else:  # a collapse ships nothing
        assert outcome.adaptive_shipped == {} and on_host.returncode != 0
    assert lab_service.read_on_host() == before  # the host ends on the unit it ran before
    lab_service.lab.run(["rm", "-f", checked, shipped])
