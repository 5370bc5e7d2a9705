"""The correctness gate before a sweep's or a tune's winner is promoted, on the real demo host through the CLI:
with the simulator's corrupt-drafts fault in the unit the measured winner answers unlike the same unit without
speculation, so nothing is promoted (in words, with the first divergence) and the host is not left on it; a
healthy unit passes and its winner is promoted. `--no-correctness-gate` skips it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.correctness_gate import NOT_PROMOTED, SHORT, Divergence, GateResult, verdict_lines

pytestmark = pytest.mark.timeout(300)

SMALL = ["--concurrency", "1", "--requests", "4", "--max-tokens", "32", "--time-scale", "200"]
SWEEP = ["sweep", "--host", "demo", "--values", "1..2", "--repeats", "1", *SMALL]
TUNE = ["tune", "--host", "demo", "--space", "speculative-num-steps=1,2", "--slo", "ttft_p99=30s",
        "--concurrency", "1", "--budget", "2", "--time-scale", "200", "--json"]


def _demo_unit(*, corrupt: bool) -> str:
    """The demo workspace's unit (created 200× fast), with the corrupt-drafts fault when asked."""
    ws = ensure_demo_workspace(time_scale=200)
    text = ws.unit_path.read_text(encoding="utf-8")
    if corrupt:
        text = UnitFile.parse(text).set_flags({"sim-fault": "corrupt-drafts"}).text
        ws.unit_path.write_text(text, encoding="utf-8")
    return text


def _last_json(out: str) -> dict[str, object]:
    return dict(json.loads(out.strip().splitlines()[-1]))


def test_a_sweep_whose_winner_corrupts_answers_promotes_nothing_and_says_where(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before = _demo_unit(corrupt=True)
    code = main([*SWEEP, "--apply-best", "--session", str(tmp_path / "s.toml")])
    out = capsys.readouterr().out
    assert code == 1
    assert NOT_PROMOTED in out
    assert "prompts diverged; the first: \"What is the capital of France?" in out
    assert "without speculation: \"" in out and "the winner:" in out
    assert "the host runs the unit it ran before the sweep" in out  # --apply-best did not leave it on the winner
    assert ensure_demo_workspace().unit_path.read_text(encoding="utf-8") == before


def test_a_healthy_sweep_passes_the_gate_and_its_winner_is_applied(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _demo_unit(corrupt=False)
    code = main([*SWEEP, "--apply-best", "--json", "--session", str(tmp_path / "s.toml")])
    summary = _last_json(capsys.readouterr().out)
    assert code == 0
    assert summary["winner"] is not None and summary["winner"] == summary["measured_winner"]
    assert summary["correctness"] == {"passed": True, "divergences": 0, "note": "", "first": None}
    assert summary["left_on"] == "winner"


def test_without_the_gate_a_sweep_promotes_its_winner_unchecked(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _demo_unit(corrupt=True)
    code = main([*SWEEP, "--json", "--no-correctness-gate", "--session", str(tmp_path / "s.toml")])
    summary = _last_json(capsys.readouterr().out)
    assert code == 0 and summary["winner"] is not None and summary["correctness"] is None


def test_a_tune_whose_best_corrupts_answers_promotes_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _demo_unit(corrupt=True)
    code = main([*TUNE, "--session", str(tmp_path / "t.toml")])
    result = _last_json(capsys.readouterr().out)
    assert code == 1
    correctness = result["correctness"]
    assert isinstance(correctness, dict) and correctness["passed"] is False and correctness["divergences"] >= 1
    assert result["promoted"] is False and result["rejected"] is not None
    assert isinstance(result["best"], dict) and result["best"]["flags"] is None


def test_a_healthy_tune_passes_the_gate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _demo_unit(corrupt=False)
    code = main([*TUNE, "--session", str(tmp_path / "t.toml")])
    result = _last_json(capsys.readouterr().out)
    assert code == 0
    assert result["correctness"] == {"passed": True, "divergences": 0, "note": ""}
    assert result["promoted"] is True and isinstance(result["best"], dict) and result["best"]["flags"]


def test_the_verdict_shortens_both_texts_and_strips_terminal_codes() -> None:
    long = "word " * 40 + "\x1b[2J"
    lines = verdict_lines(GateResult(False, [Divergence("a prompt", 7, long, "other " * 40)]))
    assert lines[0] == NOT_PROMOTED
    assert "1 of 6 prompts diverged" in lines[1] and "at word 7" in lines[1]
    assert all("\x1b" not in line and len(line) < SHORT + 40 for line in lines)
    assert lines[2].endswith("…\"") and lines[3].endswith("…\"")
