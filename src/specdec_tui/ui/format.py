"""Number formatting for the panel's tables and badges (pure: no Textual, no IO).

One place decides how a tok/s, a millisecond, a percentage or a change is written, so the bench
table, the trials list and the health pane read alike. Missing values are shown as "–", never "None".
"""

from __future__ import annotations

MISSING = "–"


def fmt_num(value: float | int | None, digits: int = 1) -> str:
    """A plain number with thousands separators; `digits` decimals below 1,000, none above."""
    if value is None:
        return MISSING
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def fmt_int(value: int | None) -> str:
    return MISSING if value is None else f"{value:,d}"


def fmt_ms(value: float | None) -> str:
    """Milliseconds, switching to seconds past 10 s so the column stays narrow."""
    if value is None:
        return MISSING
    if value >= 10_000:
        return f"{value / 1000:.1f}s"
    if value >= 100:
        return f"{value:.0f}ms"
    return f"{value:.1f}ms"


def fmt_pct(fraction: float | None, digits: int = 0) -> str:
    """A fraction (0.42) as a percentage ("42%")."""
    if fraction is None:
        return MISSING
    return f"{fraction * 100:.{digits}f}%"


def fmt_delta(pct: float | None) -> str:
    """A signed change: "+12.3%", "-4.0%", "±0.0%"; "–" when unknown."""
    if pct is None:
        return MISSING
    if round(pct, 1) == 0:
        return "±0.0%"
    return f"{pct:+.1f}%"


def delta_style(pct: float | None, *, higher_is_better: bool = True, threshold: float = 1.0) -> str:
    """Theme-variable name of the colour for a change: "success", "error" or "" (neutral).

    Changes smaller than `threshold` percent are treated as noise and stay neutral.
    """
    if pct is None or abs(pct) < threshold:
        return ""
    better = pct > 0 if higher_is_better else pct < 0
    return "success" if better else "error"


def text_bar(fraction: float, width: int = 10) -> str:
    """A progress bar made of block characters, e.g. "█████▌    " for 0.55 at width 10."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[part] if part else ""
    return ("█" * full + partial).ljust(width)


def line_bar(fraction: float, width: int = 8) -> str:
    """A progress bar drawn as a line ("━━━━────" at 0.5), not solid blocks: a finished bar stays a
    thin line readable on any row background (a table's cursor row included), never a white slab."""
    fraction = min(max(fraction, 0.0), 1.0)
    done = round(fraction * width)
    return "━" * done + "─" * (width - done)


def fmt_mib(mib: float | None) -> str:
    """GPU memory: "71.2 GiB" above 1 GiB, else MiB."""
    if mib is None:
        return MISSING
    if mib >= 1024:
        return f"{mib / 1024:.1f} GiB"
    return f"{mib:.0f} MiB"
