"""No shipped default trips the tool's own warnings: a newcomer's first screen should not carry a warning about
the tool's own choice. The demo profile's 8 requests at c=16 warned on every demo run ("8 requests asked at
concurrency 16: ran 16 so every worker is measured") though the figures lose nothing by it: `requests` is a floor
per level (one measured request per worker at least), and the level's row says how many it measured."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from specdec_tui.bench.validity import profile_sweep_warnings, settings_warnings
from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.config_file import load_config
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import DEMO_PROFILE, ensure_demo_workspace
from specdec_tui.loop.trial import TrialLoop

pytestmark = pytest.mark.timeout(240)

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.toml"


def shipped_profiles() -> dict[str, BenchProfile]:
    """Every profile the tool ships as a default: the built-in, config.example.toml's, the demo's own (its
    "seed-trap" is the trap shown on purpose, by name, and is left out)."""
    example = load_config(EXAMPLE)  # loading it raises on anything it refuses
    return {"built-in": BenchProfile(), **{f"config default {n}": p for n, p in Config().profiles.items()},
            **{f"config.example {n}": p for n, p in example.profiles.items()}, "demo": DEMO_PROFILE}


def test_no_shipped_profile_has_settings_the_tool_warns_about() -> None:
    profiles = shipped_profiles()
    assert len(profiles) >= 5 and "config.example realistic" in profiles
    for name, p in profiles.items():
        assert settings_warnings(p.temperature, p.ignore_eos, p.prompts == "repetitive") == [], name
        assert profile_sweep_warnings(p) == [], name


async def test_the_demo_profile_runs_on_the_demo_host_without_a_level_warning(tmp_path: Path) -> None:
    """The demo's own benchmark, as `specdec demo` runs it (levels 1, 4, 16: 16 workers for 8 requests), on the
    real simulator: every level measured, none with a warning."""
    ws = ensure_demo_workspace(tmp_path / "ws", time_scale=200)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    profile = replace(DEMO_PROFILE, concurrency=(1, 4, 16))
    trial_loop = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name, profile=profile),
                           profile=profile, base_url=ws.base_url, session_path=tmp_path / "s.toml",
                           healthy_timeout_s=60)
    try:
        trial = await trial_loop.run_trial(await trial_loop.read_running())
    finally:
        await host.close()
    assert trial.status == "ok", trial.failure
    assert [(lv.concurrency, lv.requests) for lv in trial.levels] == [(1, 8), (4, 8), (16, 16)]  # the row says 16
    assert [lv.warnings for lv in trial.levels] == [[], [], []]
