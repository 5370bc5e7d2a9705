"""SSH connection cut in the middle of an operation, against the real sshd + systemd lab.

The cut is real: the sshd child serving our connection is SIGKILLed by PID at a seeded random moment.
(A cut during a journal follow is covered in test_ssh_host.py: resumed without loss or repeat.)
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
from itertools import pairwise

import pytest

from specdec_tui.hosts.errors import HostError

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(120)]


def cut_connections(hostlab) -> int:
    pids = hostlab.session_pids()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(pids)


async def cut_after(hostlab, delay_s: float) -> None:
    await asyncio.sleep(delay_s)
    await asyncio.to_thread(cut_connections, hostlab)


def big_unit(base: str, n: int) -> str:
    """The lab's unit with ~1.5 MB of comments, so the upload takes long enough to be cut mid-way."""
    pad = "".join(f"# variant {n} line {i:06d} " + "x" * 60 + "\n" for i in range(20000))
    return base.replace("[Install]", f"{pad}[Install]")


async def test_a_push_cut_mid_way_leaves_the_old_unit_or_the_new_one_never_a_mix(make_ssh_host, hostlab, lab_service):
    rng = random.Random(5)
    host = make_ssh_host()
    current = (await host.read_unit()).encode()
    tried = {current}  # a command already running on the host when the link drops still completes
    outcomes: list[str] = []
    for n in range(5):
        new = big_unit(lab_service.text, n).encode()
        tried.add(new)
        cutter = asyncio.create_task(cut_after(hostlab, rng.uniform(0.0, 1.2)))
        try:
            await host.push(new.decode())
            outcomes.append("pushed")
        except HostError as err:
            assert "Traceback" not in str(err)
            assert "dropped" in str(err) or "failed" in str(err), str(err)
            outcomes.append("cut")
        await cutter
        on_host = lab_service.read_on_host()
        assert on_host in tried, f"round {n}: the unit on the host is a mix, not any text that was pushed"
        if outcomes[-1] == "pushed":
            assert on_host == new  # a push that returned is applied
        current = on_host
    assert "cut" in outcomes, f"no push was interrupted: {outcomes}"
    # An interrupted push leaves no duplicate backup behind, so a rollback always goes back to a different unit.
    backups = [hostlab.run(["cat", f"{host.history_dir}/{lab_service.unit}.{n}"]).stdout for n in await host.history()]
    assert all(a != b for a, b in pairwise(backups)), "two consecutive backups are the same unit"
    before = lab_service.read_on_host()  # read now: a rename already running at the last cut may have landed since
    if any(b.encode() != before for b in backups):
        restored = (await host.rollback()).encode()
        assert restored != before, "rollback restored a copy of the current unit"
        assert lab_service.read_on_host() == restored
    # The host object recovers: the next push over a fresh connection works.
    await host.push(lab_service.text_with(2))
    assert lab_service.read_on_host() == lab_service.text_with(2).encode()


async def test_a_restart_cut_mid_way_raises_in_words_and_status_tells_the_truth(make_ssh_host, hostlab, lab_service):
    rng = random.Random(11)
    host = make_ssh_host()
    await host.push(lab_service.text_with(4))
    errors: list[str] = []
    for _ in range(4):
        cutter = asyncio.create_task(cut_after(hostlab, rng.uniform(0.0, 0.6)))
        try:
            await host.restart()
        except HostError as err:
            errors.append(str(err))
        await cutter
        status = await host.status()  # reconnects by itself
        truth = hostlab.run(["systemctl", "show", "-p", "ActiveState", "-p", "MainPID", lab_service.unit]).stdout
        props = dict(line.split("=", 1) for line in truth.split())
        assert status.active_state == props["ActiveState"]
        assert (status.main_pid or 0) == int(props["MainPID"])
    assert errors, "no restart was interrupted"
    for text in errors:
        assert "dropped" in text or "lost" in text or "failed" in text, text
        assert "Traceback" not in text
