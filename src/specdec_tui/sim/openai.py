"""OpenAI-compatible request parsing and response shapes, as SGLang 0.5.23's OpenAI adapter emits them.

Each object carries the request's `model` as sent ("default" when absent). Chat chunks are msgspec structs that
omit what is None (`usage` unless continuous usage stats were asked; a delta's `role` and `content`) but always
write `reasoning_content`; the finish reason comes in a chunk of its own. Completion chunks, the sglext chunk
and the chat usage chunk are pydantic dumps (None written as null); the completions usage chunk is dumped with
exclude_none. upstream: python/sglang/srt/entrypoints/openai/sse_utils.py (StreamChunk, StreamDelta),
protocol.py (CompletionStreamResponse, ChatCompletionStreamResponse, UsageInfo, the full responses),
serving_chat.py and serving_completions.py (the order of the chunks), usage_processor.py."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from specdec_tui.sim.requests import Emission, GenParams, SimRequest
from specdec_tui.sim.textgen import EOS_TOKEN_ID

CHAT_TEMPLATE_TOKENS_PER_MESSAGE = 5
DEFAULT_MODEL_NAME = "default"  # upstream: openai/protocol.py, a request without `model`


class BadRequest(ValueError):
    """The request body is not usable; answered 400 with SGLang's error shape."""


@dataclass(slots=True)
class StreamOpts:
    stream: bool
    include_usage: bool
    continuous_usage: bool
    chat: bool
    spec_details: bool = False  # return_spec_tokens_details: end with sglext.spec_tokens_details
    model: str = DEFAULT_MODEL_NAME  # the request's own `model`, echoed in every object of the answer


def _chat_prompt(messages: Any) -> tuple[str, int]:
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list")
    parts: list[str] = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        parts.append(str(content or ""))
    return "\n".join(parts), CHAT_TEMPLATE_TOKENS_PER_MESSAGE * len(messages)


def parse_request(body: Any, chat: bool, default_max_tokens: int) -> tuple[GenParams, StreamOpts]:
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    if chat:
        prompt, extra = _chat_prompt(body.get("messages"))
    else:
        raw = body.get("prompt")
        if isinstance(raw, list):
            raw = " ".join(str(x) for x in raw)
        if raw is None:
            raise BadRequest("prompt is required")
        prompt, extra = str(raw), 0
    max_tokens = body.get("max_completion_tokens") if chat else None
    max_tokens = max_tokens or body.get("max_tokens") or default_max_tokens
    try:
        max_tokens = int(max_tokens)
        raw_temp = body.get("temperature")
        temperature = 1.0 if raw_temp is None else float(raw_temp)
    except (TypeError, ValueError) as err:
        raise BadRequest(f"invalid sampling parameter: {err}") from None
    if max_tokens < 1:
        raise BadRequest("max_tokens must be at least 1")
    if temperature < 0:
        raise BadRequest("temperature must be non-negative")
    so = body.get("stream_options") or {}
    opts = StreamOpts(
        stream=bool(body.get("stream", False)),
        include_usage=bool(so.get("include_usage", False)),
        continuous_usage=bool(so.get("continuous_usage_stats", False)),
        chat=chat,
        spec_details=bool(body.get("return_spec_tokens_details", False)),
        model=str(body.get("model") or DEFAULT_MODEL_NAME),
    )
    params = GenParams(
        prompt=prompt,
        max_tokens=max_tokens,
        temperature=temperature,
        ignore_eos=bool(body.get("ignore_eos", False)),
        extra_prompt_tokens=extra,
        stream=opts.stream,
    )
    return params, opts


def usage(req: SimRequest) -> dict[str, Any]:
    """UsageInfo in field order; reasoning details only when there were reasoning tokens (never here)."""
    return {
        "prompt_tokens": req.prompt_tokens,
        "total_tokens": req.prompt_tokens + req.emitted,
        "completion_tokens": req.emitted,
        "prompt_tokens_details": None,
        "reasoning_tokens": 0,
        "completion_tokens_details": None,
    }


def _matched_stop(finish: str | None) -> int | None:
    return EOS_TOKEN_ID if finish == "stop" else None


class ChunkShaper:
    """Builds the JSON objects of one response."""

    def __init__(self, req: SimRequest, opts: StreamOpts, num_draft_tokens: int = 0) -> None:
        self.req = req
        self.opts = opts
        self.model = opts.model
        self.num_draft_tokens = num_draft_tokens  # 0: speculative decoding is off, no spec details exist
        self.created = int(time.time())
        self.id = req.rid

    @property
    def _object(self) -> str:
        return "chat.completion.chunk" if self.opts.chat else "text_completion"

    def _head(self, obj: str) -> dict[str, Any]:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model}

    def _pydantic_chunk(self, choices: list[dict[str, Any]], usage_obj: dict[str, Any] | None) -> dict[str, Any]:
        """A pydantic stream response: `usage` written even when None."""
        return {**self._head(self._object), "choices": choices, "usage": usage_obj}

    def _chat_chunk(self, delta: dict[str, Any], finish: str | None = None,
                    usage_obj: dict[str, Any] | None = None) -> dict[str, Any]:
        """sse_utils.build_sse_content: StreamChunk omits a None usage; StreamChoice writes all its fields."""
        choice = {"index": 0, "delta": {"reasoning_content": None, **delta}, "logprobs": None,
                  "finish_reason": finish, "matched_stop": _matched_stop(finish)}
        chunk = {**self._head("chat.completion.chunk"), "choices": [choice]}
        return {**chunk, "usage": usage_obj} if usage_obj is not None else chunk

    def role_chunk(self) -> dict[str, Any]:
        return self._chat_chunk({"role": "assistant", "content": ""})

    def content_chunks(self, em: Emission) -> list[dict[str, Any]]:
        """The chunks one scheduler step sends: its text (none when empty, in chat), then in chat the finish
        reason in a chunk of its own; a completion's last text chunk carries the finish reason itself."""
        u = usage(self.req) if self.opts.continuous_usage else None
        if not self.opts.chat:
            choice = {"index": 0, "text": em.text, "logprobs": None, "finish_reason": em.finish_reason,
                      "matched_stop": _matched_stop(em.finish_reason)}
            return [self._pydantic_chunk([choice], u)]
        chunks = [self._chat_chunk({"content": em.text}, usage_obj=u)] if em.text else []
        if em.finish_reason:
            chunks.append(self._chat_chunk({}, em.finish_reason))
        return chunks

    def _sglext(self) -> dict[str, Any] | None:
        """SglExt drops its None fields, so only spec_tokens_details is there (one object for n = 1)."""
        if not self.opts.spec_details or self.num_draft_tokens <= 0:
            return None
        return {"spec_tokens_details": self.req.spec_details(self.num_draft_tokens)}

    def sglext_chunk(self) -> dict[str, Any] | None:
        """The response-level chunk SGLang streams after the last content chunk and before the usage chunk,
        when the request asked return_spec_tokens_details and the server speculates: `choices` empty."""
        ext = self._sglext()
        if ext is None:
            return None
        return {**self._pydantic_chunk([], None), "sglext": ext}

    def usage_chunk(self) -> dict[str, Any]:
        """Chat: a pydantic dump (null details kept); completions: dumped with exclude_none."""
        if self.opts.chat:
            return self._pydantic_chunk([], usage(self.req))
        return {**self._head("text_completion"), "choices": [],
                "usage": {k: v for k, v in usage(self.req).items() if v is not None}}

    def full_response(self, text: str) -> dict[str, Any]:
        finish = self.req.finish_reason
        if self.opts.chat:
            message = {"role": "assistant", "content": text, "reasoning_content": None}
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish,
                      "matched_stop": _matched_stop(finish)}
            obj = "chat.completion"
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish,
                      "matched_stop": _matched_stop(finish)}
            obj = "text_completion"
        response = {**self._head(obj), "choices": [choice], "usage": usage(self.req), "metadata": None}
        ext = self._sglext()
        return {**response, "sglext": ext} if ext is not None else response
