"""One streaming request against an OpenAI-compatible server, timed at byte arrival.

The hot loop does the least it can per chunk: stamp `perf_counter_ns()` as the bytes arrive, split SSE
on bytes, `orjson.loads` each event, and append (time, token delta) to compact arrays. Everything else
(token resolution, percentiles) happens after the request ends. Failures become an error kind on the
record instead of an exception, so one bad request never stops a run.
"""

from __future__ import annotations

import asyncio
from array import array
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any

import aiohttp
import httpx
import orjson
from httpx_aiohttp import AiohttpTransport

from specdec_tui.bench.sse import SseSplitter

ERROR_BODY_LIMIT = 2048
TEXT_SAMPLE_LIMIT = 8192  # characters of output kept per request for the degeneracy check


@dataclass(slots=True)
class RequestRecord:
    """Raw facts of one request: timestamps (ns, perf_counter) and what the stream said."""

    measured: bool
    start_ns: int = 0
    end_ns: int = 0  # last content chunk (or the failure time)
    first_content_ns: int | None = None
    times: array = field(default_factory=lambda: array("q"))  # content chunk arrival times
    deltas: array = field(default_factory=lambda: array("i"))  # completion_tokens change, -1 = no usage
    usage_total: int | None = None
    finish_reason: str | None = None
    error: str | None = None  # error kind: http_500, stall, reset, stream_error, bad_json, ...
    error_detail: str = ""
    text_parts: list[str] = field(default_factory=list)
    text_chars: int = 0
    done: bool = False  # saw [DONE]

    @property
    def ok(self) -> bool:
        return self.error is None


def make_client(concurrency: int, stall_timeout_s: float, api_key: str | None) -> httpx.AsyncClient:
    """One pooled client for a whole run: aiohttp transport (≈5× less CPU per chunk than httpx's own),
    a connection limit above the highest concurrency, read timeout = the stall timeout. Environment
    proxies are ignored on purpose: a benchmark must measure the server, not a proxy."""
    limits = httpx.Limits(max_connections=concurrency + 8, max_keepalive_connections=concurrency + 8)
    headers = {"Accept": "text/event-stream"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return httpx.AsyncClient(
        transport=AiohttpTransport(limits=limits, trust_env=False),
        timeout=httpx.Timeout(connect=10.0, read=stall_timeout_s, write=30.0, pool=None),
        headers=headers,
        trust_env=False,
    )


def classify_exception(exc: BaseException) -> str:
    """Error kind for a transport failure, looking through httpx's wrapping to the aiohttp cause
    (httpx-aiohttp maps a server disconnect to ConnectTimeout, which would mislead)."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < 6:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    for e in chain:
        if isinstance(e, aiohttp.SocketTimeoutError) or isinstance(e, httpx.ReadTimeout):
            return "stall"
        if isinstance(e, aiohttp.ClientConnectorError):
            return "connect"
        if isinstance(
            e, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, ConnectionResetError, httpx.ReadError)
        ):
            return "reset"
    for e in chain:
        if isinstance(e, (httpx.ConnectError, ConnectionRefusedError)):
            return "connect"
        if isinstance(e, (httpx.TimeoutException, asyncio.TimeoutError, TimeoutError)):
            return "timeout"
        if isinstance(e, (httpx.TransportError, aiohttp.ClientError, OSError)):
            return "reset"
    return "client_error"


async def stream_request(
    client: httpx.AsyncClient, url: str, body: bytes, chat: bool, rec: RequestRecord, timeout_s: float
) -> RequestRecord:
    """Send one streaming request and fill `rec`. Never raises except on cancellation."""
    rec.start_ns = perf_counter_ns()
    try:
        async with asyncio.timeout(timeout_s):
            await _stream(client, url, body, chat, rec)
    except asyncio.CancelledError:
        rec.error = rec.error or "cancelled"
        raise
    except TimeoutError:
        rec.error = "timeout"
        rec.error_detail = f"no complete response within {timeout_s:g} s"
    except Exception as exc:  # noqa: BLE001 - every failure is a counted error kind, never a crash
        rec.error = classify_exception(exc)
        rec.error_detail = f"{type(exc).__name__}: {exc}"[:300]
    if rec.error is None and not rec.done and rec.finish_reason is None:
        rec.error = "truncated"
        rec.error_detail = "stream ended without [DONE] or a finish_reason"
    if rec.error is None and len(rec.times) == 0:
        rec.error = "empty"
        rec.error_detail = "stream carried no content"
    if rec.error is not None and rec.end_ns == 0:
        rec.end_ns = perf_counter_ns()
    return rec


async def _stream(client: httpx.AsyncClient, url: str, body: bytes, chat: bool, rec: RequestRecord) -> None:
    headers = {"Content-Type": "application/json"}
    async with client.stream("POST", url, content=body, headers=headers) as resp:
        if resp.status_code >= 400:
            raw = b""
            async for part in resp.aiter_raw():
                raw += part
                if len(raw) > ERROR_BODY_LIMIT:
                    break
            rec.error = f"http_{resp.status_code}"
            rec.error_detail = raw[:300].decode("utf-8", "replace")
            return
        splitter = SseSplitter()
        times = rec.times
        deltas = rec.deltas
        texts = rec.text_parts
        last_ct = 0
        loads = orjson.loads
        # the response's byte stream itself, not aiter_raw(): one async-generator layer less per read
        async for raw in resp.stream:  # type: ignore[union-attr]
            t = perf_counter_ns()
            for name, data in splitter.feed(raw):
                if data == b"[DONE]":
                    rec.done = True
                    continue
                try:
                    obj = loads(data)
                except orjson.JSONDecodeError:
                    rec.error = "bad_json"
                    rec.error_detail = data[:200].decode("utf-8", "replace")
                    return
                if name == b"error" or (type(obj) is dict and "error" in obj and not obj.get("choices")):
                    rec.error = "stream_error"
                    rec.error_detail = _error_message(obj)
                    return
                if type(obj) is not dict:
                    continue
                usage = obj.get("usage")
                ct = usage.get("completion_tokens") if usage else None
                choices = obj.get("choices")
                if not choices:
                    if ct is not None:
                        rec.usage_total = ct
                    continue
                c0 = choices[0]
                if chat:
                    delta = c0.get("delta") or {}
                    text = delta.get("content") or delta.get("reasoning_content")
                else:
                    text = c0.get("text")
                fr = c0.get("finish_reason")
                if fr:
                    rec.finish_reason = fr
                if ct is not None:
                    k = ct - last_ct
                    last_ct = ct
                    rec.usage_total = ct
                else:
                    k = -1
                if text or k > 0:
                    times.append(t)
                    deltas.append(k)
                    rec.end_ns = t
                    if text:
                        if rec.first_content_ns is None:
                            rec.first_content_ns = t
                        if rec.text_chars < TEXT_SAMPLE_LIMIT:
                            texts.append(text)
                            rec.text_chars += len(text)
        if splitter.pending.strip():
            # the stream ended inside an event: accept a bare [DONE], anything else is a cut stream
            for _name, data in splitter.feed(b"\n\n"):
                if data == b"[DONE]":
                    rec.done = True
                else:
                    rec.error = "truncated"
                    rec.error_detail = "stream ended inside an event"


def _error_message(obj: Any) -> str:
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    return str(obj)[:300]
