"""The doctor's rules: what a window of SGLang log records means, as findings with evidence, cost and a fix.

Pure: records in, findings out. A finding is *active* only while its evidence goes on (the newest decode line
still shows it, the newest start has not come up), so it clears when its evidence stops. `loop/doctor.py`
gathers the records and asks these rules; the panel, `fleet status` and `specdec-tui doctor` ask it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from statistics import median

from specdec_tui.core.doctor_memory import graph_room
from specdec_tui.core.sglang.records import (
    ConcurrencyLimitRecord,
    DecodeRecord,
    ErrorRecord,
    LogRecord,
    ReadyRecord,
    ServerArgsRecord,
    StartupSummaryRecord,
    cause_rank,
)

__all__ = ["FindingKind", "Severity", "Evidence", "Finding", "diagnose", "clock"]


class FindingKind(StrEnum):
    EAGER_FALLBACK = "eager_fallback"
    CAPACITY_BOUND = "capacity_bound"
    ACCEPTANCE_COLLAPSE = "acceptance_collapse"
    ACCEPTANCE_DRIFT = "acceptance_drift"
    ADAPTIVE_FLAPPING = "adaptive_flapping"
    START_FAILURE = "start_failure"


class Severity(StrEnum):
    WARNING = "warning"
    CRITICAL = "critical"


@dataclass(frozen=True, slots=True)
class Evidence:
    """One line that shows the finding, when it was logged, and the figures read from it."""

    time: datetime | None
    line: str
    figures: dict[str, float | int | str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Finding:
    """`fix` sets flags (None = a bare switch), `remove` deletes them; both empty when no edit helps."""

    kind: FindingKind
    severity: Severity
    since: datetime | None
    cost: str
    evidence: tuple[Evidence, ...]
    fix: dict[str, str | None] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    fix_words: str = ""

    @property
    def fixable(self) -> bool:
        return bool(self.fix) or bool(self.remove)


Flags = Mapping[str, str | None]

# Thresholds. A decode line is one log interval (--decode-log-interval rounds), so every rule that can fire on one
# line does; drift and flapping need a run of lines by nature.
COLLAPSE_ACCEPT_LEN = 1.2  # "accept length near 1": no draft survives verification
DRIFT_FALL = 0.7  # the last lines' acceptance below this share of the first lines'
DRIFT_LINES = 3  # lines averaged at each end
FLAP_SWITCHES = 4  # adaptive switches that reverse direction...
FLAP_WINDOW_S = 120.0  # ...within this many seconds of the newest one
EVIDENCE_LINES = 3  # the newest lines shown as evidence
# "Capture cuda graph bs [...]" (older releases), "Capture target verify CUDA graph end. bs=[...]" (0.5.23)
_CAPTURE_BS = re.compile(r"Capture (?:cuda graph bs |[\w ]*CUDA graph end\. bs=)\[(?P<bs>[\d, ]+)\]")
_SWITCH = re.compile(r"Switch adaptive runtime state: steps (?P<old>\d+) -> (?P<new>\d+)")
_MIN_VIABLE = re.compile(r"minimum viable(?: = [^=()]*)?= (?P<v>\d+\.\d+)")


def clock(t: datetime | None) -> str:
    return t.strftime("%H:%M:%S") if t else "?"


def _int(flags: Flags, *names: str) -> int | None:
    for name in names:
        value = flags.get(name)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _float(flags: Flags, name: str) -> float | None:
    value = flags.get(name)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _evidence(record: LogRecord, **figures: float | int | str) -> Evidence:
    return Evidence(record.timestamp, record.message, dict(figures))


def _tail_run(decodes: Sequence[DecodeRecord], test: Callable[[DecodeRecord], bool]) -> list[DecodeRecord]:
    """The newest decode lines for which `test` holds, back to the first that does not (empty: the newest fails)."""
    run: list[DecodeRecord] = []
    for record in reversed(decodes):
        if not test(record):
            break
        run.append(record)
    return run[::-1]


def _active_decodes(records: Sequence[LogRecord]) -> list[DecodeRecord]:
    """Decode lines with a batch; one rank's (DP 0) where each data-parallel rank logs its own."""
    return [r for r in records
            if isinstance(r, DecodeRecord) and (r.running_req or 0) > 0 and r.tags.get("DP", 0) == 0]


# ---- eager fallback ------------------------------------------------------------------------------------------------


def _captured(records: Sequence[LogRecord], flags: Flags) -> int | None:
    for record in reversed(records):
        match = _CAPTURE_BS.search(record.message)
        if match:
            return max(int(b) for b in match["bs"].replace(" ", "").split(",") if b)
    return _int(flags, "cuda-graph-max-bs-decode", "cuda-graph-max-bs")


def _per_token_s(record: DecodeRecord) -> float | None:
    """Seconds between two tokens of one request: the batch over the batch's token rate."""
    if not record.gen_throughput or not record.running_req:
        return None
    return record.running_req / record.gen_throughput


def eager_fallback(records: Sequence[LogRecord], flags: Flags) -> Finding | None:
    captured = _captured(records, flags)
    if captured is None:
        return None
    decodes = _active_decodes(records)
    run = _tail_run(decodes, lambda r: r.cuda_graph is False and (r.running_req or 0) > captured)
    if not run:
        return None
    graphed = [t for r in decodes if r.cuda_graph and (t := _per_token_s(r)) is not None]
    eager = [t for r in run if (t := _per_token_s(r)) is not None]
    peak = max(r.running_req or 0 for r in run)
    since = run[0].timestamp
    where = f"since {clock(since)} at batch {run[-1].running_req} > captured {captured}"
    if graphed and eager:
        ratio = median(eager) / median(graphed)
        cost = f"per-token latency ×{ratio:.1f} {where}"
    else:
        ratio = 0.0
        cost = f"decode runs without CUDA graphs {where}"
    target = max(captured * 2, 8 * math.ceil(peak / 8))
    evidence = tuple(_evidence(r, batch=r.running_req or 0, captured=captured,
                               tok_s=round(r.gen_throughput or 0.0, 2)) for r in run[-EVIDENCE_LINES:])
    severity = Severity.CRITICAL if ratio >= 2 else Severity.WARNING
    room = graph_room(records, captured, target)
    if room is not None and not room.fits:  # the raise would fail at capture: keep batches within the graphs
        return Finding(FindingKind.EAGER_FALLBACK, severity, since, cost, evidence,
                       fix={"max-running-requests": str(captured)},
                       fix_words=(f"cap --max-running-requests at {captured}, so every decode batch has its graph: "
                                  f"{room.words(captured, target)}"))
    remove = ("cuda-graph-max-bs",) if "cuda-graph-max-bs" in flags else ()
    fits = f"; {room.words(captured, target)}" if room is not None else (
        f"; it takes memory: if the start then fails, cap --max-running-requests at {captured} instead")
    return Finding(
        FindingKind.EAGER_FALLBACK, severity, since, cost, evidence,
        fix={"cuda-graph-max-bs-decode": str(target)}, remove=remove,
        fix_words=f"capture graphs up to batch {target} (--cuda-graph-max-bs-decode {target}{fits})",
    )


# ---- capacity bound ------------------------------------------------------------------------------------------------


def max_running(records: Sequence[LogRecord], flags: Flags) -> int | None:
    for record in reversed(records):
        if isinstance(record, ConcurrencyLimitRecord) and isinstance(record.value, int):
            return record.value
        if isinstance(record, StartupSummaryRecord) and record.max_running_requests:
            return record.max_running_requests
    return _int(flags, "max-running-requests")


def capacity_bound(records: Sequence[LogRecord], flags: Flags) -> Finding | None:
    limit = max_running(records, flags)
    if not limit:
        return None
    run = _tail_run(_active_decodes(records), lambda r: (r.running_req or 0) >= limit and (r.queue_req or 0) > 0)
    if not run:
        return None
    last = run[-1]
    usage = last.token_usage or 0.0
    since = run[0].timestamp
    cost = (f"{last.queue_req} requests wait behind max_running_requests={limit} since {clock(since)}"
            f" (KV token usage {usage:.0%})")
    evidence = tuple(_evidence(r, running=r.running_req or 0, queue=r.queue_req or 0, limit=limit,
                               token_usage=round(r.token_usage or 0.0, 2)) for r in run[-EVIDENCE_LINES:])
    if usage < 0.8:  # the KV cache has room: the cap is the flag (or upstream's default for this algorithm)
        target = max(limit + 1, min(limit * 2, int(limit * 0.9 / max(usage, 0.05))))
        fix: dict[str, str | None] = {"max-running-requests": str(target)}
        words = (f"raise --max-running-requests to {target}: the KV cache is {usage:.0%} used, so more requests fit; "
                 "each decode round then carries a larger batch (more per-round time, more graph memory)")
    else:
        draft = _int(flags, "speculative-num-draft-tokens")
        fraction = _float(flags, "mem-fraction-static")
        if draft and draft > 2:
            fix = {"speculative-num-draft-tokens": str(draft - 1)}
            words = (f"fewer draft tokens ({draft} → {draft - 1}) leave KV room for more requests, at the cost of "
                     "a shorter accepted length per round")
        else:
            new = min(0.95, round((fraction or 0.85) + 0.03, 2))
            fix = {"mem-fraction-static": f"{new:.2f}"}
            words = f"a larger --mem-fraction-static ({new:.2f}) grows the KV cache, at the cost of activation headroom"
    return Finding(FindingKind.CAPACITY_BOUND, Severity.WARNING, since, cost, evidence, fix=fix, fix_words=words)


# ---- acceptance ----------------------------------------------------------------------------------------------------


def _steps(records: Sequence[LogRecord], flags: Flags) -> int:
    """The speculative steps the server runs now: the newest adaptive switch, else its resolved args, else the flag."""
    for record in reversed(records):
        switch = _SWITCH.search(record.message)
        if switch:
            return int(switch["new"])
        if isinstance(record, ServerArgsRecord) and record.speculative_num_steps is not None:
            return record.speculative_num_steps if record.speculative_algorithm else 0
    if not flags.get("speculative-algorithm"):
        return 0
    return _int(flags, "speculative-num-steps") or 0


def acceptance_collapse(records: Sequence[LogRecord], flags: Flags) -> Finding | None:
    steps = _steps(records, flags)
    if steps < 1:
        return None
    run = _tail_run([r for r in _active_decodes(records) if r.accept_len is not None],
                    lambda r: (r.accept_len or 0.0) < COLLAPSE_ACCEPT_LEN)
    if not run:
        return None
    since = run[0].timestamp
    best = steps + 1
    cost = (f"accept length {run[-1].accept_len:.2f} of a possible {best} since {clock(since)}: every round pays "
            "for drafts that are thrown away, and output this far from the draft often is garbage")
    evidence = tuple(_evidence(r, accept_len=round(r.accept_len or 0.0, 2), accept_rate=round(r.accept_rate or 0.0, 3),
                               steps=steps) for r in run[-EVIDENCE_LINES:])
    return Finding(FindingKind.ACCEPTANCE_COLLAPSE, Severity.CRITICAL, since, cost, evidence,
                   fix_words=("no flag fixes this: check the draft model belongs to the target (and its revision), "
                              "then check answers at temperature 0 against the unit without speculation"))


def acceptance_drift(records: Sequence[LogRecord], flags: Flags) -> Finding | None:
    if _steps(records, flags) < 1 or any(_SWITCH.search(r.message) for r in records):
        return None  # adaptive speculation moves accept length on purpose
    lines = [r for r in _active_decodes(records) if r.accept_len is not None]
    if len(lines) < 2 * DRIFT_LINES:
        return None
    first, last = lines[:DRIFT_LINES], lines[-DRIFT_LINES:]
    before = sum(r.accept_len or 0.0 for r in first) / DRIFT_LINES
    now = sum(r.accept_len or 0.0 for r in last) / DRIFT_LINES
    if now >= DRIFT_FALL * before or now < COLLAPSE_ACCEPT_LEN:
        return None
    since = last[0].timestamp
    usage = (first[0].token_usage or 0.0, last[-1].token_usage or 0.0)
    cost = (f"accept length fell from {before:.2f} ({clock(first[0].timestamp)}) to {now:.2f} "
            f"({clock(last[-1].timestamp)}), token usage {usage[0]:.0%} → {usage[1]:.0%}")
    evidence = (_evidence(first[0], accept_len=round(first[0].accept_len or 0.0, 2)),
                *(_evidence(r, accept_len=round(r.accept_len or 0.0, 2)) for r in last))
    steps = _int(flags, "speculative-num-steps")
    fix: dict[str, str | None] = {}
    words = "no flag fixes a draft that loses the context; measure again after a restart"
    if steps and steps > 1:
        fix = {"speculative-num-steps": str(steps - 1)}
        words = f"fewer steps ({steps} → {steps - 1}) waste less on drafts that are now rejected"
    return Finding(FindingKind.ACCEPTANCE_DRIFT, Severity.WARNING, since, cost, evidence, fix=fix, fix_words=words)


def adaptive_flapping(records: Sequence[LogRecord], flags: Flags) -> Finding | None:
    switches = [(r, int(m["old"]), int(m["new"])) for r in records if (m := _SWITCH.search(r.message))]
    if len(switches) < FLAP_SWITCHES:
        return None
    newest = switches[-1][0].timestamp
    recent = [s for s in switches
              if newest is None or s[0].timestamp is None or (newest - s[0].timestamp).total_seconds() <= FLAP_WINDOW_S]
    # the evidence stops once no switch comes after the newest decode line's own interval
    latest = next((r.timestamp for r in reversed(records) if r.timestamp is not None), None)
    if newest is not None and latest is not None and (latest - newest).total_seconds() > FLAP_WINDOW_S:
        return None
    reversals = sum(1 for a, b in zip(recent, recent[1:], strict=False) if (a[2] - a[1]) * (b[2] - b[1]) < 0)
    if len(recent) < FLAP_SWITCHES or reversals < FLAP_SWITCHES - 1:
        return None
    counts: dict[int, int] = {}
    for _, _, new in recent:
        counts[new] = counts.get(new, 0) + 1
    pinned = max(counts, key=lambda s: counts[s])
    since = recent[0][0].timestamp
    cost = (f"{len(recent)} tier switches since {clock(since)}, steps "
            + " → ".join(str(s[2]) for s in recent[-6:]) + ": each switch changes the round's cost and graphs")
    evidence = tuple(_evidence(r, old=old, new=new) for r, old, new in recent[-EVIDENCE_LINES:])
    fix: dict[str, str | None] = {}
    remove: tuple[str, ...] = ()
    if pinned > 0:
        fix = {"speculative-num-steps": str(pinned), "speculative-num-draft-tokens": str(pinned + 1),
               "speculative-eagle-topk": "1"}
        remove = ("speculative-adaptive", "speculative-adaptive-config")
    return Finding(FindingKind.ADAPTIVE_FLAPPING, Severity.WARNING, since, cost, evidence, fix=fix, remove=remove,
                   fix_words=f"pin the steps the controller chose most often ({pinned}) and turn adaptive off")


# ---- start failure -------------------------------------------------------------------------------------------------


def start_ladder(cause: ErrorRecord, flags: Flags, resolved_fraction: float | None,
                 tried: frozenset[str] = frozenset()) -> tuple[dict[str, str | None], str]:
    """The next rung of upstream's OOM ladder (speculative_decoding.md "OOM Troubleshooting") for this unit.

    A fraction too small for the weights is raised to the minimum the error names (+0.02); otherwise: lower the
    static fraction (toward 0.5), then halve the decode graphs' batch, then shrink the draft tree, then cap the
    running requests. A rung whose flag is in `tried` (a recovery already took it) is passed over."""
    minimum = _MIN_VIABLE.search(cause.message)
    if minimum:
        fraction = math.ceil((float(minimum["v"]) + 0.02) * 100) / 100
        return ({"mem-fraction-static": f"{fraction:.2f}"},
                f"raise --mem-fraction-static to {fraction:.2f} (the minimum viable it names, plus 0.02)")
    if cause.category == "not_enough_memory":
        current = _float(flags, "mem-fraction-static") or resolved_fraction or 0.8
        fraction = min(0.95, round(current + 0.05, 2))
        return ({"mem-fraction-static": f"{fraction:.2f}"},
                f"raise --mem-fraction-static to {fraction:.2f}: the KV cache got too little")
    if cause.category not in ("cuda_graph_failed", "cuda_oom"):
        return {}, "no flag edit follows from this cause; read the line"
    static = _float(flags, "mem-fraction-static") or resolved_fraction
    if "mem-fraction-static" not in tried and (static is None or static > 0.55):
        new = max(0.5, round((static or 0.85) - 0.1, 2))
        return ({"mem-fraction-static": f"{new:.2f}"},
                f"step 1: lower --mem-fraction-static to {new:.2f} (more room for CUDA graphs and activations)")
    graph_bs = _int(flags, "cuda-graph-max-bs-decode", "cuda-graph-max-bs")
    if "cuda-graph-max-bs-decode" not in tried and (graph_bs is None or graph_bs > 4):
        new_bs = max(4, (graph_bs or 16) // 2)
        return ({"cuda-graph-max-bs-decode": str(new_bs)},
                f"step 2: capture fewer CUDA graphs (--cuda-graph-max-bs-decode {new_bs})")
    draft = _int(flags, "speculative-num-draft-tokens")
    if "speculative-num-draft-tokens" not in tried and flags.get("speculative-algorithm") and (draft is None or draft > 4):
        return ({"speculative-num-steps": "3", "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "4"},
                "step 3: a smaller draft tree (steps 3, topk 1, 4 draft tokens)")
    return {"max-running-requests": "4"}, "step 4: limit concurrent requests (--max-running-requests 4)"


def start_failure(records: Sequence[LogRecord], flags: Flags, tried: frozenset[str] = frozenset()) -> Finding | None:
    ready_at = max((i for i, r in enumerate(records) if isinstance(r, ReadyRecord)), default=-1)
    fatal = [r for r in records[ready_at + 1:] if isinstance(r, ErrorRecord) and r.fatal]
    if not fatal:
        return None
    cause = min(fatal, key=cause_rank)
    resolved = next((r.mem_fraction_static for r in reversed(records)
                     if isinstance(r, ServerArgsRecord) and r.mem_fraction_static is not None), None)
    fix, words = start_ladder(cause, flags, resolved, tried)
    since = fatal[0].timestamp
    when = f" at {clock(cause.timestamp)}" if cause.timestamp else ""
    cost = f"the server did not come up ({cause.category.replace('_', ' ')}{when})"
    evidence = (_evidence(cause, category=cause.category),)
    return Finding(FindingKind.START_FAILURE, Severity.CRITICAL, since, cost, evidence, fix=fix, fix_words=words)


RULES = (start_failure, eager_fallback, capacity_bound, acceptance_collapse, acceptance_drift, adaptive_flapping)


def diagnose(records: Sequence[LogRecord], flags: Flags) -> list[Finding]:
    """Every active finding over `records` (one window of one unit's start, oldest first)."""
    return [found for rule in RULES if (found := rule(records, flags)) is not None]
