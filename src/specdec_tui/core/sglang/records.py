"""The typed records one SGLang log line becomes, and how error categories rank as causes.

Kept apart from the parser so panes, the workflow and the CLI can name record types without
pulling in the regex tables; `sglang_log` re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

__all__ = [
    "Value",
    "ArgValue",
    "LogRecord",
    "DecodeRecord",
    "PrefillRecord",
    "StartupSummaryRecord",
    "LoadWeightRecord",
    "KVCacheRecord",
    "CudaGraphRecord",
    "ReadyRecord",
    "ErrorRecord",
    "AccessRecord",
    "AdjustRecord",
    "ConcurrencyLimitRecord",
    "DeprecationRecord",
    "ServerArgsRecord",
    "TextRecord",
    "bound_in_words",
    "FATAL_ERROR_CATEGORIES",
    "CAUSE_CATEGORIES",
    "cause_rank",
]

Value = int | float | bool | str | list[Any]
# A resolved server arg as SGLang's `server_args=` line gives it: a literal, a nested record as a dict, or None.
ArgValue = Value | None | dict[str, Any] | tuple[Any, ...]


class LineBase(TypedDict):
    """The LogRecord fields every line parser passes through: the line and its stripped prefixes."""

    raw: str
    message: str
    timestamp: datetime | None
    tags: dict[str, int]
    level: str | None


# ---------------------------------------------------------------------------------------------
# Records


@dataclass(slots=True, kw_only=True)
class LogRecord:
    """Fields every record has. `message` is the text after the timestamp/rank prefix."""

    kind: str = "text"
    raw: str = ""
    message: str = ""
    timestamp: datetime | None = None
    tags: dict[str, int] = field(default_factory=dict)  # {"DP": 0, "TP": 1, "EP": 1, "PP": 0}
    level: str | None = None  # only when the line carries one (uvicorn, journald)

    def summary(self) -> str:
        """A short human line for the journal pane and `journal parse`."""
        return self.message


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _pairs_summary(pairs: Iterable[tuple[str, object]]) -> str:
    return " ".join(f"{k}={_fmt(v)}" for k, v in pairs if v is not None)


@dataclass(slots=True, kw_only=True)
class DecodeRecord(LogRecord):
    """`Decode batch, #running-req: …, accept len: …, gen throughput (token/s): …`."""

    kind: str = "decode"
    running_req: int | None = None
    tokens: int | None = None
    token_usage: float | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    cuda_graph: bool | None = None
    gen_throughput: float | None = None
    queue_req: int | None = None
    forward_iter: int | None = None  # `Decode batch [123]` with SGLANG_LOG_FORWARD_ITERS
    extra: dict[str, Value] = field(default_factory=dict)

    def summary(self) -> str:
        return _pairs_summary(
            [
                ("running", self.running_req),
                ("queue", self.queue_req),
                ("usage", self.token_usage),
                ("accept_len", self.accept_len),
                ("accept_rate", self.accept_rate),
                ("tok/s", self.gen_throughput),
                ("graph", self.cuda_graph),
            ]
        )


@dataclass(slots=True, kw_only=True)
class PrefillRecord(LogRecord):
    """`Prefill batch, #new-seq: …, #new-token: …, #cached-token: …, token usage: …`."""

    kind: str = "prefill"
    new_seq: int | None = None
    new_token: int | None = None
    cached_token: int | None = None
    token_usage: float | None = None
    running_req: int | None = None
    queue_req: int | None = None
    input_throughput: float | None = None  # PD prefill servers only
    forward_iter: int | None = None
    extra: dict[str, Value] = field(default_factory=dict)

    def summary(self) -> str:
        return _pairs_summary(
            [
                ("new_seq", self.new_seq),
                ("new_token", self.new_token),
                ("cached", self.cached_token),
                ("usage", self.token_usage),
                ("running", self.running_req),
                ("queue", self.queue_req),
            ]
        )


@dataclass(slots=True, kw_only=True)
class StartupSummaryRecord(LogRecord):
    """`max_total_num_tokens=…, …, max_running_requests=…, available_gpu_mem=… GB` (rank 0)."""

    kind: str = "startup_summary"
    max_total_num_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    max_running_requests: int | None = None
    context_len: int | None = None
    available_gpu_mem_gb: float | None = None  # also `available_cpu_mem` on CPU servers
    extra: dict[str, Value] = field(default_factory=dict)

    def summary(self) -> str:
        return _pairs_summary(
            [
                ("max_total_num_tokens", self.max_total_num_tokens),
                ("max_running_requests", self.max_running_requests),
                ("context_len", self.context_len),
                ("avail_GB", self.available_gpu_mem_gb),
            ]
        )


@dataclass(slots=True, kw_only=True)
class LoadWeightRecord(LogRecord):
    """`Load weight begin. avail mem=… GB` / `Load weight end. elapsed=… s, type=…, mem usage=… GB.`"""

    kind: str = "load_weight"
    phase: str = "end"  # begin | end
    elapsed_s: float | None = None
    model_type: str | None = None
    dtype: str | None = None
    avail_mem_gb: float | None = None
    mem_usage_gb: float | None = None
    extra: dict[str, Value] = field(default_factory=dict)

    def summary(self) -> str:
        return f"load weight {self.phase} " + _pairs_summary(
            [
                ("type", self.model_type),
                ("elapsed_s", self.elapsed_s),
                ("mem_GB", self.mem_usage_gb),
                ("avail_GB", self.avail_mem_gb),
            ]
        )


@dataclass(slots=True, kw_only=True)
class KVCacheRecord(LogRecord):
    """`KV Cache is allocated. dtype: torch.bfloat16, #tokens: …, K size: … GB, V size: … GB` (0.5.23; `KV size:`
    for MLA; older releases without the dtype)."""

    kind: str = "kv_cache"
    pool: str = "KV"  # KV | Mamba | …
    tokens: int | None = None
    k_size_gb: float | None = None
    v_size_gb: float | None = None
    kv_size_gb: float | None = None  # K+V when the line gives them separately
    extra: dict[str, Value] = field(default_factory=dict)

    def summary(self) -> str:
        return f"{self.pool} cache " + _pairs_summary(
            [("tokens", self.tokens), ("size_GB", self.kv_size_gb)]
        )


@dataclass(slots=True, kw_only=True)
class CudaGraphRecord(LogRecord):
    """0.5.23: `Capture target verify CUDA graph end. bs=[…], elapsed=… s, mem usage=… GB, avail mem=… GB.` (one
    pair per graph: target decode or verify, draft decode, draft extend); older: `Capture cuda graph begin/end.
    Time elapsed: … s. mem usage=… GB. avail mem=… GB.`"""

    kind: str = "cuda_graph"
    phase: str = "end"  # begin | end
    graph: str = "cuda graph"  # e.g. "npu graph", "target decode CUDA graph"
    elapsed_s: float | None = None
    mem_usage_gb: float | None = None
    avail_mem_gb: float | None = None

    def summary(self) -> str:
        return f"capture {self.graph} {self.phase} " + _pairs_summary(
            [("elapsed_s", self.elapsed_s), ("mem_GB", self.mem_usage_gb), ("avail_GB", self.avail_mem_gb)]
        )


@dataclass(slots=True, kw_only=True)
class ReadyRecord(LogRecord):
    """`The server is fired up and ready to roll!`"""

    kind: str = "ready"

    def summary(self) -> str:
        return "server ready"


@dataclass(slots=True, kw_only=True)
class ErrorRecord(LogRecord):
    """A line that means trouble; `category` says which kind (see `_ERROR_RULES`)."""

    kind: str = "error"
    category: str = "error"
    detail: str = ""
    cause: str = ""  # why, in words, when the line says more than its text shows (a crashed child's exit code)
    extra: dict[str, Value] = field(default_factory=dict)

    @property
    def fatal(self) -> bool:
        """True when this category means the server is going down (not a retract or a stray traceback line)."""
        return self.category in FATAL_ERROR_CATEGORIES

    def summary(self) -> str:
        because = f" ({self.cause})" if self.cause else ""
        return f"[{self.category}] {self.detail}{because}"


@dataclass(slots=True, kw_only=True)
class AccessRecord(LogRecord):
    """A uvicorn access line: `127.0.0.1:51234 - "POST /generate HTTP/1.1" 200 OK`."""

    kind: str = "access"
    client: str = ""
    method: str = ""
    path: str = ""
    status: int = 0

    def summary(self) -> str:
        return f"{self.method} {self.path} → {self.status}"


@dataclass(slots=True, kw_only=True)
class AdjustRecord(LogRecord):
    """SGLang changed one of your flags itself (e.g. max_running_requests reset to 48)."""

    kind: str = "adjust"
    setting: str = ""  # server arg name, "" when the notice names none we know
    value: Value | None = None  # the value SGLang chose, when the notice says it

    def summary(self) -> str:
        if self.setting:
            return f"SGLang set {self.setting} = {self.value}: {self.message}"
        return self.message


# Upstream's `ConcurrencyLimit.source` names (mem_cache/concurrency_limit.py) in words for the panel.
_BOUND_WORDS = {
    "max_running_requests": "your --max-running-requests",
    "kv_capacity": "KV capacity",
    "mamba_state_pool": "mamba state",
    "heuristic_estimate": "heuristic estimate",
}


def bound_in_words(source: str) -> str:
    """`mamba_state_pool` → "mamba state"; an unknown source name loses its underscores."""
    return _BOUND_WORDS.get(source, source.replace("_", " "))


@dataclass(slots=True, kw_only=True)
class ConcurrencyLimitRecord(AdjustRecord):
    """`max_running_requests reduced from the requested 48 to 26 (per dp worker), bound by mamba_state_pool (…)`.

    SGLang resolves max_running_requests as the smallest of several bounds and names the one that won;
    `requested` is None on the plain `max_running_requests=26 (per dp worker), bound by …` form."""

    setting: str = "max_running_requests"
    value: Value | None = None  # the resolved max_running_requests (an int)
    requested: int | None = None
    bound: str = ""  # upstream's source name: mamba_state_pool | kv_capacity | max_running_requests | …
    detail: str = ""  # how the bound was derived, e.g. "max_mamba_cache_size=78 per shard / 3 slots per request"
    other_limits: dict[str, int] = field(default_factory=dict)
    remedy: str = ""

    @property
    def reduced(self) -> bool:
        """True when SGLang gave less than the operator asked for."""
        return self.requested is not None and isinstance(self.value, int) and self.value < self.requested

    @property
    def bound_words(self) -> str:
        return bound_in_words(self.bound)

    def summary(self) -> str:
        asked = f" (asked {self.requested})" if self.requested is not None else ""
        return f"max_running_requests = {self.value}{asked}, bound by {self.bound_words}"


@dataclass(slots=True, kw_only=True)
class DeprecationRecord(LogRecord):
    """A deprecated flag or endpoint was used: `'--x' is deprecated … Use '--y' instead.` / `Endpoint '/a' is …`."""

    kind: str = "deprecation"
    name: str = ""  # the flag (`--enable-foo`) or endpoint (`/get_server_info`)
    replacement: str = ""  # what to use instead, when the warning says

    def summary(self) -> str:
        instead = f" → use {self.replacement}" if self.replacement else ""
        return f"deprecated: {self.name}{instead}"


@dataclass(slots=True, kw_only=True)
class ServerArgsRecord(LogRecord):
    """`server_args={'model_path': '…', …}` (0.5.23; `ServerArgs(…)` before), the settings a start resolved:
    every one in `args`, the few the panel reads typed."""

    kind: str = "server_args"
    args: dict[str, ArgValue] = field(default_factory=dict)
    speculative_algorithm: str | None = None
    speculative_num_steps: int | None = None
    speculative_num_draft_tokens: int | None = None
    max_running_requests: int | None = None  # as requested (or SGLang's own default), before memory cut it
    mem_fraction_static: float | None = None

    def summary(self) -> str:
        return "server args " + _pairs_summary(
            [
                ("algorithm", self.speculative_algorithm),
                ("steps", self.speculative_num_steps),
                ("draft_tokens", self.speculative_num_draft_tokens),
                ("max_running_requests", self.max_running_requests),
                ("mem_fraction_static", self.mem_fraction_static),
            ]
        )


@dataclass(slots=True, kw_only=True)
class TextRecord(LogRecord):
    """Any other line."""

    kind: str = "text"


# Categories after which SGLang exits; `kv_pool_full` (retract) is survivable and the generic
# `traceback` / `exception` lines are usually followed by one of these; `health_check_failed` means the server
# is stuck (no detokenizer output for a while), not that it is going down.
FATAL_ERROR_CATEGORIES = frozenset(
    {"not_enough_memory", "cuda_graph_failed", "cuda_oom", "scheduler_exception", "init_failed", "child_failed",
     "bad_arguments", "subprocess_crashed", "watchdog_timeout"}
)

# Error categories that name why a server went down, most telling first. The rest ("Scheduler hit an
# exception", "Received sigquit from a child process", traceback frames) follow a failure rather than explain it.
# A crashed subprocess (0.5.23's watchdog: `Subprocess scheduler_0 (pid=…) crashed with exit code -9`) names a
# cause only when nothing more telling was logged: a killed process says nothing of why it was killed.
CAUSE_CATEGORIES: tuple[str, ...] = (
    "not_enough_memory", "cuda_graph_failed", "cuda_oom", "bad_arguments", "init_failed", "cuda_error",
    "watchdog_timeout", "scheduler_exception", "subprocess_crashed", "child_failed",
)


def cause_rank(record: ErrorRecord) -> int:
    """Lower is more telling: a named cause, then other fatal lines, then non-fatal ones (retracts)."""
    if record.category in CAUSE_CATEGORIES:
        return CAUSE_CATEGORIES.index(record.category)
    return len(CAUSE_CATEGORIES) + (0 if record.fatal else 1)
