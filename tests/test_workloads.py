"""Workloads (issue 33): shipped sets and the operator's JSONL reach a real HTTP server as the requests they
describe — messages, lengths, sampling — reproducibly by seed, and every level says which load it measured."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.bench.workloads import SHIPPED, load_workload
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.config_file import load_config
from specdec_tui.core.session import Session, Trial, load_session, save_session
from tests.truth_server import TruthServer

BASE = BenchProfile(concurrency=(4,), requests=24, warmup=0, max_tokens=8)


async def _run(url: str, profile: BenchProfile) -> list[BenchEvent]:
    events: list[BenchEvent] = []
    await drive_benchmark(url, profile, events.append)
    return events


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_workloads_load_with_versions_hashes_and_lengths(name: str) -> None:
    wl = load_workload(name)
    assert wl.version >= 1 and len(wl.content_hash) == 12 and wl.items
    assert all(it.output_len for it in wl.items)


async def test_chat_workload_sends_multi_turn_messages_with_its_lengths_and_sampling() -> None:
    async with TruthServer() as s:
        events = await _run(s.url, dataclasses.replace(BASE, workload="chat", endpoint="chat"))
    done = events[-1]
    assert isinstance(done, RunDone) and done.error is None
    bodies = s.log.bodies
    assert any(len(b["messages"]) >= 3 for b in bodies), "multi-turn conversations reach the server"
    assert {b["temperature"] for b in bodies} == {0.7} and {b["top_p"] for b in bodies} == {0.95}
    assert len({b["max_tokens"] for b in bodies}) > 1  # the set's own output lengths, not the profile's 8
    lv = done.levels[0]
    assert lv.errors == 0, lv.error_kinds  # the set's lengths above the profile's max_tokens are no usage fault
    assert lv.workload["name"] == "chat" and lv.workload["hash"] == load_workload("chat").content_hash
    assert lv.workload["seed"] == 0


async def test_operator_jsonl_with_output_lengths_and_a_length_distribution(tmp_path: Path) -> None:
    f = tmp_path / "mine.jsonl"
    lines = [{"workload": "mine", "version": 3, "temperature": 0.3}]
    lines += [{"prompt": f"question {i}", "output_len": 5 + i} for i in range(6)]
    lines += [{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]}]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    async with TruthServer() as s:
        await _run(s.url, dataclasses.replace(BASE, workload=str(f)))
        own = sorted({b["max_tokens"] for b in s.log.bodies})
        assert own == [5, 6, 7, 8, 9, 10]  # 5..10 from the file, 8 (max_tokens) for the line without one
        assert {b["temperature"] for b in s.log.bodies} == {0.3}
        assert any("system: be brief" in b["prompt"] for b in s.log.bodies)  # messages flattened for completions
        s.log.bodies.clear()
        await _run(s.url, dataclasses.replace(BASE, workload=str(f), output_len="uniform:20:40", input_len="fixed:50",
                                              requests=64, seed=7))
        lens = [b["max_tokens"] for b in s.log.bodies]
        assert all(20 <= n <= 40 for n in lens) and len(set(lens)) > 5
        assert all(len(b["prompt"].split()) == 50 for b in s.log.bodies)


async def test_same_seed_same_load_other_seed_other_order() -> None:
    p = dataclasses.replace(BASE, workload="code", concurrency=(1,), requests=12, output_len="lognormal:64:0.5")
    async with TruthServer() as s:
        await _run(s.url, dataclasses.replace(p, seed=5))
        first = [(b["prompt"], b["max_tokens"]) for b in s.log.bodies]
        s.log.bodies.clear()
        await _run(s.url, dataclasses.replace(p, seed=5))
        again = [(b["prompt"], b["max_tokens"]) for b in s.log.bodies]
        s.log.bodies.clear()
        await _run(s.url, dataclasses.replace(p, seed=6))
        other = [(b["prompt"], b["max_tokens"]) for b in s.log.bodies]
    assert first == again and first != other


async def test_a_bad_workload_is_refused_in_words_before_any_request(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"prompt": "ok"}\n{"text": "no prompt here"}\n')
    async with TruthServer() as s:
        events = await _run(s.url, dataclasses.replace(BASE, workload=str(f)))
        assert s.log.bodies == []
    done = events[-1]
    assert isinstance(done, RunDone) and done.error and "line 2" in done.error and "'prompt'" in done.error


async def test_workload_and_seed_are_kept_with_the_trial_in_the_session_file(tmp_path: Path) -> None:
    profile = dataclasses.replace(BASE, workload="long-context", seed=11)
    async with TruthServer() as s:
        events = await _run(s.url, profile)
    done = events[-1]
    assert isinstance(done, RunDone)
    session = Session(host="h", unit="u", profile=profile, trials=[Trial(id=1, unit_text="x", profile=profile,
                                                                        levels=done.levels, status="ok")])
    path = tmp_path / "s.json"
    save_session(session, path)
    back = load_session(path).trials[0]
    assert back.profile.workload == "long-context" and back.profile.seed == 11
    assert back.levels[0].workload == {"name": "long-context", "version": 1,
                                       "hash": load_workload("long-context").content_hash, "seed": 11}


def test_old_profiles_load_and_new_keys_read(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[profiles.old]\nconcurrency = [1, 4]\nprompts = "repetitive"\n\n'
                   '[profiles.prod]\nworkload = "chat"\nseed = 3\nrate = 12.5\narrivals = "constant"\n'
                   'output_len = "lognormal:200:0.6"\nslo = ["ttft_p99=2s", "itl_p99=50ms"]\n')
    c = load_config(cfg)
    assert c.profiles["old"].workload == "" and c.profiles["old"].rate is None
    prod = c.profiles["prod"]
    assert (prod.workload, prod.seed, prod.rate, prod.arrivals, prod.slo) == ("chat", 3, 12.5, "constant",
                                                                              ("ttft_p99=2s", "itl_p99=50ms"))


async def test_the_trap_is_flagged_inflated_and_settings_name_the_load() -> None:
    from specdec_tui.core.profile_words import settings_words, short_settings

    async with TruthServer() as s:
        events = await _run(s.url, dataclasses.replace(BASE, workload="trap", requests=8))
    done = events[-1]
    assert isinstance(done, RunDone)
    assert any("inflated" in w for w in done.levels[0].warnings)
    p = dataclasses.replace(BASE, workload="chat", seed=3, rate=12.0, slo=("ttft_p99=2s",))
    assert settings_words(p).endswith("workload chat seed 3, poisson 12/s, SLO ttft_p99=2s")
    assert short_settings(p).endswith("chat · 12/s")
    assert settings_words(BASE).endswith("prompts realistic")  # an old profile reads as before
