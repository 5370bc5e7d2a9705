"""Issue 36, point 6: the link drops during the post-login probe (`id -u`, `sudo -n true`) of a verb's connect:
the verb fails in words with a non-zero exit, never exits 0 without having done its work. Against the real sshd +
systemd lab; the cut is real (the sshd child serving the connection is SIGKILLed right after login)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from specdec_tui.cli import host_cmd
from specdec_tui.hosts.errors import HostError

from .test_faults_ssh import cut_connections

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(180)]


def cut_after_login(host, hostlab) -> list[int]:
    """Every connection the host opens from now on is cut right after its login, before the probe; returns a
    list that counts the cuts."""
    opened = host.connector.open
    cuts: list[int] = []

    async def open_then_cut():
        conn = await opened()
        if not cuts:  # the first connection only: a reconnect afterwards may work
            cuts.append(await asyncio.to_thread(cut_connections, hostlab))
        return conn

    host.connector.open = open_then_cut
    return cuts


@pytest.mark.parametrize("verb", ["push", "status", "cat"])
async def test_a_cut_during_the_post_login_probe_is_an_error_in_words_or_the_verb_done(
        make_ssh_host, hostlab, lab_service, tmp_path: Path, verb: str) -> None:
    host = make_ssh_host()
    before = lab_service.read_on_host()
    new = lab_service.text_with(7)
    unit_file = tmp_path / "unit.service"
    unit_file.write_text(new)
    cuts = cut_after_login(host, hostlab)
    args = argparse.Namespace(file=str(unit_file))
    target = host_cmd.Target("lab", None)
    try:
        code = await host_cmd._with_host(host, args, target, host_cmd.HANDLERS[verb])
    except HostError as err:
        assert "dropped right after login" in str(err) and "Traceback" not in str(err), err
        code = None
    assert cuts and cuts[0] >= 1
    if verb == "push":
        on_host = lab_service.read_on_host()
        if code == 0:
            assert on_host == new.encode(), "push exited 0 but the host has the old unit"
        else:
            assert on_host in (before, new.encode())
