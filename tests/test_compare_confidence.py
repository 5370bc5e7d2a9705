"""Compare with confidence (issue 33): `session compare` names a winner per level only when the bootstrap
intervals over requests separate, else "no clear difference" and how many requests would tell — on levels
measured against real truth servers of known speed."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, save_session
from tests.truth_server import TruthServer

PROFILE = BenchProfile(concurrency=(4,), requests=40, warmup=0, max_tokens=12)


async def _levels(tmp_path: Path, scale: float) -> list[LevelResult]:
    """Requests whose token gaps vary by prompt (4-16 ms times `scale`: tens of ms, so loop jitter is small beside
    them): a spread within the run, as real requests have, so the interval is not a needle that the machine's load
    from one run to the next could move."""
    f = tmp_path / f"gaps{scale}.jsonl"
    f.write_text("".join(json.dumps({"prompt": f"gap={g * scale:g}"}) + "\n" for g in (4, 6, 8, 10, 12, 14, 16, 5)))
    events: list[BenchEvent] = []
    async with TruthServer() as s:
        await drive_benchmark(s.url, dataclasses.replace(PROFILE, workload=str(f)), events.append)
    done = events[-1]
    assert isinstance(done, RunDone) and done.error is None
    return done.levels


def _compare(tmp_path: Path, a: list[LevelResult], b: list[LevelResult], name: str) -> str:
    session = Session(host="h", unit="u", trials=[Trial(id=1, unit_text="x", levels=a, status="ok"),
                                                   Trial(id=2, unit_text="x", levels=b, status="ok")])
    path = tmp_path / f"{name}.toml"  # a file of its own: a save merges the trials a file already holds
    save_session(session, path)
    out = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "compare", str(path), "1", "2"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    return " ".join(out.stdout.split())


async def test_a_clearly_faster_server_wins_and_equal_ones_do_not(tmp_path: Path) -> None:
    slow, fast, fast_again = await _levels(tmp_path, 8.0), await _levels(tmp_path, 4.0), await _levels(tmp_path, 4.0)
    assert len(slow[0].tok_s_samples) == 40
    text = _compare(tmp_path, slow, fast, "slow-fast")
    assert "c=4: per-request tok/s A" in text and "B is better than A (95 % intervals separate)" in text
    text = _compare(tmp_path, fast, fast_again, "fast-fast")
    assert "B is better" not in text and "A is better" not in text
    assert "no clear difference" in text
