"""Messages that workers post to the app. Workers talk to the trial loop, the host's journal and the health
watch and only post these; the app's `@on` handlers render them (one writer, no races)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # field types only: importing them here put the fleet poller and health watch on the cold start
    from specdec_tui.core.sglang.stats import LogStats
    from specdec_tui.hosts.base import JournalRecord, ServiceStatus
    from specdec_tui.loop.events import LoopEvent
    from specdec_tui.loop.fleet import FleetRow
    from specdec_tui.loop.health import HealthSnapshot


@dataclass
class LoopEventMessage(Message):
    """One event of the trial loop (`loop.events`), in the order the loop emitted it."""

    event: LoopEvent


@dataclass
class HealthChanged(Message):
    snapshot: HealthSnapshot


@dataclass
class JournalBatch(Message):
    """Journal records coalesced by the tail worker (a high-rate log becomes few messages).

    `kinds` holds each record's SGLang kind and `lines` its display line, both made by the worker (off the UI
    loop), so the pane neither parses nor formats."""

    records: list[JournalRecord]
    kinds: list[str] | None = None
    lines: list[str] | None = None


@dataclass
class LogStatsChanged(Message):
    """The numbers folded from the journal so far (a copy; sent at most ~5 times a second)."""

    stats: LogStats


@dataclass
class ServiceInactive(Message):
    """The local demo service is not running at startup (the app starts it, as a real host would run it)."""

    status: ServiceStatus


@dataclass
class FleetRows(Message):
    """One poll of every configured host (the Fleet tab), posted by the fleet feed's worker."""

    rows: list[FleetRow]
