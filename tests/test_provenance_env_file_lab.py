"""EnvironmentFile= provenance over SSH on the lab host (a REAL sshd and systemd, tests/hostlab): a root-only
environment file is read through sudo for a trial, its behaviour-changing variables kept, its secrets not; an
absent one is recorded as such."""

from __future__ import annotations

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session, Trial
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.trial import TrialLoop
from tests.hostlab.lab import NOPASSWD_USER

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(120)]

ENV_PATH = "/run/specdec-provenance-test.env"  # /run is the lab's own: nothing of this machine is touched


async def test_a_root_only_env_file_is_read_over_ssh_for_the_trial(make_ssh_host, hostlab, lab_service):
    if hostlab.run(["sh", "-c", "command -v sudo"], check=False).returncode != 0:
        pytest.skip("sudo is not installed on this machine (listed in .ci/apt-packages.txt)")
    hostlab.run(["sh", "-c", f"umask 077; printf 'SGLANG_ENABLE_SPEC_V2=1\\nHF_TOKEN=hf_lab_secret\\n' > {ENV_PATH}"])
    try:
        host = make_ssh_host(user=NOPASSWD_USER, sudo=True)
        assert b"SGLANG_ENABLE_SPEC_V2=1" in await host.read_file(ENV_PATH)
        with pytest.raises(HostError, match="cannot read /run/absent.env on"):
            await host.read_file("/run/absent.env")
        unit = lab_service.text.replace("[Service]\n", f"[Service]\nEnvironmentFile={ENV_PATH}\n"
                                                      "EnvironmentFile=/run/absent.env\n")
        loop = TrialLoop(host=host, session=Session(host="lab", unit=lab_service.unit), profile=BenchProfile(),
                         base_url=lab_service.base_url)
        trial = Trial(id=1, unit_text=unit)
        await loop.read_env_files(trial)
        assert trial.file_env == {"SGLANG_ENABLE_SPEC_V2": "1"}
        assert trial.env_files[ENV_PATH] == "read"
        assert trial.env_files["/run/absent.env"].startswith("not read: cannot read /run/absent.env")
    finally:
        hostlab.run(["rm", "-f", ENV_PATH], check=False)
