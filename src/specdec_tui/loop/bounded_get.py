"""GETs of a server's small answers (/health, /v1/models, /server_info) that end: httpx's timeouts are per read,
so a server answering one byte a second never times out, and an endless body is read into memory whole. Here the
whole answer has a deadline and a size cap."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

ANSWER_DEADLINE_S = 10.0  # a whole answer, headers to last byte
ANSWER_LIMIT = 4 * 1024 * 1024  # bytes: /server_info of a large deployment is tens of KB


class AnswerTooSlow(Exception):
    """The whole answer did not arrive within the deadline."""


class AnswerTooLarge(Exception):
    """The answer's body is longer than the cap."""


@dataclass(frozen=True, slots=True)
class Answer:
    status_code: int
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


async def bounded_get(client: httpx.AsyncClient, url: str, *, deadline_s: float = ANSWER_DEADLINE_S,
                      limit: int = ANSWER_LIMIT) -> Answer:
    """The status and body of GET `url`; AnswerTooSlow / AnswerTooLarge (with the URL and bound in words) past
    a bound; httpx's own errors otherwise."""
    try:
        async with asyncio.timeout(deadline_s):
            async with client.stream("GET", url) as resp:
                parts: list[bytes] = []
                size = 0
                async for part in resp.aiter_bytes():
                    size += len(part)
                    if size > limit:
                        raise AnswerTooLarge(f"{url} answered more than {limit // 1024} KB")
                    parts.append(part)
                return Answer(resp.status_code, b"".join(parts))
    except TimeoutError:
        raise AnswerTooSlow(f"{url} did not answer in full within {deadline_s:g} s") from None
