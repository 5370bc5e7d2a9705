"""The correctness gate on a real demo host: a healthy speculative unit answers a temperature-0 prompt set as the
same unit without speculation does (it passes); with the simulator's corrupt-drafts fault the answers part after
their opening words and the gate reports where, with both texts (it fails)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.correctness_gate import (
    NOT_PROMOTED,
    PROMPTS,
    first_divergence,
    gate_quietly,
    run_gate,
    verdict_lines,
    without_speculation,
)
from tests.loopback_http import serving

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


async def nested(request: web.Request) -> web.Response:
    return web.Response(text='{"choices": ' + "[" * 5000, content_type="application/json")


async def a_list(request: web.Request) -> web.Response:
    return web.json_response([{"text": "a list, not an answer"}])


async def no_text(request: web.Request) -> web.Response:
    return web.json_response({"choices": [{"message": {"content": "a chat answer"}}]})


@pytest.mark.parametrize("answer", [nested, a_list, no_text], ids=["nested-past-the-parser", "a-list", "no-text"])
async def test_a_server_answering_garbage_fails_the_gate_in_words(tmp_path: Path, answer) -> None:
    """The demo host's own unit comes up (the gate waits for its start in the journal), but its HTTP port holds a
    server whose /v1/completions answers garbage: the gate fails in words, and no error escapes it (5,000 nested
    brackets raised RecursionError, a list TypeError: both past `gate_quietly`'s handlers, ending a sweep or tune)."""
    ws = ensure_demo_workspace(tmp_path / "a", time_scale=200)
    async with serving(post={"/v1/completions": answer}) as url:
        host = LocalHost(ws.root, ws.unit_name, url, name="a")
        await host.connect()
        try:
            result = await gate_quietly(host, await host.read_unit(), timeout_s=60)
        finally:
            await host.stop()
            await host.close()
    assert not result.passed
    assert result.note.startswith("the gate could not compare answers: ValueError: the answer to /v1/completions")
    assert result.note.endswith("is it an SGLang server?"), result.note
    lines = verdict_lines(result)
    assert lines[0] == NOT_PROMOTED and any(result.note in line for line in lines)
