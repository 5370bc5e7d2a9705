"""SGLang's native `/generate`: the request (`text` or `input_ids`, `sampling_params`, `stream`) and the answers.

A streamed answer is one `data: {…}` event per scheduler step, each with the text and output ids so far (0.5.23
streams whole text unless --incremental-streaming-output), then `data: [DONE]`; the last event's meta_info has
the finish reason as an object (`{"type": "length", "length": N}`), the latency and the request's speculative
figures. A non-streamed answer is that last event alone.
upstream: python/sglang/srt/entrypoints/http_server.py (`generate_request`, `serve_generate_request`),
managers/tokenizer_manager.py (meta_info, `_calculate_spec_decoding_metrics`), managers/schedule_batch.py
(FINISH_LENGTH / FINISH_MATCHED_TOKEN `to_json`), sampling/sampling_params.py (max_new_tokens 128, temperature 1).
"""

from __future__ import annotations

import asyncio
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from specdec_tui.sim.engine import Engine
from specdec_tui.sim.http_util import SENT_STATUS, json_response
from specdec_tui.sim.openai import BadRequest
from specdec_tui.sim.requests import GenParams, SimRequest
from specdec_tui.sim.textgen import EOS_TOKEN_ID

DEFAULT_MAX_NEW_TOKENS = 128


@dataclass(slots=True)
class NativeAnswer:
    """The text and ids of one /generate request so far."""

    req: SimRequest
    num_draft_tokens: int  # 0: speculative decoding is off
    text: str = ""
    output_ids: list[int] = field(default_factory=list)

    def add(self, text: str, tokens: int) -> None:
        start = len(self.output_ids)
        self.text += text
        self.output_ids.extend(_token_id(self.req.rid, i) for i in range(start, start + tokens))
        if self.req.finish_reason == "stop" and self.output_ids:
            self.output_ids[-1] = EOS_TOKEN_ID

    def event(self, e2e_latency_s: float) -> dict[str, Any]:
        return {"text": self.text, "output_ids": list(self.output_ids), "meta_info": self._meta_info(e2e_latency_s)}

    def _meta_info(self, e2e_latency_s: float) -> dict[str, Any]:
        req = self.req
        meta: dict[str, Any] = {
            "id": req.rid, "finish_reason": _finish(req), "prompt_tokens": req.prompt_tokens,
            "weight_version": "default", "num_retractions": 0, "reasoning_tokens": 0,
            "completion_tokens": req.emitted, "cached_tokens": 0,
        }
        if not req.done:
            return meta
        meta["e2e_latency"] = e2e_latency_s
        if self.num_draft_tokens > 0 and req.verify_steps > 0:
            details = req.spec_details(self.num_draft_tokens)
            for key in ("spec_accept_rate", "spec_accept_length", "spec_num_correct_drafts",
                        "spec_num_proposed_drafts", "spec_verify_ct"):
                meta[key] = details[key]
            if any(details["spec_correct_drafts_histogram"]):
                meta["spec_correct_drafts_histogram"] = details["spec_correct_drafts_histogram"]
        return meta


def _token_id(rid: str, position: int) -> int:
    """A stable stand-in token id (the sim has no tokenizer), below Qwen3.5's special tokens."""
    return zlib.crc32(f"{rid}|{position}".encode()) % 150_000


def _finish(req: SimRequest) -> dict[str, Any] | None:
    if req.finish_reason == "length":
        return {"type": "length", "length": req.params.max_tokens}
    if req.finish_reason == "stop":
        return {"type": "stop", "matched": EOS_TOKEN_ID}
    if req.finish_reason == "abort":
        return {"type": "abort", "message": "Abort before prefill"}
    return None


def parse_generate(body: Any) -> tuple[GenParams, bool]:
    """(the request's parameters, stream?) from a /generate body; one prompt (a batch is not simulated)."""
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    text, ids = body.get("text"), body.get("input_ids")
    if isinstance(text, list) and len(text) == 1:
        text = text[0]
    if isinstance(ids, list) and len(ids) == 1 and isinstance(ids[0], list):
        ids = ids[0]
    if (text is None) == (ids is None):
        raise BadRequest("Either text or input_ids should be provided.")
    if text is not None and not isinstance(text, str):
        raise BadRequest("the simulator serves one prompt per /generate request")
    params = body.get("sampling_params") or {}
    if not isinstance(params, dict):
        raise BadRequest("sampling_params must be an object")
    try:
        max_new = int(params.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS))
        raw_temp = params.get("temperature")
        temperature = 1.0 if raw_temp is None else float(raw_temp)
    except (TypeError, ValueError) as err:
        raise BadRequest(f"invalid sampling parameter: {err}") from None
    if max_new < 0 or temperature < 0:
        raise BadRequest("max_new_tokens and temperature must be non-negative")
    stream = bool(body.get("stream", False))
    prompt, extra = (text, 0) if isinstance(text, str) else ("", max(len(ids or []) - 1, 0))
    gen = GenParams(prompt=prompt, max_tokens=max(max_new, 1), temperature=temperature,
                    ignore_eos=bool(params.get("ignore_eos", False)), extra_prompt_tokens=extra, stream=stream,
                    log_metrics=bool(body.get("log_metrics", True)))
    return gen, stream


async def serve_generate(engine: Engine, num_draft_tokens: int, request: web.Request) -> web.StreamResponse:
    """POST/PUT /generate: the whole answer, or one event per scheduler step; a client that leaves aborts it."""
    try:
        params, stream = parse_generate(orjson.loads(await request.read()))
    except (orjson.JSONDecodeError, BadRequest) as err:
        return json_response({"error": {"message": str(err), "type": "invalid_request_error", "code": 400}}, 400)
    req = engine.submit(params)
    answer = NativeAnswer(req, num_draft_tokens)
    began = time.monotonic()
    resp: web.StreamResponse | None = None
    try:
        if stream:
            resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            request[SENT_STATUS] = resp.status
        while True:  # until the step that finishes it (req.done is set before that step's tokens are read)
            em = await req.out.get()
            answer.add(em.text, em.tokens)
            if resp is not None:
                await resp.write(b"data: " + orjson.dumps(answer.event(time.monotonic() - began)) + b"\n\n")
            if em.finish_reason:
                break
        if resp is None:
            return json_response(answer.event(time.monotonic() - began))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
    except ConnectionResetError:
        engine.cancel(req)
    except asyncio.CancelledError:
        engine.cancel(req)
        raise
    assert resp is not None
    return resp
