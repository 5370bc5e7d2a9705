"""The server's own speculative-acceptance figures, read before and after each level.

SGLang reports `internal_states[0].avg_spec_accept_length` in `GET /get_server_info` and, with
`--enable-metrics`, a `sglang:spec_accept_length` gauge on `/metrics`. Both are recent averages, not
cumulative, so a reading taken right after the level describes the level. Where the server exposes
cumulative counters (accepted draft tokens and verify steps) the before/after delta is used instead,
since that covers exactly the level. Any endpoint may be missing: the figure is then None.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import aiohttp
import orjson

PROBE_TIMEOUT_S = 5.0
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
ACCEPTED_COUNTERS = ("sglang:spec_accepted_tokens_total", "sglang:num_spec_accepted_tokens_total")
VERIFY_COUNTERS = ("sglang:spec_verify_ct_total", "sglang:spec_verify_steps_total", "sglang:num_spec_verify_total")
ACCEPT_GAUGE = "sglang:spec_accept_length"


@dataclass(slots=True)
class ServerSnapshot:
    accept_length_info: float | None = None  # /get_server_info average
    metrics: dict[str, float] = field(default_factory=dict)  # /metrics samples summed over labels


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text → {name: value summed over label sets}; gauges averaged would need counts, so
    ACCEPT_GAUGE is stored as the mean of its label sets under its own name."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = _SAMPLE.match(line)
        if not m:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        if math.isnan(value):
            continue
        name = m.group(1)
        sums[name] = sums.get(name, 0.0) + value
        counts[name] = counts.get(name, 0) + 1
    if ACCEPT_GAUGE in sums:
        sums[ACCEPT_GAUGE] /= counts[ACCEPT_GAUGE]
    return sums


async def get_body(session: aiohttp.ClientSession, url: str, timeout_s: float = PROBE_TIMEOUT_S) -> bytes | None:
    """The body of a 200 answer to GET `url`; None for any other status or any failure."""
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout_s)) as resp:
            return await resp.read() if resp.status == 200 else None
    except (TimeoutError, aiohttp.ClientError, OSError):
        return None


async def snapshot(session: aiohttp.ClientSession, base_url: str) -> ServerSnapshot:
    snap = ServerSnapshot()
    body = await get_body(session, f"{base_url}/get_server_info")
    try:
        info = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        info = None
    states = info.get("internal_states") if isinstance(info, dict) else None
    if isinstance(states, list) and states and isinstance(states[0], dict):
        val = states[0].get("avg_spec_accept_length")
        if isinstance(val, (int, float)) and val > 0:
            snap.accept_length_info = float(val)
    body = await get_body(session, f"{base_url}/metrics")
    if body:
        snap.metrics = parse_metrics(body.decode("utf-8", "replace"))
    return snap


def accept_length_between(before: ServerSnapshot, after: ServerSnapshot) -> float | None:
    """Server-side accept length for what happened between two snapshots (see module docstring)."""
    for acc_name in ACCEPTED_COUNTERS:
        for ver_name in VERIFY_COUNTERS:
            if acc_name in after.metrics and ver_name in after.metrics:
                d_acc = after.metrics[acc_name] - before.metrics.get(acc_name, 0.0)
                d_ver = after.metrics[ver_name] - before.metrics.get(ver_name, 0.0)
                if d_ver > 0:
                    return 1.0 + d_acc / d_ver
    if after.accept_length_info is not None:
        return after.accept_length_info
    gauge = after.metrics.get(ACCEPT_GAUGE)
    if gauge is not None and gauge > 0:
        return gauge
    return None
