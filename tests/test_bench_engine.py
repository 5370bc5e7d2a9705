"""The engine against real HTTP servers on 127.0.0.1 with known timing and known faults."""

from __future__ import annotations

import asyncio
import time

import pytest

from specdec_tui.bench import (
    BenchRun,
    LevelDone,
    LevelProgress,
    LevelStarted,
    RunDone,
    drive_benchmark,
    run_benchmark,
)
from specdec_tui.bench.drive import SILENT_STALLS_TO_STOP
from specdec_tui.bench.process_run import ProcessRun
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult, as_stored
from tests.bench_servers import LIFETIME_ACCEPT, RunningServer, ServerSpec

pytestmark = pytest.mark.timeout(60)


def profile(**kw: object) -> BenchProfile:
    base = dict(concurrency=(1,), requests=4, max_tokens=20, warmup=1, temperature=0.7, stall_timeout_s=5.0)
    base.update(kw)
    return BenchProfile(**base)  # type: ignore[arg-type]


async def collect(base_url: str, prof: BenchProfile) -> list[object]:
    return [ev async for ev in run_benchmark(base_url, prof)]


def levels_of(events: list[object]) -> list[LevelResult]:
    done = events[-1]
    assert isinstance(done, RunDone) and not done.cancelled and done.error is None
    return done.levels


async def test_exact_tokens_and_timing_with_multi_token_chunks() -> None:
    delay = 0.02
    async with RunningServer(ServerSpec(pattern=(1, 3, 2, 4), delay_s=delay)) as srv:
        events = await collect(srv.base_url, profile(concurrency=(1, 3), requests=6, max_tokens=20))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "LevelStarted" and kinds[-1] == "RunDone" and kinds.count("LevelDone") == 2
    assert all(e.concurrency in (1, 3) for e in events if isinstance(e, (LevelStarted, LevelProgress)))
    c1, c3 = levels_of(events)
    for lv in (c1, c3):
        assert lv.requests == 6 and lv.errors == 0
        assert lv.output_tokens == 6 * 20  # exact, from usage, though chunks carry 1–4 tokens
        assert not lv.estimated and lv.finish_reasons == {"length": 6}
        # pattern 1,3,2,4,1,3,2,4 → 8 chunks; 19 tokens after the first chunk over 7 gaps
        assert lv.accept_length_client == as_stored(19 / 7)
        # the server counted 20 tokens in 5 verify steps per request, whatever the chunking
        assert lv.accept_length_server == pytest.approx(4.0)
        assert lv.accept_length_source == "server counters"
        assert lv.chunk_itl_ms.p50 == pytest.approx(delay * 1000, rel=0.3)
        assert lv.per_request_tok_s.p50 == pytest.approx(19 / (7 * delay), rel=0.3)
        assert lv.tpot_ms.p50 == pytest.approx(7 * delay * 1000 / 19, rel=0.3)
        assert lv.itl_ms.mean == pytest.approx(lv.tpot_ms.mean, rel=0.05)
        assert lv.ttft_ms.p50 == pytest.approx(delay * 1000, rel=0.5)
        assert lv.warnings == []
    assert c3.achieved_concurrency == pytest.approx(3, rel=0.25)
    assert c1.achieved_concurrency == pytest.approx(1, rel=0.1)
    assert c3.output_tok_s > 2 * c1.output_tok_s


async def test_requests_carry_profile_settings_and_stream_options() -> None:
    async with RunningServer() as srv:
        await collect(srv.base_url, profile(temperature=0.0, ignore_eos=True, max_tokens=8))
        bodies = srv.stats.bodies
    assert len(bodies) == 1 + 4  # one warm-up for the single worker, then the measured requests
    b = bodies[0]
    assert b["stream"] is True and b["max_tokens"] == 8 and b["temperature"] == 0.0 and b["ignore_eos"] is True
    assert b["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert b["return_spec_tokens_details"] is True  # upstream's name (entrypoints/openai/protocol.py)
    assert b["model"] == "test-model"
    assert len({x["prompt"] for x in bodies}) == 5  # prompts rotate


async def test_chat_endpoint_counts_content_not_the_role_chunk() -> None:
    async with RunningServer(ServerSpec(pattern=(2,), delay_s=0.005)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(endpoint="chat", max_tokens=10)))
        assert "messages" in srv.stats.bodies[0]
    assert lv.output_tokens == 4 * 10 and lv.errors == 0
    assert lv.accept_length_client == pytest.approx(2.0)


async def test_no_usage_falls_back_to_chunks_and_says_estimated() -> None:
    async with RunningServer(ServerSpec(mode="nousage", pattern=(3,), delay_s=0.005)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(max_tokens=12)))
    assert lv.estimated
    assert lv.output_tokens == 4 * 4  # 4 chunks each, counted as one token per chunk
    assert lv.accept_length_client is None
    assert any("no usage" in w for w in lv.warnings)


async def test_final_usage_only_keeps_totals_exact() -> None:
    async with RunningServer(ServerSpec(mode="final_usage", pattern=(3,), delay_s=0.005)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(max_tokens=12)))
    assert not lv.estimated and lv.output_tokens == 4 * 12


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("http500", "http_500"),
        ("reset", "reset"),
        ("stall", "stall"),
        ("event_error", "stream_error"),
        ("error_json", "stream_error"),
        ("garbage", "bad_json"),
    ],
)
async def test_errors_are_counted_by_kind_and_the_run_ends(mode: str, kind: str) -> None:
    async with RunningServer(ServerSpec(mode=mode, delay_s=0.005)) as srv:
        prof = profile(concurrency=(1, 2), requests=2, warmup=0, stall_timeout_s=0.3)
        levels = levels_of(await collect(srv.base_url, prof))
    assert [lv.concurrency for lv in levels] == [1, 2]
    for lv in levels:
        assert lv.errors == lv.requests == 2
        assert lv.error_kinds == {kind: 2}
        assert lv.output_tokens == 0


async def test_unreachable_server_is_a_counted_connect_error() -> None:
    async with RunningServer() as srv:
        url = srv.base_url
    (lv,) = levels_of(await collect(url, profile(requests=2, warmup=0)))
    assert lv.errors == 2 and lv.error_kinds == {"connect": 2}


async def test_level_timeout_cuts_the_level_and_moves_on() -> None:
    async with RunningServer(ServerSpec(mode="stall", delay_s=0.005)) as srv:
        prof = profile(concurrency=(2,), requests=2, warmup=0, stall_timeout_s=30, level_timeout_s=0.5)
        (lv,) = levels_of(await collect(srv.base_url, prof))
    assert lv.error_kinds == {"level_timeout": 2}
    assert any("limit" in w for w in lv.warnings)


async def test_cancelling_the_iterating_task_closes_every_request() -> None:
    async with RunningServer(ServerSpec(delay_s=0.05)) as srv:
        prof = profile(concurrency=(8,), requests=100, max_tokens=1000)
        seen: list[object] = []

        async def consume() -> None:
            async for ev in run_benchmark(srv.base_url, prof):
                seen.append(ev)

        task = asyncio.create_task(consume())
        while srv.stats.active < 8:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # when the iterator has returned, the engine has closed its connections: the server's
        # handlers see the disconnect and end
        deadline = time.monotonic() + 5
        while srv.stats.active and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert srv.stats.active == 0
        assert srv.stats.requests == 8  # nothing new was sent after the cancel
    assert not any(isinstance(e, LevelDone) for e in seen)


async def test_bench_run_handle_cancel_reports_cancelled() -> None:
    async with RunningServer(ServerSpec(delay_s=0.05)) as srv:
        events: list[object] = []
        run = BenchRun(srv.base_url, profile(concurrency=(4,), requests=50, max_tokens=500), events.append).start()
        while srv.stats.active < 4:
            await asyncio.sleep(0.01)
        run.cancel()
        assert await asyncio.to_thread(run.join, 10)
    assert isinstance(events[-1], RunDone) and events[-1].cancelled


async def test_duration_mode_window_is_the_duration() -> None:
    async with RunningServer(ServerSpec(pattern=(1,), delay_s=0.005)) as srv:
        prof = profile(concurrency=(2,), requests=None, duration_s=0.5, max_tokens=20)
        (lv,) = levels_of(await collect(srv.base_url, prof))
    assert lv.duration_s == pytest.approx(0.5, rel=0.05)
    assert lv.requests >= 2 and lv.errors == 0
    # two streams of one token every 5 ms → about 400 tok/s inside the window (minus TTFT gaps)
    assert 200 < lv.output_tok_s < 450


async def test_temperature_zero_with_ignore_eos_warns_that_acceptance_is_inflated() -> None:
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(temperature=0.0, ignore_eos=True)))
    assert any("inflated" in w and "ignore_eos" in w for w in lv.warnings)


async def test_degenerate_output_warns_even_at_nonzero_temperature() -> None:
    async with RunningServer(ServerSpec(mode="degenerate", delay_s=0.002)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(max_tokens=40)))
    assert any("degenerate" in w and "inflated" in w for w in lv.warnings)


async def test_without_speculative_decoding_the_figure_is_the_streams_estimate() -> None:
    async with RunningServer(ServerSpec(accept_length=None, pattern=(2,), delay_s=0.002)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(max_tokens=12)))
    assert lv.accept_length_server is None and lv.errors == 0
    assert lv.accept_length_source == "estimated from the stream" and lv.accept_length == pytest.approx(2.0)


async def test_metrics_off_takes_the_per_request_details() -> None:
    # chunks of 1,3,2,4 tokens, but the server says 4 tokens per verify step in its sglext chunk
    async with RunningServer(ServerSpec(metrics=False, delay_s=0.002)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(max_tokens=20)))
    assert lv.accept_length_source == "per-request details"
    assert lv.accept_length_server == pytest.approx(4.0) and lv.accept_length_client == as_stored(19 / 7)


async def test_neither_counters_nor_details_says_estimated_from_the_stream() -> None:
    async with RunningServer(ServerSpec(metrics=False, spec_details=False, delay_s=0.002)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(max_tokens=20)))
    assert lv.accept_length_server is None
    assert lv.accept_length_source == "estimated from the stream" and lv.accept_length == as_stored(19 / 7)


async def test_each_level_gets_its_own_window_never_the_lifetime_average() -> None:
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        (first,) = levels_of(await collect(srv.base_url, profile(max_tokens=20)))
        srv.spec.accept_length = 2.0  # the same server now accepts less: its lifetime average lags behind
        (second,) = levels_of(await collect(srv.base_url, profile(max_tokens=20)))
        gets = srv.stats.gets
    assert first.accept_length_server == pytest.approx(4.0)
    assert second.accept_length_server == pytest.approx(2.0)  # lifetime: 200 tokens / 75 steps = 2.67
    assert second.accept_length_source == "server counters"
    # /server_info's lifetime figure is read after each level (issue 29: what bench_serving prints), but only to show
    # beside the level's own, labelled; it never becomes the level's figure, and the deprecated route is never asked
    assert gets.count("/server_info") == 2 and "/get_server_info" not in gets
    assert second.server_avg_accept_length == LIFETIME_ACCEPT != second.accept_length_server


async def test_drive_benchmark_on_the_callers_loop_and_bad_prompt_set() -> None:
    got: list[object] = []
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        levels = await drive_benchmark(srv.base_url, profile(prompts="repetitive"), got.append)
        assert any("repetitive prompt set" in w for w in levels[0].warnings)
        bad: list[object] = []
        await drive_benchmark(srv.base_url, profile(prompts="/nonexistent/prompts.txt"), bad.append)
    assert isinstance(bad[-1], RunDone) and "neither" in (bad[-1].error or "")


async def test_process_isolation_gives_the_same_results_as_the_thread() -> None:
    async with RunningServer(ServerSpec(pattern=(1, 3, 2, 4), delay_s=0.005)) as srv:
        prof = profile(concurrency=(2,), requests=4, max_tokens=20)
        events = [ev async for ev in run_benchmark(srv.base_url, prof, isolation="process")]
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "LevelStarted" and kinds[-1] == "RunDone"
    (lv,) = levels_of(events)
    assert lv.requests == 4 and lv.errors == 0 and lv.output_tokens == 4 * 20
    assert lv.accept_length_client == as_stored(19 / 7) and lv.accept_length_server == pytest.approx(4.0)


async def test_cancelling_a_process_run_closes_every_request() -> None:
    async with RunningServer(ServerSpec(delay_s=0.05)) as srv:
        prof = profile(concurrency=(4,), requests=100, max_tokens=1000)
        seen: list[object] = []

        async def consume() -> None:
            async for ev in run_benchmark(srv.base_url, prof, isolation="process"):
                seen.append(ev)

        task = asyncio.create_task(consume())
        deadline = time.monotonic() + 20
        while srv.stats.active < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert srv.stats.active == 4
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 5
        while srv.stats.active and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert srv.stats.active == 0
        assert srv.stats.requests == 4


async def test_process_run_that_dies_reports_it_in_words() -> None:
    async with RunningServer(ServerSpec(delay_s=0.05)) as srv:
        events: list[object] = []
        run = ProcessRun(srv.base_url, profile(concurrency=(2,), requests=50, max_tokens=500), events.append).start()
        while srv.stats.active < 2:
            await asyncio.sleep(0.01)
        run._process.kill()  # what an OOM kill would do
        assert await asyncio.to_thread(run.join, 10)
    done = events[-1]
    assert isinstance(done, RunDone) and "ended unexpectedly" in (done.error or "")


async def test_unknown_isolation_is_refused() -> None:
    with pytest.raises(ValueError, match="isolation"):
        async for _ in run_benchmark("http://127.0.0.1:1", profile(), isolation="fiber"):  # type: ignore[arg-type]
            pass


async def test_unusual_but_legal_sse_is_read_exactly() -> None:
    # comments, CRLF, `data:` without a space and JSON over two data lines all leave the fast path
    async with RunningServer(ServerSpec(mode="odd_sse", pattern=(1, 3), delay_s=0.002)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(max_tokens=12)))
    assert lv.errors == 0 and lv.output_tokens == 4 * 12
    assert lv.accept_length_client == pytest.approx(11 / 5)


async def test_a_slow_stream_that_keeps_sending_is_no_stall_and_a_silent_one_is() -> None:
    """The stall watch looks at the last bytes, not the request's age: chunks every 0.1 s for ~1 s pass a 0.3 s
    stall timeout; a server that goes silent after two chunks fails as "stall" about 0.3 s later."""
    async with RunningServer(ServerSpec(pattern=(1,), delay_s=0.1)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(requests=2, warmup=0, max_tokens=10, stall_timeout_s=0.3)))
    assert lv.errors == 0 and lv.output_tokens == 20 and lv.e2e_ms.p50 is not None and lv.e2e_ms.p50 > 800
    async with RunningServer(ServerSpec(mode="stall", delay_s=0.005)) as srv:
        t0 = time.perf_counter()
        (lv,) = levels_of(await collect(srv.base_url, profile(requests=1, warmup=0, stall_timeout_s=0.3)))
    assert lv.error_kinds == {"stall": 1} and time.perf_counter() - t0 < 5


async def test_a_stream_that_never_ends_its_event_fails_the_request_at_the_event_cap_not_at_the_timeout() -> None:
    """A URL that answers with bytes and no event's end (a file, a page, a proxy's garbage): the reader kept every
    byte and joined them again at each read (450 MB and a core for the request's whole 120 s timeout, found by
    a newcomer's `bench --url`). Past EVENT_LIMIT bytes without an event's end the request fails, kind "oversized"
    (before: "timeout", 40 s later)."""
    async with RunningServer(ServerSpec(mode="endless_event")) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(requests=1, warmup=0, request_timeout_s=40.0)))
    assert lv.error_kinds == {"oversized": 1} and lv.output_tokens == 0


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_server_that_takes_requests_and_sends_nothing_stops_the_run_in_words_after_two_stalls(
        concurrency: int) -> None:
    """Something listens at the URL but answers nothing (a server stuck, or not an inference server): each request
    waited the whole stall timeout, 32 of them at c=1 (16 minutes of a `bench --url` at 30 s, found by a newcomer).
    Once SILENT_STALLS_TO_STOP requests waited it out with no content and none got any, the level sends no more and
    the run ends saying so."""
    async with RunningServer(ServerSpec(mode="stall", fail_after_chunks=0)) as srv:
        events = await collect(srv.base_url, profile(concurrency=(concurrency, 16), requests=32, warmup=1,
                                                     stall_timeout_s=0.3))
        sent = srv.stats.requests
    done = events[-1]
    assert isinstance(done, RunDone) and not done.cancelled and done.levels == []
    assert done.error is not None and "sent no content" in done.error and srv.base_url in done.error
    # the requests in flight, and one more a worker sent before the second stall ended: not 32 more (nor level 16)
    assert max(concurrency, SILENT_STALLS_TO_STOP) <= sent < concurrency + SILENT_STALLS_TO_STOP


async def test_stalls_after_content_are_counted_as_stalls_and_the_run_goes_on() -> None:
    """The stop is for a server that answers nothing: one whose requests stall after some content is measured as
    before (every request sent, the stalls counted)."""
    async with RunningServer(ServerSpec(mode="stall", fail_after_chunks=2)) as srv:
        (lv,) = levels_of(await collect(srv.base_url, profile(requests=3, warmup=0, stall_timeout_s=0.3)))
    assert lv.error_kinds == {"stall": 3}
