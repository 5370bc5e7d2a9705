"""Goodput under an SLO (issue 33): a level counts exactly the requests that met every target, against a truth
server whose latencies each request sets, and names the percentile targets the level missed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.core.config import BenchProfile
from tests.truth_server import TruthServer

# four kinds of request, each known to meet or miss: fast; slow first token; slow tokens; long overall
KINDS = ["fast ttft=5 gap=1", "slow start ttft=250 gap=1", "stuttering ttft=5 gap=40", "fast again ttft=5 gap=1"]


def _workload(tmp_path: Path) -> str:
    f = tmp_path / "truth.jsonl"
    f.write_text("\n".join(json.dumps({"prompt": k, "output_len": 6}) for k in KINDS) + "\n")
    return str(f)


async def _level(url: str, profile: BenchProfile) -> tuple[list[BenchEvent], RunDone]:
    events: list[BenchEvent] = []
    await drive_benchmark(url, profile, events.append)
    done = events[-1]
    assert isinstance(done, RunDone) and done.error is None, done
    return events, done


async def test_goodput_counts_exactly_the_requests_meeting_every_target(tmp_path: Path) -> None:
    base = BenchProfile(workload=_workload(tmp_path), concurrency=(4,), requests=40, warmup=0)
    async with TruthServer() as s:
        _, done = await _level(s.url, dataclasses.replace(base, slo=("ttft_p99=100ms",)))
        lv = done.levels[0]
        assert lv.requests == 40 and lv.good_requests == 30  # the 10 slow starts miss
        # each figure is held to the session file's 6 significant digits (core.results.as_stored)
        assert lv.goodput_req_s is not None and lv.goodput_req_s == pytest.approx(30 / lv.duration_s, rel=1e-5)
        assert lv.goodput_tok_s is not None and lv.goodput_tok_s == pytest.approx(30 * 6 / lv.duration_s, rel=1e-5)
        assert lv.slo_missed and lv.slo_missed[0].startswith("ttft p99")

        _, done = await _level(s.url, dataclasses.replace(base, slo=("ttft_p99=100ms", "itl_p99=20ms")))
        assert done.levels[0].good_requests == 20  # the stuttering ones miss too

        _, done = await _level(s.url, dataclasses.replace(base, slo=("e2e_p50=150ms",)))
        assert done.levels[0].good_requests == 20  # slow start (≥250 ms) and stutter (≥200 ms) both exceed 150 ms
        _, done = await _level(s.url, dataclasses.replace(base, slo=("ttft_p50=1s",)))
        lv = done.levels[0]
        assert lv.good_requests == 40 and lv.slo_missed == []


async def test_no_slo_no_goodput_and_a_bad_slo_is_refused_in_words(tmp_path: Path) -> None:
    async with TruthServer() as s:
        _, done = await _level(s.url, BenchProfile(concurrency=(2,), requests=4, warmup=0, max_tokens=2))
        assert done.levels[0].good_requests is None and done.levels[0].goodput_req_s is None
        events: list[BenchEvent] = []
        await drive_benchmark(s.url, BenchProfile(slo=("ttft<2s",)), events.append)
        assert s.log.bodies.__len__() == 4  # nothing sent for the bad one
    bad = events[-1]
    assert isinstance(bad, RunDone) and bad.error and "ttft_p99=2s" in bad.error
