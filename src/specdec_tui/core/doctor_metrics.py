"""The doctor's rules over `/metrics`, for a window whose journal has no decode lines (a server started with
`--log-level warning` logs none): the gauges SGLang exports say whether requests queue behind a full batch and
whether speculation's acceptance has collapsed, right now."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from specdec_tui.core.doctor_rules import (
    COLLAPSE_ACCEPT_LEN,
    Evidence,
    Finding,
    FindingKind,
    Flags,
    Severity,
    clock,
    max_running,
)
from specdec_tui.core.sglang.records import LogRecord

__all__ = ["metrics_findings"]

RUNNING = "sglang:num_running_reqs"
QUEUED = "sglang:num_queue_reqs"
ACCEPT = "sglang:spec_accept_length"
STEPS = "sglang:spec_num_steps"


def metrics_findings(gauges: Mapping[str, float], at: datetime, records: Sequence[LogRecord],
                     flags: Flags) -> list[Finding]:
    """Capacity bound and acceptance collapse as the gauges show them at `at`."""
    found: list[Finding] = []
    running, queued = int(gauges.get(RUNNING, 0)), int(gauges.get(QUEUED, 0))
    limit = max_running(records, flags)
    if limit and running >= limit and queued > 0:
        evidence = Evidence(at, f"/metrics: {RUNNING} {running}, {QUEUED} {queued}",
                            {"running": running, "queue": queued, "limit": limit})
        target = limit * 2
        found.append(Finding(
            FindingKind.CAPACITY_BOUND, Severity.WARNING, at,
            f"{queued} requests wait behind max_running_requests={limit} at {clock(at)} (from /metrics)",
            (evidence,), fix={"max-running-requests": str(target)},
            fix_words=(f"raise --max-running-requests to {target} if the KV cache has room (the decode lines that "
                       "would say are not logged at this log level)")))
    accept, steps = gauges.get(ACCEPT), int(gauges.get(STEPS, 0))
    if steps >= 1 and running > 0 and accept is not None and 0 < accept < COLLAPSE_ACCEPT_LEN:  # 0: none measured yet
        evidence = Evidence(at, f"/metrics: {ACCEPT} {accept:.2f}, {STEPS} {steps}",
                            {"accept_len": round(accept, 2), "steps": steps})
        found.append(Finding(
            FindingKind.ACCEPTANCE_COLLAPSE, Severity.CRITICAL, at,
            f"accept length {accept:.2f} of a possible {steps + 1} at {clock(at)} (from /metrics)", (evidence,),
            fix_words="no flag fixes this: check the draft model belongs to the target"))
    return found
