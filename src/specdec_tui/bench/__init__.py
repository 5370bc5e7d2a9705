"""Streaming benchmark engine: closed-loop load against an OpenAI-compatible server, timed exactly.

Public API: `run_benchmark` (async iterator of events), `BenchRun` (thread handle), `drive_benchmark`
(coroutine on the caller's loop), the event types, and `load_prompt_set`.
"""

from specdec_tui.bench.engine import BenchRun, drive_benchmark, run_benchmark
from specdec_tui.bench.events import BenchEvent, LevelDone, LevelProgress, LevelStarted, RunDone
from specdec_tui.bench.prompts import PromptSetError, load_prompt_set

__all__ = [
    "BenchEvent",
    "BenchRun",
    "LevelDone",
    "LevelProgress",
    "LevelStarted",
    "PromptSetError",
    "RunDone",
    "drive_benchmark",
    "load_prompt_set",
    "run_benchmark",
]
