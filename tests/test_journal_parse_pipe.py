"""`specdec-tui host journal --host demo | specdec-tui journal parse -`: the two verbs as a shell pipes them.

`host journal` prints each message after its local time (`21:32:10 [2026-12-04 21:32:10 TP0] Decode batch, …`);
`journal parse` must read those lines as the SGLang lines they carry, not as unknown text."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from specdec_tui.core import paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.test_local_supervised import FAST, cli, wait_healthy

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def demo_ws():
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=FAST)
    yield ws
    cli("host", "stop", "--host", "demo")


def test_host_journal_piped_into_journal_parse_reads_sglang_records(demo_ws) -> None:
    assert cli("host", "restart", "--host", "demo").returncode == 0
    assert wait_healthy(demo_ws.base_url) == 200
    journal = cli("host", "journal", "--host", "demo", "-n", "200")
    assert journal.returncode == 0, journal.stderr
    startup = next(line for line in journal.stdout.splitlines() if "max_total_num_tokens=" in line)
    assert startup[:2].isdecimal() and startup[8:10] == " ["  # `HH:MM:SS [YYYY-…`: host journal's own stamp
    parsed = subprocess.run([sys.executable, "-m", "specdec_tui", "journal", "parse", "-"], input=journal.stdout,
                            capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert parsed.returncode == 0, parsed.stderr
    kinds = {line.split()[1] for line in parsed.stdout.splitlines() if line[:2].isdecimal() or line[:2] == "--"}
    assert {"startup_summary", "load_weight", "ready"} <= kinds
    summary = next(line for line in parsed.stdout.splitlines() if "max_total_num_tokens" in line.split()[:1])
    assert summary.split()[1].replace(",", "").isdecimal()  # the stats table's figure, not "-"
