"""Theme loading: the bundled `themes/*.toml`, the user's `<config dir>/themes/*.toml`, and Textual's
built-ins. A bad theme file never stops the panel: all problems become one notification.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from textual.app import App
from textual.theme import Theme

from specdec_tui.core.theme_files import (
    bundled_theme_dir,
    load_theme_files,
    user_theme_dir,
)

FALLBACK_THEME = "textual-dark"

ReturnT = TypeVar("ReturnT")  # any app, whatever it returns


@dataclass(slots=True)
class ThemeLoad:
    """What `register_themes` did: names it added and problems in words (one per bad file)."""

    added: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def theme_dirs() -> list[Path]:
    """Bundled themes first, then the user's, so a user file of the same name wins."""
    return [d for d in (Path(bundled_theme_dir()), user_theme_dir()) if d.is_dir()]


def register_themes(app: App[ReturnT], dirs: list[Path] | None = None) -> ThemeLoad:
    """Register every theme file found in `dirs` with `app` (Textual's built-ins are there already)."""
    load = ThemeLoad()
    specs, errors = load_theme_files(*(theme_dirs() if dirs is None else dirs))
    for spec in specs:
        try:
            theme = Theme(**spec.as_kwargs())
        except (TypeError, ValueError) as err:
            load.problems.append(f"{getattr(spec, 'name', '?')}: {err}")
            continue
        app.register_theme(theme)
        load.added.append(theme.name)
    load.problems.extend(str(err) for err in errors)
    return load


def problems_message(problems: list[str]) -> str:
    """One notification text for all bad theme files."""
    lines = "\n".join(f"• {p}" for p in problems)
    return f"Some theme files could not be loaded and were skipped:\n{lines}\nFix or remove them; the panel uses the others."


def apply_theme(app: App[ReturnT], name: str) -> str | None:
    """Switch to `name`; if no such theme exists, fall back and return a message saying so."""
    if name in app.available_themes:
        app.theme = name
        return None
    app.theme = FALLBACK_THEME
    return f"Theme {name!r} is not available; using {FALLBACK_THEME!r}. Pick one with the command palette (Theme)."
