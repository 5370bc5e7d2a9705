"""OpenAI-compatible request parsing and response shapes, as SGLang's OpenAI adapter emits them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from specdec_tui.sim.engine import Emission, GenParams, SimRequest
from specdec_tui.sim.textgen import EOS_TOKEN_ID

CHAT_TEMPLATE_TOKENS_PER_MESSAGE = 5


class BadRequest(ValueError):
    """The request body is not usable; answered 400 with SGLang's error shape."""


@dataclass(slots=True)
class StreamOpts:
    stream: bool
    include_usage: bool
    continuous_usage: bool
    chat: bool
    spec_details: bool = False  # return_spec_tokens_details: end with sglext.spec_tokens_details


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
    return {
        "prompt_tokens": req.prompt_tokens,
        "total_tokens": req.prompt_tokens + req.emitted,
        "completion_tokens": req.emitted,
        "prompt_tokens_details": None,
        "reasoning_tokens": 0,
    }


def _matched_stop(finish: str | None) -> int | None:
    return EOS_TOKEN_ID if finish == "stop" else None


class ChunkShaper:
    """Builds the JSON objects of one response."""

    def __init__(self, req: SimRequest, opts: StreamOpts, model_name: str, num_draft_tokens: int = 0) -> None:
        self.req = req
        self.opts = opts
        self.model = model_name
        self.num_draft_tokens = num_draft_tokens  # 0: speculative decoding is off, no spec details exist
        self.created = int(time.time())
        self.id = req.rid

    def _base(self, obj: str, choices: list[dict[str, Any]], usage_obj: dict[str, Any] | None) -> dict[str, Any]:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model, "choices": choices,
                "usage": usage_obj}

    def role_chunk(self) -> dict[str, Any]:
        delta = {"role": "assistant", "content": "", "reasoning_content": None, "tool_calls": None}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None, "matched_stop": None}
        u = usage(self.req) if self.opts.continuous_usage else None
        return self._base("chat.completion.chunk", [choice], u)

    def content_chunk(self, em: Emission) -> dict[str, Any]:
        u = usage(self.req) if self.opts.continuous_usage else None
        if self.opts.chat:
            delta = {"role": None, "content": em.text, "reasoning_content": None, "tool_calls": None}
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": em.finish_reason,
                      "matched_stop": _matched_stop(em.finish_reason)}
            return self._base("chat.completion.chunk", [choice], u)
        choice = {"index": 0, "text": em.text, "logprobs": None, "finish_reason": em.finish_reason,
                  "matched_stop": _matched_stop(em.finish_reason)}
        return self._base("text_completion", [choice], u)

    def _sglext(self) -> dict[str, Any] | None:
        """SglExt drops its None fields, so only spec_tokens_details is there (one object for n = 1)."""
        if not self.opts.spec_details or self.num_draft_tokens <= 0:
            return None
        return {"spec_tokens_details": self.req.spec_details(self.num_draft_tokens)}

    def sglext_chunk(self) -> dict[str, Any] | None:
        """The response-level chunk SGLang streams after the last content chunk and before the usage chunk,
        when the request asked return_spec_tokens_details and the server speculates: `choices` empty.
        upstream: python/sglang/srt/entrypoints/openai/serving_completions.py, serving_chat.py."""
        ext = self._sglext()
        if ext is None:
            return None
        obj = "chat.completion.chunk" if self.opts.chat else "text_completion"
        return {**self._base(obj, [], None), "sglext": ext}

    def usage_chunk(self) -> dict[str, Any]:
        obj = "chat.completion.chunk" if self.opts.chat else "text_completion"
        return self._base(obj, [], usage(self.req))

    def full_response(self, text: str) -> dict[str, Any]:
        finish = self.req.finish_reason
        if self.opts.chat:
            message = {"role": "assistant", "content": text, "reasoning_content": None, "tool_calls": None}
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish,
                      "matched_stop": _matched_stop(finish)}
            return self._with_sglext(self._base("chat.completion", [choice], usage(self.req)))
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish,
                  "matched_stop": _matched_stop(finish)}
        return self._with_sglext(self._base("text_completion", [choice], usage(self.req)))

    def _with_sglext(self, response: dict[str, Any]) -> dict[str, Any]:
        ext = self._sglext()
        return {**response, "sglext": ext} if ext is not None else response
