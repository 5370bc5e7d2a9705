"""A client that leaves mid-stream (a cancelled benchmark): the simulator aborts the request quietly —
no traceback in its log, the request leaves the running batch, ground truth stays exact — and goes on serving."""

from __future__ import annotations

import asyncio
import io

import aiohttp

from specdec_tui.sim import engine as engine_mod
from specdec_tui.sim.engine import Engine, EngineConfig, GenParams
from specdec_tui.sim.logs import SimLog
from tests.test_sim_support import SimProcess, get_json, seed_flags, stream_completion

LONG = {"model": "x", "prompt": "hello", "max_tokens": 4000, "temperature": 0, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True}}


async def running_reqs(session: aiohttp.ClientSession, url: str) -> float:
    async with session.get(url + "/metrics") as resp:
        text = await resp.text()
    return next(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("sglang:num_running_reqs"))


async def leave_mid_stream(session: aiohttp.ClientSession, url: str, chunks: int) -> None:
    async with session.post(url + "/v1/completions", json=LONG) as resp:
        assert resp.status == 200
        for _ in range(chunks):
            await resp.content.readuntil(b"\n\n")
        resp.close()  # drop the connection with the stream half read


async def test_a_client_leaving_mid_stream_is_aborted_quietly_and_the_server_keeps_serving() -> None:
    p = SimProcess([*seed_flags(3), "--time-scale", "20", "--load-seconds", "1", "--enable-metrics"]).start()
    try:
        p.wait_ready()
        async with aiohttp.ClientSession() as s:
            await asyncio.gather(*(leave_mid_stream(s, p.url, chunks) for chunks in (2, 3, 5)))
            for _ in range(200):  # the abort lands at the next write; poll until the batch is empty
                if await running_reqs(s, p.url) == 0:
                    break
                await asyncio.sleep(0.02)
            assert await running_reqs(s, p.url) == 0
            before = (await get_json(s, p.url + "/sim/ground_truth"))["requests"]
            done = await stream_completion(s, p.url, {**LONG, "max_tokens": 40})
            after = await get_json(s, p.url + "/sim/ground_truth")
        aborted = [r for r in before.values() if r["finish_reason"] == "abort"]
        assert len(aborted) == 3 and all(0 < r["completion_tokens"] < 4000 for r in aborted)
        assert all(r["sim_end"] is not None for r in aborted)
        for rid, r in before.items():  # nothing more was generated for an aborted request
            assert after["requests"][rid]["completion_tokens"] == r["completion_tokens"]
        assert done.done and done.final_usage["completion_tokens"] == 40
        rid = done.chunks[0]["id"]
        assert after["requests"][rid]["completion_tokens"] == 40
        assert after["totals"]["completion_tokens"] == sum(r["completion_tokens"] for r in after["requests"].values())
        totals = after["totals"]  # the server's own warm-up request counts as finished too
        assert totals["aborted"] == 3 and totals["finished"] == totals["requests"] - 3
    finally:
        p.stop()
    out = p.output()
    assert "Traceback" not in out and "Error handling request" not in out, out[-2000:]
    assert "500 Internal Server Error" not in out


# ---- the engine on its own: ended requests leave the live map, their records stay (bounded) -------------------

def make_engine(max_running: int = 2) -> Engine:
    cfg = EngineConfig(steps=1, num_draft_tokens=2, max_running_requests=max_running, max_total_num_tokens=100_000,
                       decode_log_interval=40, cuda_graph=True, time_scale=1000.0, seed=7)
    return Engine(cfg, SimLog(1, out=io.StringIO()))


def params(max_tokens: int) -> GenParams:
    return GenParams(prompt="hello", max_tokens=max_tokens, temperature=0.0, ignore_eos=True)


async def drain(req) -> None:
    while (await req.out.get()).finish_reason is None:
        pass


async def test_aborted_and_finished_requests_leave_the_live_map_and_ground_truth_keeps_them() -> None:
    eng = make_engine(max_running=2)
    eng.start()
    try:
        running = eng.submit(params(100_000))
        waiting_long = eng.submit(params(100_000))
        queued = eng.submit(params(50))  # waits: the batch holds 2
        await running.out.get()  # prefilled, decoding
        await waiting_long.out.get()
        assert queued in eng.waiting
        eng.cancel(queued)  # aborted before it ever ran
        eng.cancel(running)  # aborted mid-decode
        tokens_at_abort = running.emitted
        short = eng.submit(params(30))
        await drain(short)
        eng.cancel(waiting_long)
        eng.cancel(short)  # already ended: stays "length"
        truth = eng.ground_truth()
    finally:
        await eng.stop()
    assert eng.requests == {}
    reasons = {rid: r["finish_reason"] for rid, r in truth["requests"].items()}
    assert reasons == {running.rid: "abort", waiting_long.rid: "abort", queued.rid: "abort", short.rid: "length"}
    assert truth["requests"][running.rid]["completion_tokens"] == tokens_at_abort > 0
    assert truth["requests"][queued.rid]["completion_tokens"] == 0
    assert truth["requests"][short.rid]["completion_tokens"] == 30
    t = truth["totals"]
    assert (t["requests"], t["finished"], t["aborted"]) == (4, 1, 3)
    assert t["completion_tokens"] == sum(r["completion_tokens"] for r in truth["requests"].values())


async def test_records_of_ended_requests_are_bounded_and_totals_stay_exact(monkeypatch) -> None:
    monkeypatch.setattr(engine_mod, "KEPT_FINISHED", 5)
    eng = make_engine(max_running=4)
    eng.start()
    try:
        reqs = [eng.submit(params(10 + i)) for i in range(12)]
        for req in reqs:
            await drain(req)
        truth = eng.ground_truth()
    finally:
        await eng.stop()
    assert eng.requests == {}
    assert list(truth["requests"]) == [r.rid for r in sorted(reqs, key=lambda r: r.sim_end)][-5:]
    t = truth["totals"]
    assert (t["requests"], t["finished"], t["aborted"]) == (12, 12, 0)
    assert t["completion_tokens"] == sum(10 + i for i in range(12))
