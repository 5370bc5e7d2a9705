"""The doctor: one owner for "what is wrong with this host now". The panel, `fleet status` and
`specdec-tui doctor` all ask it.

`examine` reads one window of a host's journal (from the unit's current start, or `since`) and its unit's flags,
and hands the parsed records to `core.doctor_rules`. `DoctorWatch` does the same live over the records the
journal follow already parses, and says which findings appeared and which cleared (their evidence stopped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from specdec_tui.core.doctor_metrics import metrics_findings
from specdec_tui.core.doctor_rules import Finding, FindingKind, diagnose
from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import LogRecord, ServerArgsRecord
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import Host, JournalRecord

if TYPE_CHECKING:  # httpx is loaded with the first read of /metrics, not with the panel's first frame
    import httpx

__all__ = ["with_gauges", "gauges_from", "DoctorReport", "DoctorWatch", "FindingRaised", "FindingCleared", "examine", "findings_as_json",
           "unit_flags", "apply_finding", "watched", "JOURNAL_READ"]

JOURNAL_READ = 20000  # lines read back; the window is cut from them by time
# The kinds of line the rules read; text lines only when they carry an adaptive switch or the captured sizes.
WATCHED_KINDS = frozenset({"decode", "error", "ready", "server_args", "startup_summary", "adjust"})
WATCHED_TEXT = ("Switch adaptive runtime state", "Capture cuda graph bs")
KEPT_RECORDS = 5000  # what the live watch keeps of one start (rules read decode lines, switches and errors)


@dataclass(frozen=True, slots=True)
class DoctorReport:
    host: str
    window_start: datetime | None
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class FindingRaised:
    """A finding became active (or its figures changed: it is raised again with the new ones)."""

    finding: Finding


@dataclass(frozen=True, slots=True)
class FindingCleared:
    kind: FindingKind


DoctorEvent = FindingRaised | FindingCleared


def unit_flags(text: str) -> dict[str, str | None]:
    """The unit's SGLang flags by name (no dashes); none when the unit does not parse."""
    try:
        unit = UnitFile.parse(text)
    except ValueError:
        return {}
    return dict(unit.flags())


def apply_finding(unit: UnitFile, finding: Finding) -> UnitFile:
    """The unit with the finding's fix applied as an edit (unchanged when it has none)."""
    return unit.set_flags(finding.fix, unset=finding.remove)


async def examine(host: Host, name: str, *, since: timedelta | None = None, now: datetime | None = None) -> DoctorReport:
    """The findings over the unit's current start (or the last `since`)."""
    started, text = await _status_and_unit(host)
    start = (now or datetime.now().astimezone()) - since if since is not None else started
    records: list[LogRecord] = []
    async for entry in host.journal(follow=False, lines=JOURNAL_READ):
        if entry.kind != "line":
            continue
        if start is not None and _before(entry.timestamp, start):
            continue
        record = parse_line(entry.message)
        if record.timestamp is None:
            record.timestamp = entry.timestamp
        records.append(record)
    flags = unit_flags(text)
    findings = diagnose(records, flags)
    if not any(r.kind == "decode" for r in records):  # no decode lines at this log level: ask the gauges
        gauges = await _gauges(host.info.base_url, api_key_from_flags(flags))
        findings = with_gauges(findings, records, flags, gauges, now or datetime.now().astimezone())
    return DoctorReport(name, start, findings)


def with_gauges(findings: list[Finding], records: Sequence[LogRecord], flags: Mapping[str, str | None],
                gauges: Mapping[str, float] | None, at: datetime | None) -> list[Finding]:
    """The journal's findings and, where the window has no decode line to say (a server at `--log-level warning`),
    what `/metrics` says at `at` for the kinds the journal did not find."""
    if gauges is None or at is None or any(r.kind == "decode" for r in records):
        return findings
    seen = {f.kind for f in findings}
    return findings + [f for f in metrics_findings(gauges, at, records, flags) if f.kind not in seen]


def api_key_from_flags(flags: Mapping[str, str | None]) -> str | None:
    return flags.get("api-key")


async def _gauges(base_url: str, api_key: str | None) -> dict[str, float] | None:
    """The server's /metrics summed by name; None when it does not answer (down, or metrics not enabled)."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(timeout=httpx.Timeout(3.0, connect=1.0), headers=headers) as client:
        return await gauges_from(client, base_url)


async def gauges_from(client: httpx.AsyncClient, base_url: str) -> dict[str, float] | None:
    """/metrics summed by name with the caller's client (its key, its pool); None when it does not answer."""
    import httpx

    from specdec_tui.core.prometheus_text import parse_metrics  # not bench.server_stats: it loads aiohttp

    try:
        resp = await client.get(base_url + "/metrics", timeout=httpx.Timeout(3.0, connect=1.0))
    except httpx.HTTPError:
        return None
    return parse_metrics(resp.text) if resp.status_code == 200 else None


async def _status_and_unit(host: Host) -> tuple[datetime | None, str]:
    status = await host.status()
    return status.active_enter, await host.read_unit()


def _before(t: datetime, start: datetime) -> bool:
    """`t < start`, with a naive side read as local wall-clock time (a log line's own stamp is naive)."""
    if (t.tzinfo is None) != (start.tzinfo is None):
        t, start = _local(t), _local(start)
    return t < start


def _local(t: datetime) -> datetime:
    return t.astimezone().replace(tzinfo=None) if t.tzinfo is not None else t


def watched(record: LogRecord) -> bool:
    """A line the rules read (the rest need not be kept)."""
    return record.kind in WATCHED_KINDS or any(t in record.message for t in WATCHED_TEXT)


@dataclass(slots=True)
class DoctorWatch:
    """Live findings for one host: fed the parsed journal records, says what appeared and what cleared.

    A new start (its `server_args` line) begins a new window, so a fixed unit's findings clear."""

    flags: Mapping[str, str | None] = field(default_factory=dict)
    records: list[LogRecord] = field(default_factory=list)
    active: dict[FindingKind, Finding] = field(default_factory=dict)
    gauges: Mapping[str, float] | None = None  # the newest /metrics read (None: none, or it did not answer)
    gauges_at: datetime | None = None
    _unit_text: str | None = None

    def feed(self, batch: Sequence[LogRecord]) -> list[DoctorEvent]:
        for record in batch:
            if isinstance(record, ServerArgsRecord):
                self.records.clear()
                self.gauges = None  # the old server's gauges say nothing of the new start
            self.records.append(record)
        if len(self.records) > KEPT_RECORDS:  # old decode lines go; the start's own lines (args, limits) stay
            cut = len(self.records) - KEPT_RECORDS
            self.records[:cut] = [r for r in self.records[:cut] if r.kind != "decode"]
        return self._update(self._diagnose())

    def observe_gauges(self, gauges: Mapping[str, float] | None, at: datetime) -> list[DoctorEvent]:
        """A read of /metrics (None: it did not answer): where the journal has no decode lines, the gauges say
        whether requests queue behind a full batch or acceptance collapsed now; the next read replaces them."""
        self.gauges, self.gauges_at = gauges, at
        return self._update(self._diagnose())

    def _diagnose(self) -> list[Finding]:
        return with_gauges(diagnose(self.records, self.flags), self.records, self.flags, self.gauges, self.gauges_at)

    def observe(self, entries: Sequence[JournalRecord], kinds: Sequence[str] | None,
                unit_text: str | None) -> list[DoctorEvent]:
        """One journal batch as the follow delivers it (`kinds` from its parse, when it had one): only the lines
        the rules read are parsed again, so a flood of other lines costs a kind check each."""
        flags_changed = unit_text is not None and unit_text != self._unit_text
        if flags_changed:
            self._unit_text = unit_text
            self.flags = unit_flags(unit_text or "")
        picked: list[LogRecord] = []
        for i, entry in enumerate(entries):
            if entry.kind != "line":
                continue
            kind = kinds[i] if kinds is not None and i < len(kinds) else None
            if kind is not None and kind not in WATCHED_KINDS and not any(t in entry.message for t in WATCHED_TEXT):
                continue
            record = parse_line(entry.message)
            if record.timestamp is None:
                record.timestamp = entry.timestamp
            picked.append(record)
        if not picked and not flags_changed:
            return []  # nothing the rules read: the findings stand as they were
        return self.feed(picked)

    def set_flags(self, flags: Mapping[str, str | None]) -> list[DoctorEvent]:
        self.flags = flags
        return self._update(self._diagnose())

    def _update(self, found: list[Finding]) -> list[DoctorEvent]:
        events: list[DoctorEvent] = []
        now = {f.kind: f for f in found}
        for kind in list(self.active):
            if kind not in now:
                del self.active[kind]
                events.append(FindingCleared(kind))
        for kind, finding in now.items():
            if self.active.get(kind) != finding:
                self.active[kind] = finding
                events.append(FindingRaised(finding))
        return events


def findings_as_json(report: DoctorReport) -> dict[str, object]:
    """The interface scripts depend on: `findings`, each with kind, severity, since, evidence and fix."""
    return {
        "host": report.host,
        "window_start": report.window_start.isoformat() if report.window_start else None,
        "findings": [
            {
                "kind": f.kind.value,
                "severity": f.severity.value,
                "since": f.since.isoformat() if f.since else None,
                "cost": f.cost,
                "evidence": [
                    {"time": e.time.isoformat() if e.time else None, "line": e.line, "figures": e.figures}
                    for e in f.evidence
                ],
                "fix": {"set": {f"--{k}": v for k, v in f.fix.items()}, "remove": [f"--{k}" for k in f.remove],
                        "words": f.fix_words},
            }
            for f in report.findings
        ],
    }
