"""How a number is written, for every view (pure: no Textual, no IO): the panel's tables and badges, the headless
commands' tables (`cli/render.py`) and the exported reports (`core/report_html.py`, `core/session_export.py`).

One place decides how a tok/s, a millisecond, a percentage or a change is written, so the bench table, the trials
list, `session show` and the HTML report read alike (issue 34: four owners had four rules). Missing values are
shown as "–", never "None".
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


def fmt_fixed(value: float | int | None, digits: int = 1) -> str:
    """A number with thousands separators and always `digits` decimals (tables that line up by the decimal point:
    the headless commands' and the reports')."""
    return MISSING if value is None else f"{value:,.{digits}f}"


def fmt_sig(value: float | None, figures: int = 3) -> str:
    """A figure in a sentence to `figures` significant digits ("0.02", "12.3"), with thousands separators and never
    an exponent ("1,234", where "{:.3g}" wrote "1.23e+03")."""
    if value is None:
        return MISSING
    if abs(value) >= 10 ** (figures - 1):
        return f"{value:,.0f}"
    text = f"{value:.{figures}g}"
    return f"{value:.{figures + 3}f}".rstrip("0").rstrip(".") if "e" in text else text


def fmt_int(value: int | None) -> str:
    return MISSING if value is None else f"{value:,d}"


def fmt_count(value: int, one: str, many: str) -> str:
    """"1 launch", "3 launches", "1,200 launches": a count and its noun, singular for one."""
    return f"{fmt_int(value)} {one if value == 1 else many}"


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


def fmt_mib(mib: float | None) -> str:
    """GPU memory: "71.2 GiB" above 1 GiB, else MiB."""
    if mib is None:
        return MISSING
    if mib >= 1024:
        return f"{mib / 1024:.1f} GiB"
    return f"{mib:.0f} MiB"
