"""What a trial measures: benchmark results per concurrency level and the server's own facts.

Shared by the benchmark engine (which fills them), the session file (which stores them) and the UI
(which shows them). Plain dataclasses with `to_dict`/`from_dict` so they travel as JSON or TOML.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any


class AcceptSource(StrEnum):
    """Where a level's acceptance figure came from, best first. Stored by value in session files."""

    SERVER_COUNTERS = "server counters"  # Δgeneration_tokens_total / Δspec_verify_calls_total over the level
    REQUEST_DETAILS = "per-request details"  # sglext.spec_tokens_details summed over the level's requests
    STREAM_ESTIMATE = "estimated from the stream"  # tokens per content chunk: coalesced chunks inflate it

    @property
    def short(self) -> str:
        """For narrow columns."""
        return _ACCEPT_SOURCE_SHORT[self]

    @classmethod
    def parse(cls, value: object) -> AcceptSource | None:
        """The source a session file names; None for anything else (old files have no such field)."""
        return cls(value) if isinstance(value, str) and value in cls._value2member_map_ else None


_ACCEPT_SOURCE_SHORT = {
    AcceptSource.SERVER_COUNTERS: "ctr",
    AcceptSource.REQUEST_DETAILS: "req",
    AcceptSource.STREAM_ESTIMATE: "est",
}


def accept_source_legend(levels: Iterable[LevelResult], *, server_avg: bool = True) -> str | None:
    """What the short marks next to the acceptance figures mean, for the marks the levels use; `server_avg`
    False where the server's average is not shown (the panel's table at 80 columns)."""
    levels = list(levels)
    present = {lv.accept_source for lv in levels}
    used = [f"{src.short} = {src.value}" for src in AcceptSource if src in present]
    parts = ["accept: " + ", ".join(used)] if used else []
    if server_avg and any(lv.server_avg_accept_length is not None for lv in levels):
        parts.append(SERVER_AVG_LEGEND)
    return "; ".join(parts) or None


SERVER_AVG_LABEL = "srv avg"
SERVER_AVG_LEGEND = (f"{SERVER_AVG_LABEL} = /server_info avg_spec_accept_length, the server's mean since it started "
                     "(bench_serving's \"Accept length\")")


# A figure read from a session file is a number, not negative, and below this (no tok/s, ms or count comes near;
# 1e308 would overflow the sums and charts made from it).
MAX_FIGURE = 1e15
_COUNTS = frozenset({"concurrency", "requests", "errors", "output_tokens", "peak_in_flight"})
_FIGURES = frozenset({"duration_s", "output_tok_s", "achieved_concurrency", "accept_length_server", "accept_length_client",
                      "rate", "goodput_req_s", "goodput_tok_s"})
_DISTS = frozenset({"per_request_tok_s", "ttft_ms", "tpot_ms", "itl_ms", "chunk_itl_ms", "e2e_ms"})


class FigureError(ValueError):
    """A saved figure that is no figure, said in words (the session reader shows them as they are)."""


def figure(name: str, value: Any, *, whole: bool = False) -> Any:
    """`value` when it is a plausible figure of a saved level; ValueError saying why not (a string, a negative,
    an overflowing or non-finite number), which the session reader turns into words with the file and trial."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FigureError(f"{name} = {value!r} is not a number")
    if not 0 <= value <= MAX_FIGURE:  # also false for NaN
        raise FigureError(f"{name} = {value!r} is out of range (0 to {MAX_FIGURE:g})")
    if whole:
        if value != int(value):
            raise FigureError(f"{name} = {value!r} is not a whole number")
        return int(value)
    return value


_FIELD_NAMES: dict[str, frozenset[str]] = {}


def _field_names(cls: type) -> frozenset[str]:
    """A dataclass's field names, once (dataclasses.fields walks the class on every call)."""
    names = _FIELD_NAMES.get(cls.__qualname__)
    if names is None:
        names = _FIELD_NAMES[cls.__qualname__] = frozenset(f.name for f in fields(cls))
    return names


@dataclass(slots=True)
class Dist:
    """Summary of a distribution; None when there were no samples."""

    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Dist:
        d = d or {}
        values: list[float | None] = []
        for k in ("mean", "p50", "p90", "p99"):
            v = d.get(k)
            # the common case inline (a 10,000-trial session reads 1.2 M of these); anything else via figure()
            values.append(v if v is None or (type(v) is float and 0.0 <= v <= MAX_FIGURE) else float(figure(k, v)))
        return cls(*values)


STORED_DIGITS = 6  # significant digits a session file keeps of a figure


def as_stored(value: float) -> float:
    """`value` as a session file keeps it. A level's figures are held so from the moment they are measured: a
    figure shown live (102.749996 → "102.7") and read back from the file (102.75 → "102.8") read differently."""
    return float(f"{value:.{STORED_DIGITS}g}")


def _stored_or_none(value: float | None) -> float | None:
    return None if value is None or value != value or value in (float("inf"), float("-inf")) else as_stored(value)


@dataclass(slots=True)
class LevelResult:
    """One concurrency level of a benchmark run (the row the operator reads)."""

    concurrency: int
    requests: int = 0
    errors: int = 0
    output_tokens: int = 0
    duration_s: float = 0.0
    output_tok_s: float = 0.0  # aggregate: tokens produced inside the window / window length
    per_request_tok_s: Dist = field(default_factory=Dist)
    ttft_ms: Dist = field(default_factory=Dist)
    tpot_ms: Dist = field(default_factory=Dist)
    itl_ms: Dist = field(default_factory=Dist)
    chunk_itl_ms: Dist = field(default_factory=Dist)
    e2e_ms: Dist = field(default_factory=Dist)
    achieved_concurrency: float = 0.0
    accept_length_server: float | None = None  # the level's own, from server counters or per-request details
    accept_length_client: float | None = None  # tokens per content chunk
    accept_length_source: str | None = None  # an AcceptSource value; None in files written before it existed
    # /server_info's internal_states[0].avg_spec_accept_length read right after the level: the server's mean since
    # it started (the warm-up and every earlier level in it), what SGLang's bench_serving prints as "Accept length"
    server_avg_accept_length: float | None = None
    estimated: bool = False  # tokens counted from chunks because the server sent no usage
    warnings: list[str] = field(default_factory=list)
    error_kinds: dict[str, int] = field(default_factory=dict)
    finish_reasons: dict[str, int] = field(default_factory=dict)
    rate: float | None = None  # open loop: the target arrival rate (requests/s); None: closed loop at `concurrency`
    peak_in_flight: int = 0  # open loop: most requests in flight at once
    good_requests: int | None = None  # measured requests that met every SLO target; None: no SLO asked
    goodput_req_s: float | None = None  # those per second of the measured window
    goodput_tok_s: float | None = None  # their output tokens per second of the window
    slo_missed: list[str] = field(default_factory=list)  # the level's percentile targets it missed, in words
    workload: dict[str, str | int] = field(default_factory=dict)  # name, version, hash, seed of the load sent
    tok_s_samples: list[float] = field(default_factory=list)  # per-request tok/s (≤ SAMPLES_KEPT, spread over the level): intervals
    saturated: str = ""  # open loop: why the server could not keep up at this rate, in words; "" when it did

    @property
    def load_label(self) -> str:
        """"c=16" for a closed-loop level, "r=12.5/s" for an open-loop one."""
        return f"r={self.rate:g}/s" if self.rate is not None else f"c={self.concurrency}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def round_as_stored(self) -> None:
        """Every figure of the level to the precision its session file keeps (`as_stored`)."""
        for name in ("duration_s", "output_tok_s", "achieved_concurrency"):
            setattr(self, name, as_stored(getattr(self, name)))
        for name in ("accept_length_server", "accept_length_client", "server_avg_accept_length", "rate",
                     "goodput_req_s", "goodput_tok_s"):
            setattr(self, name, _stored_or_none(getattr(self, name)))
        for dist in (self.per_request_tok_s, self.ttft_ms, self.tpot_ms, self.itl_ms, self.chunk_itl_ms, self.e2e_ms):
            dist.mean, dist.p50 = _stored_or_none(dist.mean), _stored_or_none(dist.p50)
            dist.p90, dist.p99 = _stored_or_none(dist.p90), _stored_or_none(dist.p99)

    @property
    def measured(self) -> bool:
        """False when every request of the level failed: its 0 tok/s is no measurement (shown "–", not drawn)."""
        return not (self.errors and not self.output_tokens and not self.output_tok_s)

    @property
    def accept_length(self) -> float | None:
        """The figure to show for the level: the server's own, else the stream's estimate."""
        return self.accept_length_server if self.accept_length_server is not None else self.accept_length_client

    @property
    def accept_source(self) -> AcceptSource | None:
        return AcceptSource.parse(self.accept_length_source)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LevelResult:
        known = _field_names(cls)
        kw: dict[str, Any] = {}
        for k, v in d.items():
            if k not in known:
                continue
            if k in _COUNTS:
                kw[k] = v if type(v) is int and 0 <= v <= MAX_FIGURE else figure(k, v, whole=True)
            elif k in _FIGURES:
                kw[k] = v if v is None or (type(v) is float and 0.0 <= v <= MAX_FIGURE) else figure(k, v)
            elif k in _DISTS:
                try:
                    kw[k] = Dist.from_dict(v)
                except ValueError as err:
                    raise FigureError(f"{k}: {err}") from None
            elif k == "good_requests":
                kw[k] = None if v is None else figure(k, v, whole=True)
            elif k == "workload":
                kw[k] = {str(a): (b if type(b) is int else str(b)) for a, b in dict(v).items()}
            elif k == "tok_s_samples":
                kw[k] = [float(figure(k, x)) for x in v]
            elif k in ("warnings", "slo_missed"):
                kw[k] = [str(x) for x in v]
            elif k in ("error_kinds", "finish_reasons"):
                kw[k] = {str(a): int(b) for a, b in dict(v).items()}
            elif k == "accept_length_source":
                src = AcceptSource.parse(v)
                kw[k] = src.value if src else None
            else:
                kw[k] = v
        return cls(**kw)


@dataclass(slots=True)
class ServerFacts:
    """What the restarted server says about itself (from /get_server_info, /v1/models and the journal)."""

    model: str = ""
    max_running_requests: int | None = None
    max_total_num_tokens: int | None = None
    context_len: int | None = None
    speculative: dict[str, Any] = field(default_factory=dict)  # algorithm, num_steps, eagle_topk, num_draft_tokens
    version: str = ""
    setup: dict[str, str] = field(default_factory=dict)  # /server_info's GPU/model facts: tp_size, dtype, backends...
    # the --speculative-algorithm of the unit the server was started from, as the operator wrote it ("" unknown):
    # SGLang reports its own rewrite (NEXTN runs as EAGLE), which is not what the unit says
    configured_algorithm: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def speculative_words(self) -> str:
        """"EAGLE steps=3 topk=1 draft=4" from the server's speculative settings (names as the server gives
        them; an algorithm the unit names otherwise reads "NEXTN (SGLang runs it as EAGLE)"); "off" without any;
        "" when it named settings but none with a value."""
        spec = self.speculative
        if not spec:
            return "off"
        algorithm = algorithm_words(str(spec.get("algorithm") or spec.get("speculative_algorithm") or ""),
                                    self.configured_algorithm)
        short = {"num_steps": "steps", "eagle_topk": "topk", "num_draft_tokens": "draft"}
        parts = [algorithm] if algorithm else []
        for key, value in spec.items():
            if key in ("algorithm", "speculative_algorithm") or value is None:
                continue
            name = key.removeprefix("speculative_")
            parts.append(f"{short.get(name, name)}={value}")
        return " ".join(parts)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ServerFacts:
        known = _field_names(cls)
        return cls(**{k: v for k, v in d.items() if k in known})


def algorithm_words(served: str, configured: str) -> str:
    """The algorithm as the operator configured it, with SGLang's rewrite beside it when the server runs it under
    another name (0.5.23 `speculative_hook`: NEXTN, and EAGLE, resolve to EAGLE; a Gemma4 draft to FROZEN_KV_MTP):
    "NEXTN (SGLang runs it as EAGLE)". Only a plain name is shown (it is the unit's text)."""
    if not served or not configured.isascii() or not configured.replace("_", "").isalnum():
        return served
    if configured.upper() == served.upper():
        return served
    return f"{configured.upper()} (SGLang runs it as {served})"
