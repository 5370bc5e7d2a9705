"""The correctness gate on a real demo host: a healthy speculative unit answers a temperature-0 prompt set as the
same unit without speculation does (it passes); with the simulator's corrupt-drafts fault the answers part after
their opening words and the gate reports where, with both texts (it fails)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.correctness_gate import PROMPTS, first_divergence, run_gate, without_speculation

pytestmark = pytest.mark.timeout(240)


async def test_the_gate_passes_a_healthy_candidate_and_catches_corrupt_drafts(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "a", time_scale=200)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="a")
    await host.connect()
    try:
        healthy = await host.read_unit()
        assert "--speculative-algorithm" in healthy and "--speculative-" not in without_speculation(healthy)
        passed = await run_gate(host, healthy)
        assert passed.passed and passed.divergences == [] and passed.note == ""
        assert passed.seconds < 60
        corrupt = UnitFile.parse(healthy).set_flags({"sim-fault": "corrupt-drafts"}).text
        failed = await run_gate(host, corrupt)
        assert not failed.passed and len(failed.divergences) >= len(PROMPTS) // 2
        first = failed.divergences[0]
        assert first.prompt == PROMPTS[0] and first.at_word >= 4 and first.reference != first.candidate
    finally:
        await host.stop()
        await host.close()


def test_a_difference_in_the_first_words_is_tolerated_and_a_later_one_is_not() -> None:
    ref = "The capital of France is Paris, a city on the Seine."
    assert first_divergence("p", ref, "A capital of France is Paris, a city on the Seine.") is None
    late = first_divergence("p", ref, "The capital of France is Paris, a city city city city.")
    assert late is not None and late.at_word == 8 and "Seine." in late.reference and "city city" in late.candidate
