"""Which colour a trial's status or a change is shown in, for every view (pure: no Textual, no IO). Issue 34: the
panel's trials list, its sweep table, the compare screen, `session show` and the HTML report each had a table
of their own (a cancelled trial was yellow in one, dim in another). A status or a change has a `Tone` here; each
medium has one table from tone to what it draws with (a Rich style for terminal text, a theme variable for the
panel's CSS, a colour for the HTML report)."""

from __future__ import annotations

from enum import Enum


class Tone(Enum):
    GOOD = "good"  # a trial that finished; a change for the better
    BAD = "bad"  # a trial that failed; a change for the worse
    MUTED = "muted"  # cancelled, pending, skipped: nothing measured to judge
    ACTIVE = "active"  # running now


_STATUS = {"ok": Tone.GOOD, "failed": Tone.BAD, "running": Tone.ACTIVE,
           "cancelled": Tone.MUTED, "pending": Tone.MUTED, "skipped": Tone.MUTED}

# Terminal text outside the panel's theme: the headless commands and Rich text in the panel's cells.
RICH_STYLE = {Tone.GOOD: "green", Tone.BAD: "red", Tone.MUTED: "dim", Tone.ACTIVE: "cyan"}
# The panel's CSS: the theme's variable (its `$text-…` variant is the readable foreground).
THEME_VARIABLE = {Tone.GOOD: "success", Tone.BAD: "error", Tone.MUTED: "muted", Tone.ACTIVE: "accent"}
# The HTML report (light page).
HTML_COLOUR = {Tone.GOOD: "#1a7f37", Tone.BAD: "#b42318", Tone.MUTED: "#6e7781", Tone.ACTIVE: "#0969da"}


def status_tone(status: str) -> Tone:
    """A trial's (or a sweep value's) status; an unknown one is muted."""
    return _STATUS.get(status, Tone.MUTED)


def delta_tone(pct: float | None, *, higher_is_better: bool = True, threshold: float = 1.0) -> Tone | None:
    """A change in percent: GOOD or BAD, or None (neutral) when unknown or smaller than `threshold` percent,
    which is noise."""
    if pct is None or abs(pct) < threshold:
        return None
    better = pct > 0 if higher_is_better else pct < 0
    return Tone.GOOD if better else Tone.BAD


def rich_style(tone: Tone | None, *, bold: bool = False) -> str:
    """The Rich style of `tone` ("" for none); `bold` for a status that must stand out in its row."""
    if tone is None:
        return ""
    style = RICH_STYLE[tone]
    return f"bold {style}" if bold and tone in (Tone.GOOD, Tone.BAD) else style
