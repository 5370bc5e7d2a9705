"""Trace replay (issue 33): a recorded trace (JSONL of arrival times and lengths, optionally prompts) given as the
workload is sent open loop at its own times, each request with its own input/output lengths, against a truth
server on 127.0.0.1 that logs when each request arrived and what it carried; the trial keeps the workload's name,
hash and seed. `--workload FILE` and a profile key both recognise a trace."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import statistics
import sys
from pathlib import Path

import pytest

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.bench.request_plan import PlanError, build_plan
from specdec_tui.bench.workloads import WorkloadError, load_workload
from specdec_tui.bench.workloads.trace import BLOCK_WORDS
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.provenance import provenance
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Trial
from tests.truth_server import TruthServer

pytestmark = pytest.mark.timeout(90)

GAP_START, GAP_END = 1.2, 2.2  # the trace sends nothing in between: neither may the replay


def _trace() -> list[dict[str, object]]:
    """125 requests over ~2.9 s: a steady part, bursts of 5 at one instant, a 1 s silence, then a fast tail;
    lengths vary per request; a few carry their own prompt, two share a prefix by hash_ids; lines out of order."""
    times = [0.02 * i for i in range(40)]  # 50/s up to 0.78 s
    times += [GAP_START - 0.3 + 0.1 * b for b in range(3) for _ in range(5)]  # bursts of 5 at one instant
    times += [GAP_END + 0.01 * i for i in range(70)]  # 100/s
    lines: list[dict[str, object]] = []
    for i, t in enumerate(times):
        line: dict[str, object] = {"timestamp": round(t * 1000, 3), "input_length": 5 + (i * 7) % 40,
                                   "output_length": 1 + (i * 5) % 9}
        if i % 25 == 3:
            line = {"arrival_s": t, "prompt": f"given prompt {i} stays as written", "output_len": 2}
        if i in (10, 11):
            line["hash_ids"] = [7, 8, 9] if i == 10 else [7, 8, 12]
            line["input_length"] = 3 * BLOCK_WORDS
        lines.append(line)
    lines[5], lines[6] = lines[6], lines[5]  # recorded out of order: replayed in time order
    return lines


def _write(tmp_path: Path, lines: list[dict[str, object]], name: str = "prod.jsonl") -> Path:
    f = tmp_path / name
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return f


def _time_of(line: dict[str, object]) -> float:
    return float(line["timestamp"]) / 1000 if "timestamp" in line else float(line["arrival_s"])  # type: ignore[arg-type]


async def test_a_trace_is_replayed_at_its_arrival_times_with_its_lengths(tmp_path: Path) -> None:
    lines = _trace()
    f = _write(tmp_path, lines)
    profile = BenchProfile(workload=str(f), warmup=2, cooldown=3, seed=9, concurrency=(1,))
    events: list[BenchEvent] = []
    async with TruthServer() as s:
        await drive_benchmark(s.url, profile, events.append)
    done = events[-1]
    assert isinstance(done, RunDone) and done.error is None, done
    lv = done.levels[0]
    assert len(s.log.bodies) == len(lines)  # every request of the trace went, warm-up and cool-down too ...
    assert lv.requests == len(lines) - 5 and lv.errors == 0  # ... and those were not measured

    # which trace line each arrival was: the prompt says (made-up prompts are unique by their words)
    wl = load_workload(str(f))
    prompts = {item.prompt: k for k, item in enumerate(wl.items)}
    by_line = sorted(((prompts[b["prompt"]], t) for b, t in zip(s.log.bodies, s.log.arrivals, strict=True)))
    assert [k for k, _ in by_line] == list(range(len(lines)))  # each sent exactly once
    want = sorted(_time_of(x) for x in lines)
    seen = [t - by_line[0][1] for _, t in by_line]
    errors = sorted(abs((a - seen[0]) - (w - want[0])) for a, w in zip(seen, want, strict=True))
    # arrivals follow the trace: median error ≤ 5 ms, 90 % ≤ 20 ms (an event loop on a shared 2-core machine)
    assert errors[len(errors) // 2] <= 0.005 and errors[int(0.9 * len(errors))] <= 0.020, errors[-10:]
    assert not [t for t in seen if GAP_START + 0.15 < t < GAP_END - 0.15]  # the trace's silence was kept
    bursts = [t for t in seen if GAP_START - 0.35 < t < GAP_START]
    assert len(bursts) == 15 and max(bursts[i + 4] - bursts[i] for i in range(0, 15, 5)) < 0.02  # 5 at one instant

    # lengths: each request's max_tokens is its output length, its made-up prompt its input length in words
    sent = {b["prompt"]: b for b in s.log.bodies}
    for item, line in zip(wl.items, sorted(lines, key=_time_of), strict=True):  # the k-th in time is the k-th sent
        body = sent[item.prompt]
        if "prompt" in line:
            assert body["prompt"] == line["prompt"] and body["max_tokens"] == line["output_len"]
        else:
            assert len(body["prompt"].split()) == line["input_length"] and body["max_tokens"] == line["output_length"]
    shared = [b["prompt"].split() for b in s.log.bodies if b["prompt"] in (wl.items[10].prompt, wl.items[11].prompt)]
    assert shared[0][: 2 * BLOCK_WORDS] == shared[1][: 2 * BLOCK_WORDS] and shared[0] != shared[1]  # blocks 7, 8 shared

    # the trial keeps what was sent: name, hash, seed, and that it was a trace at its own rate
    assert lv.workload == {"name": "prod", "version": 1, "hash": wl.content_hash, "seed": 9, "arrivals": "trace",
                           "lengths": "input lengths in words: the server has no /v1/tokenize (404) to count tokens"}
    assert lv.rate == pytest.approx((len(lines) - 1) / (want[-1] - want[0]))


async def test_a_rate_time_scales_the_trace_keeping_its_pattern(tmp_path: Path) -> None:
    lines = _trace()
    f = _write(tmp_path, lines)
    own = (len(lines) - 1) / (max(map(_time_of, lines)) - min(map(_time_of, lines)))
    profile = BenchProfile(workload=str(f), warmup=0, rate=2 * own)
    async with TruthServer() as s:
        await drive_benchmark(s.url, profile, lambda ev: None)
    arrivals = sorted(s.log.arrivals)
    span = arrivals[-1] - arrivals[0]
    assert span == pytest.approx(2.9 / 2, rel=0.08)  # twice as fast: half the time
    t0 = arrivals[0]
    assert not [t for t in arrivals if (GAP_START + 0.15) / 2 < t - t0 < (GAP_END - 0.15) / 2]  # the silence, halved


def test_a_trace_refuses_what_it_cannot_honour_in_words(tmp_path: Path) -> None:
    f = _write(tmp_path, _trace())
    with pytest.raises(PlanError, match="recorded trace: its lengths are its own"):
        build_plan(BenchProfile(workload=str(f), output_len="fixed:10"), "m")
    mixed = _write(tmp_path, [{"timestamp": 0, "input_length": 3}, {"prompt": "no time"}], "mixed.jsonl")
    with pytest.raises(WorkloadError, match="line 2: a trace needs an arrival time"):
        load_workload(str(mixed))
    bad = _write(tmp_path, [{"timestamp": -5, "input_length": 3}], "bad.jsonl")
    with pytest.raises(WorkloadError, match="line 1: timestamp must be a number ≥ 0"):
        load_workload(str(bad))
    nolen = _write(tmp_path, [{"arrival_s": 0.5, "output_length": 3}], "nolen.jsonl")
    with pytest.raises(WorkloadError, match="needs a 'prompt', 'messages' or an input_len"):
        load_workload(str(nolen))


def test_a_trace_s_hash_covers_its_times(tmp_path: Path) -> None:
    lines = _trace()
    a = load_workload(str(_write(tmp_path, lines, "a.jsonl")))
    later = [dict(x, timestamp=float(x["timestamp"]) * 2) if "timestamp" in x  # type: ignore[arg-type]
             else dict(x, arrival_s=float(x["arrival_s"]) * 2) for x in lines]  # type: ignore[arg-type]
    b = load_workload(str(_write(tmp_path, later, "b.jsonl")))
    assert a.is_trace and a.content_hash != b.content_hash and [i.prompt for i in a.items] == [i.prompt for i in b.items]


async def _cli(*argv: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "specdec_tui", *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"})
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_workload_file_and_profile_key_both_replay_a_trace(tmp_path: Path) -> None:
    lines = [{"timestamp": 40 * i, "input_length": 4, "output_length": 3} for i in range(20)]
    f = _write(tmp_path, lines)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[profiles.prod]\nworkload = "{f}"\nwarmup = 0\nseed = 4\n')
    async with TruthServer() as s:
        code, out, err = await _cli("bench", "--url", s.url, "--workload", str(f), "--warmup", "0", "--json")
        assert code == 0, err
        by_flag = json.loads(out.splitlines()[0])
        code, out, err = await _cli("--config", str(cfg), "bench", "--url", s.url, "--profile", "prod", "--json")
        assert code == 0, err
        by_key = json.loads(out.splitlines()[0])
    for lv, seed in ((by_flag, 0), (by_key, 4)):
        assert lv["requests"] == 20 and lv["concurrency"] == 0 and lv["rate"] == pytest.approx(19 / 0.76)
        assert lv["workload"]["arrivals"] == "trace" and lv["workload"]["name"] == "prod" and lv["workload"]["seed"] == seed
    assert len(s.log.bodies) == 40 and {b["max_tokens"] for b in s.log.bodies} == {3}
    gaps = [b - a for a, b in zip(s.log.arrivals[:20], s.log.arrivals[1:20], strict=False)]
    assert statistics.median(gaps) == pytest.approx(0.040, abs=0.005)


def test_the_plan_keeps_the_trace_order_whatever_the_seed(tmp_path: Path) -> None:
    f = _write(tmp_path, _trace())
    wl = load_workload(str(f))
    for seed in (0, 5):
        plan = build_plan(dataclasses.replace(BenchProfile(workload=str(f)), seed=seed), "m")
        assert [json.loads(b)["prompt"] for b in plan.bodies] == [i.prompt for i in wl.items]
        assert plan.arrivals == wl.arrivals and list(plan.arrivals) == sorted(plan.arrivals)


async def test_the_trial_loop_benches_a_trace_as_one_open_loop_level(demo_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What the panel runs: a trial whose profile names a trace announces one open-loop level (not the profile's
    concurrency levels) and records it with the trace's workload facts."""
    from specdec_tui.loop.events import BenchStarted

    f = _write(tmp_path, [{"arrival_s": 0.05 * i, "input_len": 6, "output_len": 4} for i in range(12)])
    demo_runner.profile = dataclasses.replace(demo_runner.profile, workload=str(f), warmup=0)
    seen: list[object] = []
    await demo_runner.read_running()
    await demo_runner.start_service()
    trial = await demo_runner.bench(on_event=seen.append)
    started = [ev for ev in seen if isinstance(ev, BenchStarted)]
    assert started and started[0].concurrency == (0,)
    assert [lv.concurrency for lv in trial.levels] == [0] and trial.levels[0].requests == 12
    assert trial.levels[0].workload["arrivals"] == "trace" and trial.status != "failed", trial.failure


async def test_requests_and_duration_cut_a_trace_and_the_trial_says_so(tmp_path: Path) -> None:
    """`--requests N` sends the trace's first N requests; `--duration S` its arrivals in the first S s after
    `--rate`'s time scaling; the profile's own `requests` key cuts it too; the level's workload facts say the cut."""
    lines = [{"timestamp": 40 * i, "input_length": 4 + i, "output_length": 3} for i in range(40)]  # 25/s, 1.56 s
    f = _write(tmp_path, lines)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[profiles.prod]\nworkload = "{f}"\nwarmup = 0\nrequests = 7\n')
    async with TruthServer() as s:
        code, out, err = await _cli("bench", "--url", s.url, "--workload", str(f), "--warmup", "0", "--requests", "12",
                                    "--json")
        assert code == 0, err
        first = json.loads(out.splitlines()[0])
        sent_first = [len(b["prompt"].split()) for b in s.log.bodies]
        code, out, err = await _cli("bench", "--url", s.url, "--workload", str(f), "--warmup", "0", "--rate", "50",
                                    "--duration", "0.49", "--json")
        assert code == 0, err
        timed = json.loads(out.splitlines()[0])
        sent_timed = len(s.log.bodies) - len(sent_first)
        code, out, err = await _cli("--config", str(cfg), "bench", "--url", s.url, "--profile", "prod", "--json")
        assert code == 0, err
        by_key = json.loads(out.splitlines()[0])
    assert sent_first == [4 + i for i in range(12)]  # the first 12 lines, in order, with their own lengths
    assert first["requests"] == 12 and first["workload"]["cut"] == "first 12 requests"
    assert first["rate"] == pytest.approx(11 / 0.44)
    # at 50/s the trace's 40 ms gaps are 20 ms: arrivals at 0, 0.02, … 0.48 s are the ones before 0.49 s
    assert sent_timed == 25 and timed["requests"] == 25 and timed["workload"]["cut"] == "arrivals before 0.49 s"
    assert by_key["requests"] == 7 and by_key["workload"]["cut"] == "first 7 requests"
    assert len(s.log.bodies) == 12 + 25 + 7
    # the trial's provenance (session show, the report, compare) says the cut
    cut = Trial(id=1, unit_text="", levels=[LevelResult(concurrency=0, workload=first["workload"])])
    assert provenance(cut)["load"] == "trace replay at its own times, cut to its first 12 requests"
    whole = Trial(id=2, unit_text="", levels=[LevelResult(concurrency=0, workload={"arrivals": "trace", "name": "p"})])
    assert provenance(whole)["load"] == "trace replay at its own times, whole"
