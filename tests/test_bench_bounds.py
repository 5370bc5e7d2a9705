"""Issue 36, points 9–11: nothing a server does makes `bench --url` wait for ever or grow without bound, and an
impossible --concurrency is refused in words. Real misbehaving HTTP servers on 127.0.0.1, the real CLI."""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys

import pytest

from specdec_tui.core.config import MAX_CONCURRENCY
from tests.bench_servers import RunningServer, ServerSpec

pytestmark = pytest.mark.timeout(120)


async def bench_process(*argv: str) -> tuple[int, str, str, resource.struct_rusage]:
    """`specdec-tui bench ARGV` to its end: exit code, stdout, stderr and that process's own resource use."""
    proc = subprocess.Popen([sys.executable, "-m", "specdec_tui", "bench", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})
    out_task = asyncio.create_task(asyncio.to_thread(proc.stdout.read))  # type: ignore[union-attr]
    err_task = asyncio.create_task(asyncio.to_thread(proc.stderr.read))  # type: ignore[union-attr]
    try:
        _, status, usage = await asyncio.wait_for(asyncio.to_thread(os.wait4, proc.pid, 0), timeout=90)
    except TimeoutError:
        proc.kill()
        proc.wait()
        pytest.fail(f"bench {' '.join(argv)} was still running after 90 s")
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, await out_task, await err_task, usage


async def test_a_health_answering_one_byte_a_second_does_not_hang_bench() -> None:
    async with RunningServer(ServerSpec(health_drip=True, delay_s=0.002)) as srv:
        code, out, err, _ = await bench_process("--url", srv.base_url, "--concurrency", "1", "--requests", "2",
                                                "--max-tokens", "8")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.strip("│ ").startswith("1 "))
    assert row.split("│")[2:4] == ["    2 ", "   0 "]  # the level ran its 2 requests, after the probe gave up


async def test_an_endless_metrics_is_read_with_a_cap() -> None:
    async with RunningServer(ServerSpec(metrics_endless=True, delay_s=0.002)) as srv:
        code, out, err, usage = await bench_process("--url", srv.base_url, "--json", "--concurrency", "1",
                                                    "--requests", "2", "--max-tokens", "8")
    assert code == 0, err
    peak_mb = usage.ru_maxrss / 1024  # KB on Linux
    assert peak_mb < 250, f"bench grew to {peak_mb:.0f} MB reading /metrics"
    assert '"accept_length"' in out and "server counters" not in out  # the counters were not believed


async def test_a_concurrency_past_the_maximum_is_refused_in_words() -> None:
    code, out, err, usage = await bench_process("--url", "http://127.0.0.1:9", "--concurrency", "1,10000000")
    assert code == 1 and out == ""
    assert f"--concurrency 10000000 is more than the {MAX_CONCURRENCY} parallel requests" in err
    assert "Traceback" not in err and "MemoryError" not in err


@pytest.mark.parametrize(("levels", "words"), [
    ("1,,16", "--concurrency '1,,16' has an empty level between commas: a level left out?"),
    ("1,4,1", "--concurrency 1 is given twice: each level runs once"),
])
async def test_a_level_left_out_or_given_twice_is_refused_in_words(levels: str, words: str) -> None:
    """A typo in the levels is said before anything is sent (was: 1,,16 ran 1 and 16; 1,4,1 ran c=1 twice)."""
    code, out, err, _ = await bench_process("--url", "http://127.0.0.1:9", "--concurrency", levels)
    assert code == 1 and out == ""
    assert words in err and "Traceback" not in err
