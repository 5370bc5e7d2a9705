"""Provenance (issue 33): each trial says what it was measured on — SGLang version and /server_info setup from the
real simulator, the unit's hash and behaviour-changing environment, workload and seed, the tool's version —
in `session show` and the HTML report, and `session compare` calls out differences before the numbers."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from pathlib import Path

import httpx

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult, ServerFacts
from specdec_tui.core.session import Session, Trial, save_session
from specdec_tui.loop.health_probe import facts_from, probe_http
from tests.test_sim_support import SimProcess, seed_flags

UNIT = """[Service]
Environment=SGLANG_ENABLE_SPEC_V2=1 "CUDA_VISIBLE_DEVICES=0,1,2,3" HF_TOKEN=hf_secret
ExecStart=/usr/bin/python3 -m sglang.launch_server --tp 4
"""


async def _sim_facts() -> ServerFacts:
    p = SimProcess([*seed_flags(3), "--time-scale", "20", "--load-seconds", "1"]).start()
    try:
        p.wait_ready()
        async with httpx.AsyncClient(timeout=5.0) as client:
            probe = await probe_http(client, p.url)
    finally:
        p.stop()
    facts = facts_from(probe.server_info, probe.models, probe.max_model_len)
    assert facts is not None
    return facts


def _cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "specdec_tui", "session", *args], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_trials_show_and_compare_what_they_were_measured_on(tmp_path: Path) -> None:
    facts = asyncio.run(_sim_facts())
    assert facts.version and facts.setup.get("tp_size") == "4"
    level = LevelResult(concurrency=1, requests=3, workload={"name": "chat", "version": 1, "hash": "abc123def456", "seed": 4})
    a = Trial(id=1, unit_text=UNIT, facts=facts, levels=[level], status="ok",
              profile=BenchProfile(workload="chat", seed=4))
    b = dataclasses.replace(a, id=2, unit_text=UNIT.replace("SGLANG_ENABLE_SPEC_V2=1 ", ""),
                            levels=[dataclasses.replace(level, workload={**level.workload, "seed": 5})])
    path = tmp_path / "s.toml"
    save_session(Session(host="h", unit="u", trials=[a, b]), path)

    shown = " ".join(_cli("show", str(path)).split())  # the console may wrap a long line
    line = shown[shown.index("trial 1 measured on:"):shown.index("trial 2 measured on:")]
    assert f"sglang {facts.version}" in line and "tp_size 4" in line and "SGLANG_ENABLE_SPEC_V2=1" in line
    assert "workload chat v1 #abc123def456" in line and "seed 4" in line and "specdec-tui " in line
    assert "hf_secret" not in shown and "HF_TOKEN" not in shown

    compared = " ".join(_cli("compare", str(path), "1", "2").split())
    assert "SGLANG_ENABLE_SPEC_V2: A 1, B unset" in compared and "seed: A 4, B 5" in compared
    assert compared.index("SGLANG_ENABLE_SPEC_V2") < compared.index("tok/s")  # before the numbers

    html = _cli("export", str(path), "--format", "html")
    assert 'id="provenance"' in html and "SGLANG_ENABLE_SPEC_V2=1" in html


def test_alike_trials_have_no_differences(tmp_path: Path) -> None:
    from specdec_tui.core.provenance import provenance_differences

    t = Trial(id=1, unit_text=UNIT)
    assert provenance_differences(t, dataclasses.replace(t, id=2)) == []


def test_show_gives_trials_measured_alike_one_provenance_line(tmp_path: Path) -> None:
    """A session of many trials on one server read one long, identical provenance line a trial (issue 33):
    trials measured alike share a line; one that differs keeps its own."""
    level = LevelResult(concurrency=1, requests=3, workload={"name": "chat", "version": 1, "hash": "abc123def456", "seed": 4})
    alike = [Trial(id=i, unit_text=UNIT, levels=[level], status="ok", profile=BenchProfile(workload="chat", seed=4))
             for i in (1, 2, 3, 5)]
    other = dataclasses.replace(alike[0], id=4, levels=[dataclasses.replace(level, workload={**level.workload, "seed": 5})])
    path = tmp_path / "s.toml"
    save_session(Session(host="h", unit="u", trials=[*alike[:3], other, alike[3]]), path)
    shown = " ".join(_cli("show", str(path)).split())
    assert shown.count("measured on:") == 2, shown
    first = shown[shown.index("trials 1–3, 5 measured on:"):shown.index("trial 4 measured on:")]
    assert "seed 4" in first and "SGLANG_ENABLE_SPEC_V2=1" in first
    assert "seed 5" in shown[shown.index("trial 4 measured on:"):]
