"""Messages that workers post to the app. Workers talk to the trial loop, the host's journal and the health
watch and only post these; the app's `@on` handlers render them (one writer, no races). The trial loop's events have a message each, in
`ui.loop_messages`.

Written with `__init__`, as Textual's own messages are, not as dataclasses: this module loads before the panel's
first frame, and Python 3.11 compiles each dataclass's generated methods from source (~0.5 ms a class on 2 cores)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # field types only: importing them here put the fleet poller and health watch on the cold start
    from specdec_tui.core.doctor_rules import Finding, FindingKind
    from specdec_tui.core.sglang.stats import LogStats
    from specdec_tui.hosts.base import JournalRecord, ServiceStatus
    from specdec_tui.loop.fleet import FleetRow
    from specdec_tui.loop.health import HealthSnapshot
    from specdec_tui.loop.recovery import RecoveryResult


class HealthChanged(Message):
    """The health watch's latest snapshot (state, systemd status, /health, server facts)."""

    def __init__(self, snapshot: HealthSnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class JournalBatch(Message):
    """Journal records coalesced by the tail worker (a high-rate log becomes few messages).

    `kinds` holds each record's SGLang kind and `lines` its display line, both made by the worker (off the UI
    loop), so the pane neither parses nor formats."""

    def __init__(self, records: list[JournalRecord], kinds: list[str] | None = None, lines: list[str] | None = None) -> None:
        super().__init__()
        self.records = records
        self.kinds = kinds
        self.lines = lines


class LogStatsChanged(Message):
    """The numbers folded from the journal so far (a copy; sent at most ~5 times a second)."""

    def __init__(self, stats: LogStats) -> None:
        super().__init__()
        self.stats = stats


class ServiceInactive(Message):
    """The local demo service is not running at startup (the app starts it, as a real host would run it)."""

    def __init__(self, status: ServiceStatus) -> None:
        super().__init__()
        self.status = status


class FleetRows(Message):
    """One poll of every configured host (the Fleet tab), posted by the fleet feed's worker; `refused`: why there
    are no rows (hosts that are one server)."""

    def __init__(self, rows: list[FleetRow], *, refused: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.refused = refused


class DoctorFindingRaised(Message):
    """The doctor found something (or its figures changed): shown in the Health tab's Doctor section."""

    def __init__(self, finding: Finding) -> None:
        super().__init__()
        self.finding = finding


class DoctorFindingCleared(Message):
    """A finding's evidence stopped: it leaves the Doctor section."""

    def __init__(self, kind: FindingKind) -> None:
        super().__init__()
        self.kind = kind


class RecoveryOffered(Message):
    """A pushed unit failed to start and the doctor names a rung of the ladder: the panel asks before it tries."""

    def __init__(self, finding: Finding, failed_text: str, last_good: str | None) -> None:
        super().__init__()
        self.finding = finding
        self.failed_text = failed_text
        self.last_good = last_good


class RecoveryEnded(Message):
    """The recovery the user accepted has ended: came up, or back on the last good unit (or neither)."""

    def __init__(self, result: RecoveryResult) -> None:
        super().__init__()
        self.result = result
