"""Prometheus text exposition (SGLang's `/metrics`) → sums by metric name. Pure parsing, no I/O and no HTTP client:
the panel's doctor polls `/metrics` with httpx every few seconds, and importing the parser from the benchmark's
module pulled aiohttp in on the panel's event loop in the middle of a sweep (~0.3–1.4 s, one key's wait)."""

from __future__ import annotations

import math
import re

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")

Counters = dict[str, float]  # metric name → value summed over its label sets


def parse_metrics(text: str) -> Counters:
    """Prometheus text → {name: value summed over label sets} (counters split by label add up)."""
    sums: Counters = {}
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
        sums[m.group(1)] = sums.get(m.group(1), 0.0) + value
    return sums
