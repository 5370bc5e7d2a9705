"""A client that leaves mid-stream (a cancelled benchmark): the simulator aborts the request quietly —
no traceback in its log, the request leaves the running batch, ground truth stays exact — and goes on serving."""

from __future__ import annotations

import asyncio

import aiohttp

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
        aborted = [r for r in before.values() if r["finish_reason"] is None]
        assert len(aborted) == 3 and all(0 < r["completion_tokens"] < 4000 for r in aborted)
        for rid, r in before.items():  # nothing more was generated for an aborted request
            assert after["requests"][rid]["completion_tokens"] == r["completion_tokens"]
        assert done.done and done.final_usage["completion_tokens"] == 40
        rid = done.chunks[0]["id"]
        assert after["requests"][rid]["completion_tokens"] == 40
        assert after["totals"]["completion_tokens"] == sum(r["completion_tokens"] for r in after["requests"].values())
    finally:
        p.stop()
    out = p.output()
    assert "Traceback" not in out and "Error handling request" not in out, out[-2000:]
    assert "500 Internal Server Error" not in out
