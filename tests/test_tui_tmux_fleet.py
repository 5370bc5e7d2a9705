"""The Fleet tab in the real program under tmux at 80×24: every configured host listed, a burst of keys to the
second row, enter, and the panel now drives that host (its unit in the Config tab, its name in the title)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.tmux_session import Tmux, panel_env, program

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(180)]


def test_fleet_tab_switches_the_active_host_at_80x24(tmux: Tmux, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    tables = []
    for name, steps in (("alpha", 1), ("bravo", 2)):
        ws = ensure_demo_workspace(tmp_path / name, time_scale=50)
        unit = ws.unit_path.read_text().replace("--speculative-num-steps 1", f"--speculative-num-steps {steps}")
        ws.unit_path.write_text(unit.replace("--speculative-num-draft-tokens 2", f"--speculative-num-draft-tokens {steps + 1}"))
        tables.append(f'[hosts.{name}]\naddress = "local"\nworkspace = "{ws.root}"\nunit = "{ws.unit_name}"\n')
    config.write_text('default_host = "alpha"\n' + "\n".join(tables))
    env = panel_env()
    tmux.start(program() + ["--config", str(config)], env, width=80, height=24)
    tmux.wait_for(lambda s: "alpha · sglang-demo.service" in s, "the panel on alpha")
    tmux.keys("6")
    # (a notice may cover the right of the rows for a few seconds: wait for the row to read whole)
    # ... and alpha ready: while the panel still starts alpha's service, enter on bravo is refused ("Not switching
    # to bravo: … is running on alpha"), as it should be — CI once typed the burst during that start
    tmux.wait_for(lambda s: "bravo" in s and "NEXTN steps=2 topk=1 draft=3" in s
                  and any(line.split()[:3] == ["▶", "alpha", "ready"] for line in s.splitlines()),
                  "both hosts in the Fleet tab, alpha ready, bravo's speculative settings readable")
    # Newcomer pass (issue 35): at 80 columns the table's "errors" header (and column) fell off the right edge.
    header = next(line for line in tmux.screen().splitlines() if "host" in line and "state" in line)
    assert " errors " in header + " ", header
    tmux.keys("Down", "Down", "Up", "Down", "Enter")  # a burst, ending on bravo
    tmux.wait_for(lambda s: "bravo · sglang-demo.service" in s, "the title naming bravo")
    tmux.keys("1")
    screen = tmux.wait_for(lambda s: any(line.split()[:2] == ["speculative-num-steps", "2"]
                                         for line in s.splitlines() if line.strip()),
                           "bravo's unit (steps 2) in the Config tab")
    # ... and a Config value was cut at 10 cells ("Qwen/Qwen3" for the model path).
    model = next(line for line in screen.splitlines() if line.startswith("model-path"))
    assert "Qwen/Qwen3.5-122B-A10B" in model, screen
    tmux.keys("C-q")
    tmux.wait_for(lambda s: "EXITED:" in s or "Quit" in s, "quit (or its confirmation)")
    if "EXITED:" not in tmux.screen():
        tmux.keys("y")
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")
    assert "EXITED:0" in final and "Traceback" not in final, final
