"""How long, and how much longer: the words every progress display uses (health wait, benchmark level, sweep,
replay, and the headless commands), so "about 3 min 05 s left" reads the same everywhere."""

from __future__ import annotations


def duration_words(seconds: float) -> str:
    """12 s, 3 min 05 s, 1 h 02 min."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def time_left(done: float, total: float, elapsed_s: float) -> float | None:
    """Seconds left at the pace so far; None until there is a pace to go by (nothing done yet)."""
    if done <= 0 or total <= 0:
        return None
    return max(0.0, elapsed_s / done * (total - done))


def eta_words(done: float, total: float, elapsed_s: float) -> str:
    """"about 40 s left", "estimating the time left…" before the first unit of work is done, "" when done."""
    if done >= total > 0:
        return ""
    left = time_left(done, total, elapsed_s)
    return "estimating the time left…" if left is None else f"about {duration_words(left)} left"
