"""What a rollback will restore, said before the operator confirms it: the host's newest backup (the file the
rollback puts back), the session's trial that ran that unit, and the flags that change."""

from __future__ import annotations

from dataclasses import dataclass

from specdec_tui.core.compare import FlagDiff, flag_diff, shown_label
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import Host
from specdec_tui.hosts.errors import HostError


@dataclass(frozen=True, slots=True)
class RollbackPreview:
    """The backup a rollback restores; `trial` is None when no trial of the session ran that unit."""

    backup: int
    text: str
    trial: Trial | None
    changes: list[FlagDiff]

    def describe(self, unit: str, host: str) -> str:
        """The confirm question: what is restored (trial, label, time) and the flags that change."""
        if self.trial is not None:
            when = self.trial.pushed_at or self.trial.started_at
            what = f"trial {self.trial.id} ({shown_label(self.trial)}, {when:%Y-%m-%d %H:%M} UTC)"
        else:
            what = f"backup {self.backup} (no trial of this session ran it)"
        if self.changes:
            flags = "\n".join(f"  {d.describe()}" for d in self.changes)
            changed = f"Flags that change:\n{flags}"
        else:
            changed = "No flag changes (the rest of the unit differs)."
        return f"Roll {unit} on {host} back to {what} and restart it?\n{changed}"


async def rollback_preview(host: Host, running: str, session: Session) -> RollbackPreview | None:
    """The newest backup that differs from `running` (a rollback skips a copy of the running unit), or None
    when there is none or it cannot be read (the question then says less; the rollback itself still reports)."""
    try:
        numbers = await host.history()
        for number in reversed(numbers):
            text = await host.read_backup(number)
            if text != running:
                break
        else:
            return None
    except HostError:
        return None
    flags = _flags(text)
    trial = (next((t for t in reversed(session.trials) if t.unit_text == text), None)
             or next((t for t in reversed(session.trials) if flags and t.flags == flags), None))  # a redacted unit
    return RollbackPreview(number, text, trial, flag_diff(_flags(running), flags))


def _flags(text: str) -> dict[str, str | None]:
    try:
        return UnitFile.parse(text).flags()
    except ValueError:  # a unit that does not parse: no flags to compare, the question still names the backup
        return {}
