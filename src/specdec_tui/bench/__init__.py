"""Streaming benchmark engine: closed-loop load against an OpenAI-compatible server, timed exactly.

Public API: `run_benchmark` (async iterator of events), `BenchRun` (thread handle), `drive_benchmark`
(coroutine on the caller's loop), the event types, and `load_prompt_set`.

Names are imported on first use (PEP 562): `bench.events` is needed by the panel's first frame, the
engine (aiohttp, ~150 ms to import) only when a benchmark runs.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "BenchRun": "engine", "drive_benchmark": "drive", "run_benchmark": "engine",
    "BenchEvent": "events", "LevelDone": "events", "LevelProgress": "events", "LevelStarted": "events", "RunDone": "events",
    "PromptSetError": "prompts", "load_prompt_set": "prompts",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'specdec_tui.bench' has no attribute {name!r}")
    return getattr(importlib.import_module(f"specdec_tui.bench.{module}"), name)
