"""The panel process SIGKILLed at any moment: nothing finished is lost, nothing half-written is left.

A child process drives `TrialRunner` on the demo host (trial after trial, resuming the same session file)
and prints `FINISHED <id> <status>` after each trial returns. The test kills it at seeded random points
across several runs, then loads the session: it must parse, and hold every trial the child reported.
Unpushed edits are kept as drafts: a child saving drafts in a loop is killed and the draft must be one
of the texts it wrote, whole.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from specdec_tui.core.drafts import load_draft
from specdec_tui.core.session import load_session

REPO = Path(__file__).resolve().parents[1]

DRIVER = r"""
import asyncio, sys
from pathlib import Path
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session, load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.loop.trial import TrialRunner

PROFILE = BenchProfile(name="k", concurrency=(1, 2), requests=2, max_tokens=16, temperature=0.0,
                       ignore_eos=True, prompts="repetitive", warmup=0)

async def main():
    ws = ensure_demo_workspace(Path(sys.argv[1]), time_scale=60)
    path = Path(sys.argv[2])
    session = load_session(path) if path.exists() else Session(host="demo", unit=ws.unit_name, profile=PROFILE)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    runner = TrialRunner(host=host, session=session, profile=PROFILE, base_url=ws.base_url,
                         session_path=path, healthy_timeout_s=30)
    base = await runner.read_running()
    print("STARTED", flush=True)
    for i in range(100):
        text = UnitFile.parse(base).set_flags({"speculative-num-steps": str(1 + i % 3),
                                               "speculative-num-draft-tokens": str(2 + i % 3)}).text
        trial = await runner.run_trial(text)
        print("FINISHED", trial.id, trial.status, len(trial.levels), flush=True)

asyncio.run(main())
"""

DRAFTER = r"""
import sys
from specdec_tui.core.drafts import save_draft
print("STARTED", flush=True)
i = 0
while True:
    save_draft("demo", "sglang-demo.service", f"[Service]\nExecStart=/bin/sim --step {i}\n" + "# pad\n" * (i % 500))
    i += 1
"""


def read_lines_until_killed(proc: subprocess.Popen, delay_s: float) -> list[str]:
    """Wait for the child to start, let it work for `delay_s`, SIGKILL it, return everything it printed."""
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.strip() == "STARTED", first + (proc.stderr.read() if proc.stderr else "")
    time.sleep(delay_s)  # where the kill lands; the assertions below do not depend on timing
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=20)
    return out.splitlines()


def test_sigkill_at_random_points_never_loses_a_finished_trial(tmp_path: Path) -> None:
    rng = random.Random(8)
    session_path = tmp_path / "session.toml"
    finished: dict[int, tuple[str, int]] = {}
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path / "ws"), str(session_path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        for line in read_lines_until_killed(proc, rng.uniform(0.0, 2.5)):
            if line.startswith("FINISHED"):
                _, tid, status, n_levels = line.split()
                finished[int(tid)] = (status, int(n_levels))
        if not session_path.exists():
            assert not finished, "trials were reported finished but no session file exists"
            continue
        session = load_session(session_path)  # never a half-written file
        saved = {t.id: t for t in session.trials}
        for tid, (status, n_levels) in finished.items():
            assert tid in saved, f"finished trial {tid} missing from the session"
            assert saved[tid].status == status
            assert len(saved[tid].levels) == n_levels
        assert [t.id for t in session.trials] == sorted(saved)  # resumed runs append, ids never reused
    assert len(finished) >= 2, "too few runs finished a trial; the kill points are too early"


def test_sigkill_while_saving_drafts_leaves_a_whole_draft(tmp_path: Path) -> None:
    rng = random.Random(3)
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", DRAFTER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=REPO)
        read_lines_until_killed(proc, rng.uniform(0.05, 0.4))
        text = load_draft("demo", "sglang-demo.service")
        assert text is not None
        head = text.partition("\n# pad")[0]
        step = int(head.split("--step ")[1])
        assert text == f"[Service]\nExecStart=/bin/sim --step {step}\n" + "# pad\n" * (step % 500)
