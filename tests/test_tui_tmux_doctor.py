"""The Doctor in the real program under tmux at 80×24: a host whose start fails at graph capture is asked about the
ladder's next rung (declined here), shows the finding in the Health tab (its cause and the fix) with a badge on the
tab, and `f` there puts the fix into the unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.tmux_session import Tmux, panel_env, program

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(180)]


def test_the_doctor_names_a_failed_start_and_f_applies_its_fix_at_80x24(tmux: Tmux, tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "alpha", time_scale=50)
    unit = ws.unit_path.read_text()
    ws.unit_path.write_text(unit.replace("--port", "--mem-fraction-static 0.9 --sim-fail cuda-graph-oom --port", 1))
    config = tmp_path / "config.toml"
    config.write_text(f'default_host = "alpha"\n[hosts.alpha]\naddress = "local"\nworkspace = "{ws.root}"\n'
                      f'unit = "{ws.unit_name}"\n')
    env = panel_env()
    tmux.start(program() + ["--config", str(config)], env, width=80, height=24)
    tmux.wait_for(lambda s: "Health ⚠1" in s, "the badge on the Health tab", timeout_s=90)
    question = tmux.wait_for(lambda s: "next rung" in s and "Recover (y)" in s,
                             "the recovery question naming the ladder's next rung")
    words = " ".join(question.split())
    assert "The unit did not start:" in question, question  # its top line shows: the question fits 80×24
    assert "--mem-fraction-static to 0.80" in words, question

    def doctor_shown(screen: str) -> bool:
        """The Health tab's Doctor section; the recovery question (left: n) and the failed start's dialog are
        closed on the way."""
        if "next rung" in screen:
            tmux.keys("n")
            return False
        if "did not become healthy" in screen:
            tmux.keys("Escape")
            return False
        if "Doctor: ⚠ 1 finding" not in screen:
            tmux.keys("3")
            return False
        return "start_failure" in screen

    screen = tmux.wait_for(doctor_shown, "the Doctor section")
    assert "fix: --mem-fraction-static 0.80" in screen, screen
    tmux.keys("f")
    tmux.keys("1")
    tmux.wait_for(lambda s: any(line.split()[:2] == ["mem-fraction-static", "0.80"] for line in s.splitlines()
                                if line.strip()), "the fix in the Config tab's unit")
    tmux.keys("C-q")
    tmux.wait_for(lambda s: "EXITED:" in s or "Quit" in s, "quit (or its confirmation)")
    if "EXITED:" not in tmux.screen():
        tmux.keys("y")
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")
    assert "EXITED:0" in final and "Traceback" not in final, final
