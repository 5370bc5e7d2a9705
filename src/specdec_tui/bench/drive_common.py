"""Constants both load shapes (closed loop in drive, open loop in open_loop) share."""

from __future__ import annotations

from collections.abc import Callable

from specdec_tui.bench.events import BenchEvent

Emit = Callable[[BenchEvent], None]
PROGRESS_INTERVAL_S = 0.2  # ≤ 5 progress events per second
TEXT_SAMPLE_REQUESTS = 32  # per level: enough outputs for a median repetition, no text kept for the rest
ENDPOINT_PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
