"""Progress bars drawn in text, for the panel's cells and panes (pure: no Textual)."""

from __future__ import annotations


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
