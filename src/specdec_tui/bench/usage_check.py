"""Whether a request's `usage` agrees with its own stream: a server's token count is believed only while it
could be true, so a lying or broken counter fails that request (kind `bad_usage`) instead of a figure.

A count may never exceed the request's max_tokens, go down, or be negative; and it may not be far from the
chunks that carried it: a chunk carries at most MAX_TOKENS_PER_CHUNK tokens (a speculative step accepts at most
its draft tokens + 1, SGLang's `--stream-interval` gathers a few steps into one chunk), and at least one chunk in
two carries a token (a text chunk is a token's text; an empty one, the role chunk, carries none)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specdec_tui.bench.client import RequestRecord

BAD_USAGE = "bad_usage"
MAX_TOKENS_PER_CHUNK = 256


def usage_step_error(count: object, before: int) -> str | None:
    """A usage count in the stream after `before`: the reason it cannot be true, else None."""
    if type(count) is not int:
        return f"usage.completion_tokens is {count!r}, not a whole number"
    if count < 0:
        return f"usage.completion_tokens is negative ({count})"
    if count < before:
        return f"usage.completion_tokens went down ({before} → {count})"
    return None


def usage_total_error(rec: RequestRecord, max_tokens: int | None) -> str | None:
    """The final count against max_tokens and the chunks received: the reason it cannot be true, else None."""
    total, chunks = rec.usage_total, len(rec.times)
    if total is None:
        return None
    if max_tokens is not None and total > max_tokens:
        return f"usage says {total} completion tokens, more than the {max_tokens} asked (max_tokens)"
    if total > chunks * MAX_TOKENS_PER_CHUNK:
        return f"usage says {total} completion tokens in {chunks} chunks (at most {MAX_TOKENS_PER_CHUNK} a chunk)"
    if total * 2 < chunks:
        return f"usage says {total} completion tokens for {chunks} chunks of text"
    return None


def check_usage(rec: RequestRecord, max_tokens: int | None) -> None:
    """Fail a finished request whose final usage contradicts its stream."""
    if rec.error is None and (reason := usage_total_error(rec, max_tokens)) is not None:
        rec.error, rec.error_detail = BAD_USAGE, reason
