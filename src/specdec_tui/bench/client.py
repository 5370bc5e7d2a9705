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
import orjson

from specdec_tui.bench.sse import parse_block, without_cr
from specdec_tui.bench.usage_check import BAD_USAGE, check_usage, usage_step_error

ERROR_BODY_LIMIT = 2048
_SLOW = object()  # marks an event block the fast path did not decode
_STOP = object()  # a block that ends the request (its error is on the record)
TEXT_SAMPLE_LIMIT = 8192  # characters of output kept per sampled request for the degeneracy check
EVENT_LIMIT = 1 << 20  # bytes of one unfinished event; SGLang's largest (a usage or sglext chunk) is a few KB


class OversizedEvent(Exception):
    """More than EVENT_LIMIT bytes without an event's end: a file or a page at the URL, not an event stream (the
    reader kept every byte and joined them again at each read until the request's timeout)."""


def _joined(unfinished: bytes, raw: bytes) -> bytes:
    """The unfinished event so far and the new bytes; called only when an event spans reads (not per chunk)."""
    if len(unfinished) > EVENT_LIMIT:
        raise OversizedEvent(f"over {EVENT_LIMIT >> 20} MB without an event's end: not an event stream")
    return unfinished + raw


@dataclass(slots=True)
class RequestRecord:
    """Raw facts of one request: timestamps (ns, perf_counter) and what the stream said."""

    measured: bool
    start_ns: int = 0
    end_ns: int = 0  # last content chunk (or the failure time)
    first_content_ns: int | None = None
    times: array[int] = field(default_factory=lambda: array("q"))  # content chunk arrival times
    deltas: array[int] = field(default_factory=lambda: array("i"))  # completion_tokens change, -1 = no usage
    usage_total: int | None = None
    spec_verify_ct: int | None = None  # sglext.spec_tokens_details: the server's verify steps for this request
    spec_accept_length: float | None = None  # same place: completion tokens / spec_verify_ct
    finish_reason: str | None = None
    error: str | None = None  # error kind: http_500, stall, reset, stream_error, bad_json, ...
    error_detail: str = ""
    keep_text: bool = False  # sampled for the degeneracy check: keep the first TEXT_SAMPLE_LIMIT chars
    text_parts: list[str] = field(default_factory=list)
    done: bool = False  # saw [DONE]
    last_read_ns: int = 0  # the last bytes' arrival (or the start): what the stall watch looks at

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def spec_counts(self) -> tuple[int, int] | None:
        """(completion tokens, verify steps) by the server's per-request details; None without them."""
        if self.spec_verify_ct is None:
            return None
        if self.usage_total is not None:
            return self.usage_total, self.spec_verify_ct
        return round((self.spec_accept_length or 0.0) * self.spec_verify_ct), self.spec_verify_ct


JSON_HEADERS = {"Content-Type": "application/json"}


def make_client(concurrency: int, stall_timeout_s: float, api_key: str | None) -> aiohttp.ClientSession:
    """One pooled aiohttp session for a whole run, used directly (no httpx layer: its per-request
    objects and per-read async generator cost more CPU than the rest of the hot loop). A connection
    limit above the highest concurrency. No socket read timeout: aiohttp would cancel and re-arm a timer on
    every chunk (at c=256 that alone cost ~15 % of a chunk's CPU, bench/bench_engine.py); `stream_request`'s
    `_StallWatch` looks at the last read once per stall timeout instead (`stall_timeout_s` is kept for
    callers). Environment proxies are ignored on purpose: a benchmark must measure the server, not a proxy."""
    headers = {"Accept": "text/event-stream"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=concurrency + 8),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=10.0, sock_read=None),
        headers=headers,
        trust_env=False,
    )


def classify_exception(exc: BaseException) -> str:
    """Error kind for a transport failure, looking through any wrapping to the root cause."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < 6:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    for e in chain:
        if isinstance(e, OversizedEvent):
            return "oversized"
        if isinstance(e, aiohttp.SocketTimeoutError):
            return "stall"
        if isinstance(e, aiohttp.ClientConnectorError):
            return "connect"
        if isinstance(e, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, ConnectionResetError)):
            return "reset"
    for e in chain:
        if isinstance(e, ConnectionRefusedError):
            return "connect"
        if isinstance(e, (aiohttp.ServerTimeoutError, asyncio.TimeoutError, TimeoutError)):
            return "timeout"
        if isinstance(e, (aiohttp.ClientError, OSError)):
            return "reset"
    return "client_error"


class _StallWatch:
    """Ends a request that received no bytes for `stall_s` (kind "stall"): a timer that fires once per stall
    timeout and, while bytes still come, moves itself to the last read's time + stall_s — not a timer re-armed
    per chunk."""

    __slots__ = ("fired", "handle", "loop", "rec", "stall_ns", "task")

    def __init__(self, rec: RequestRecord, stall_s: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.rec, self.stall_ns, self.fired = rec, int(stall_s * 1e9), False
        self.handle = self.loop.call_later(stall_s, self._check)

    def _check(self) -> None:
        idle = perf_counter_ns() - self.rec.last_read_ns
        if idle >= self.stall_ns and self.task is not None:
            self.fired = True
            self.task.cancel()
        else:
            self.handle = self.loop.call_later((self.stall_ns - idle) / 1e9, self._check)

    def stalled(self) -> bool:
        """After a CancelledError: whether it was this watch's (then taken back), not a real cancel."""
        return self.fired and self.task is not None and self.task.uncancel() == 0


async def stream_request(
    session: aiohttp.ClientSession, url: str, body: bytes, chat: bool, rec: RequestRecord, timeout_s: float,
    max_tokens: int | None = None, stall_s: float | None = None,
) -> RequestRecord:
    """Send one streaming request and fill `rec`. Never raises except on cancellation. A usage that
    contradicts the stream (`bench.usage_check`) fails the request; so do `stall_s` without a byte."""
    rec.start_ns = rec.last_read_ns = perf_counter_ns()
    watch = _StallWatch(rec, stall_s) if stall_s else None
    try:
        async with asyncio.timeout(timeout_s):
            await _stream(session, url, body, chat, rec)
    except asyncio.CancelledError:
        if watch is None or not watch.stalled():
            rec.error = rec.error or "cancelled"
            raise
        rec.error = "stall"
        rec.error_detail = f"no bytes for the stall timeout ({stall_s:g} s)"
    except TimeoutError as exc:
        if isinstance(exc, aiohttp.ClientError):  # aiohttp's socket timeouts are TimeoutErrors too
            rec.error = classify_exception(exc)
            rec.error_detail = f"no bytes for the stall timeout: {exc}"[:300]
        else:
            rec.error = "timeout"
            rec.error_detail = f"no complete response within {timeout_s:g} s"
    except Exception as exc:  # noqa: BLE001 - every failure is a counted error kind, never a crash
        rec.error = classify_exception(exc)
        rec.error_detail = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        if watch is not None:
            watch.handle.cancel()
    if rec.error is None and not rec.done and rec.finish_reason is None:
        rec.error = "truncated"
        rec.error_detail = "stream ended without [DONE] or a finish_reason"
    if rec.error is None and len(rec.times) == 0:
        rec.error = "empty"
        rec.error_detail = "stream carried no content"
    check_usage(rec, max_tokens)
    if rec.error is not None and rec.end_ns == 0:
        rec.end_ns = perf_counter_ns()
    return rec


async def _stream(session: aiohttp.ClientSession, url: str, body: bytes, chat: bool, rec: RequestRecord) -> None:
    async with session.post(url, data=body, headers=JSON_HEADERS) as resp:
        if resp.status >= 400:
            raw = b""
            while len(raw) <= ERROR_BODY_LIMIT and (part := await resp.content.readany()):
                raw += part
            rec.error = f"http_{resp.status}"
            rec.error_detail = raw[:300].decode("utf-8", "replace")
            return
        await _read_events(resp.content, chat, rec)


async def _read_events(content: aiohttp.StreamReader, chat: bool, rec: RequestRecord) -> None:
    """The hot loop. Per read: one clock read, then the SSE split (inline: a call per read costs what the rest of
    a chunk does); per event: one `orjson.loads`, a few dict lookups and two appends to typed arrays. A block that
    is not one `data: {...}` line goes through `_decoded`, an event without choices (usage, sglext, an error)
    through `_without_choices`. The record's scalar fields are written back once, at the end (or on failure),
    not per chunk. Its branches stay in one function on purpose (radon grade E, the one function allowed it:
    issue 34): each helper call per chunk was measured at the client's ITL cost, bench/bench_engine.py."""
    readany = content.readany
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    append_time = rec.times.append
    append_delta = rec.deltas.append
    keep_text = rec.keep_text
    texts = rec.text_parts
    text_chars = 0
    first_ns: int | None = None
    last_ns = 0
    last_ct = 0
    saw_ct = False
    buf = held = b""
    try:
        while raw := await readany():
            rec.last_read_ns = t = perf_counter_ns()  # byte arrival, before any parsing
            if buf:
                raw = _joined(buf, raw)
            if b"\r" in raw:
                raw, held = without_cr(raw)
            *blocks, buf = raw.split(b"\n\n")
            if held:
                buf, held = buf + held, b""
            for block in blocks:
                obj: Any = _SLOW
                if block[:6] == b"data: ":  # the common case: one data line holding a JSON object
                    try:
                        obj = loads(block[6:])
                    except decode_error:
                        pass  # [DONE], several data lines, or garbage: `_decoded` tells which
                if obj is _SLOW:
                    obj = _decoded(block, rec)
                    if obj is _STOP:
                        return
                try:  # SGLang's content chunk, by subscripts (cheaper than .get); any other shape below
                    c0 = obj["choices"][0]
                    text = c0["delta"]["content"] if chat else c0["text"]
                    if chat and not text:  # a reasoning model's thinking streams beside the content
                        text = c0["delta"].get("reasoning_content")
                    fr = c0["finish_reason"]
                    ct = obj["usage"]["completion_tokens"]
                except (KeyError, IndexError, TypeError):
                    choices = obj.get("choices") if type(obj) is dict else None
                    if not choices:
                        if type(obj) is dict:
                            ct = _without_choices(obj, rec, last_ct)
                            if rec.error is not None:
                                return
                            if ct is not None:
                                last_ct, saw_ct = ct, True
                        continue
                    c0 = choices[0]
                    if chat:
                        delta = c0.get("delta")
                        text = (delta.get("content") or delta.get("reasoning_content")) if delta else None
                    else:
                        text = c0.get("text")
                    fr = c0.get("finish_reason")
                    usage = obj.get("usage")
                    ct = usage.get("completion_tokens") if usage else None
                if fr:
                    rec.finish_reason = fr
                if ct is not None:
                    if type(ct) is not int or ct < last_ct:  # ct < 0 too: last_ct starts at 0
                        rec.error, rec.error_detail = BAD_USAGE, usage_step_error(ct, last_ct) or ""
                        return
                    k = ct - last_ct
                    last_ct, saw_ct = ct, True
                else:
                    k = -1
                if text or k > 0:
                    append_time(t)
                    append_delta(k)
                    last_ns = t
                    if text:
                        if first_ns is None:
                            first_ns = t
                        if keep_text and text_chars < TEXT_SAMPLE_LIMIT:
                            texts.append(text)
                            text_chars += len(text)
        if buf.strip():
            # the stream ended inside an event: accept a bare [DONE], anything else is a cut stream
            ev = parse_block(buf)
            if ev is not None and ev[1] == b"[DONE]":
                rec.done = True
            elif ev is not None:
                rec.error = "truncated"
                rec.error_detail = "stream ended inside an event"
    finally:
        rec.first_content_ns = first_ns
        if last_ns:
            rec.end_ns = last_ns
        if saw_ct:
            rec.usage_total = last_ct


def _decoded(block: bytes, rec: RequestRecord) -> Any:
    """The object of a block the fast path could not read (several lines, an event name, [DONE], garbage): None
    when it carries nothing to count, _STOP when it ends the request (bad JSON, an error event)."""
    ev = parse_block(block)
    if ev is None:
        return None
    name, data = ev
    if data == b"[DONE]":
        rec.done = True
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        rec.error = "bad_json"
        rec.error_detail = data[:200].decode("utf-8", "replace")
        return _STOP
    if name == b"error":
        rec.error = "stream_error"
        rec.error_detail = _error_message(obj)
        return _STOP
    return obj


def _without_choices(obj: dict[str, Any], rec: RequestRecord, last_ct: int) -> int | None:
    """An event with no choices: an error (sets rec.error), SGLang's final usage or sglext chunk. Returns the usage
    count it carried (None without one); a count that cannot follow `last_ct` sets rec.error."""
    if "error" in obj:
        rec.error = "stream_error"
        rec.error_detail = _error_message(obj)
        return None
    usage = obj.get("usage")
    ct = usage.get("completion_tokens") if usage else None
    if ct is not None and (bad := usage_step_error(ct, last_ct)) is not None:
        rec.error, rec.error_detail = BAD_USAGE, bad
        return None
    ext = obj.get("sglext")
    if ext:
        _read_spec_details(ext, rec)
    return ct


def _read_spec_details(ext: Any, rec: RequestRecord) -> None:
    """SGLang's response-level chunk (`choices: []`) after the last content chunk, when the request asked
    `return_spec_tokens_details`: `sglext.spec_tokens_details` is one object, or a list of them for n > 1
    (upstream: python/sglang/srt/entrypoints/openai/serving_completions.py, serving_chat.py)."""
    details = ext.get("spec_tokens_details") if isinstance(ext, dict) else None
    if isinstance(details, list):
        details = details[0] if details else None
    if not isinstance(details, dict):
        return
    verify = details.get("spec_verify_ct")
    if isinstance(verify, int) and not isinstance(verify, bool) and verify >= 0:
        rec.spec_verify_ct = verify
        length = details.get("spec_accept_length")
        rec.spec_accept_length = float(length) if isinstance(length, (int, float)) else None


def _error_message(obj: Any) -> str:
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    return str(obj)[:300]
