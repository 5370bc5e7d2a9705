"""The Health tab's Doctor section: the doctor's active findings, each with its cost, its newest evidence and the
fix `f` applies as an edit. It shows what `loop.doctor` says; it decides nothing."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from specdec_tui.core.doctor_rules import Finding, FindingKind, Severity, clock
from specdec_tui.core.terminal_codes import terminal_safe

_ICON = {Severity.CRITICAL: "✗", Severity.WARNING: "!"}


def fix_words(finding: Finding) -> str:
    """"--a 1, removed --b" or "no flag edit"."""
    edits = [f"--{k}" + ("" if v is None else f" {v}") for k, v in finding.fix.items()]
    edits += [f"removed --{k}" for k in finding.remove]
    return ", ".join(edits) or "no flag edit"


class DoctorSection(Static):
    """Lists the active findings in the order the doctor raised them (see the module doc)."""

    DEFAULT_CSS = """
    DoctorSection { height: auto; margin-bottom: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("Doctor: ✓ no findings", id=id)
        self.findings: dict[FindingKind, Finding] = {}

    def raise_finding(self, finding: Finding) -> None:
        self.findings[finding.kind] = finding
        self._show()

    def clear_finding(self, kind: FindingKind) -> None:
        if self.findings.pop(kind, None) is not None:
            self._show()

    def first_fixable(self) -> Finding | None:
        """The finding `f` fixes: critical before warnings."""
        fixable = sorted((f for f in self.findings.values() if f.fixable), key=lambda f: f.severity != Severity.CRITICAL)
        return fixable[0] if fixable else None

    @property
    def plain(self) -> str:
        return self._text().plain

    def _text(self) -> Text:
        if not self.findings:
            return Text("Doctor: ✓ no findings")
        out = Text(f"Doctor: ⚠ {len(self.findings)} finding{'s' if len(self.findings) != 1 else ''}"
                   + (" (f applies a fix)" if self.first_fixable() else ""), style="bold")
        for f in self.findings.values():
            style = "bold red" if f.severity is Severity.CRITICAL else "bold yellow"
            out.append(f"\n{_ICON[f.severity]} {f.kind.value}", style=style)
            out.append(f" since {clock(f.since)}: {terminal_safe(f.cost)}")
            if f.evidence:
                last = f.evidence[-1]
                out.append(f"\n    {clock(last.time)} {terminal_safe(last.line)[:160]}", style="dim")
            out.append(f"\n    fix: {fix_words(f)} — {terminal_safe(f.fix_words)}")
        return out

    def _show(self) -> None:
        self.update(self._text())
