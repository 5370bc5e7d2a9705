"""`bench --host NAME` measures with the host's profile, as the panel's `b`, `sweep` and `tune` do (newcomer44):
`bench --host demo` ran 256 tokens at temperature 0 (the built-in defaults) where the panel and `demo` ran the
demo's 128 at 0.7 with ignore_eos, and `--record` put that trial in the same session as theirs; on a configured
host the config's `default_profile` was left out the same way. The real CLI, the real demo server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from specdec_tui.core.paths import demo_dir
from specdec_tui.hosts.local.workspace import DemoWorkspace, ensure_demo_workspace

pytestmark = pytest.mark.timeout(180)


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def demo() -> Iterator[DemoWorkspace]:
    ws = ensure_demo_workspace(demo_dir(), time_scale=20)
    assert cli("host", "restart", "--host", "demo").returncode == 0
    try:
        yield ws
    finally:
        cli("host", "stop", "--host", "demo")


def test_bench_on_the_demo_host_runs_the_demo_s_profile_as_the_panel_does(demo: DemoWorkspace) -> None:
    done = cli("bench", "--host", "demo", "--concurrency", "1", "--requests", "2")
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].strip()
    assert header == "completions · max_tokens 128 · temperature 0.7 · ignore_eos · prompts realistic", header
    named = cli("bench", "--host", "demo", "--profile", "seed-trap", "--concurrency", "1", "--requests", "2")
    assert named.returncode == 0, named.stderr  # the demo's other profile by name, as `sweep --profile` takes it
    assert "temperature 0 · ignore_eos · prompts repetitive" in named.stdout.splitlines()[0], named.stdout[:300]


def test_bench_on_a_configured_host_runs_the_config_s_default_profile(demo: DemoWorkspace, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'schema_version = 1\ndefault_profile = "short"\n\n[hosts.gpu]\naddress = "gpu.invalid"\n'
                      f'unit = "sglang.service"\nbase_url = "{demo.base_url}"\n\n'
                      '[profiles.short]\nconcurrency = [1]\nrequests = 2\nmax_tokens = 24\ntemperature = 0.3\n')
    done = cli("--config", str(config), "bench", "--host", "gpu")
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].strip()
    assert header.startswith("completions · max_tokens 24 · temperature 0.3"), header
