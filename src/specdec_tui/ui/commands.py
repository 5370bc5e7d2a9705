"""Command palette entries: every bound action (with its current keys) and every theme.

Reads the same binding list as the footer and the help screen (`ui.keymap`), so nothing can be bound
but missing from the palette.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from textual.command import DiscoveryHit, Hit, Hits, Provider

from specdec_tui.ui.keymap import (
    APP_BINDINGS,
    JOURNAL_BINDINGS,
    MAIN_SCREEN_BINDINGS,
    bound_actions,
    current_keys,
    described,
)


@dataclass(frozen=True, slots=True)
class PaletteEntry:
    title: str
    help: str
    run: Callable[[], object]


def palette_entries(app: SpecdecAppLike) -> Iterator[PaletteEntry]:
    """What the palette offers, in a stable order: app actions, tab/screen actions, then themes."""
    keymap = app.effective_keymap
    for scope, items in (("app", APP_BINDINGS), ("screen", MAIN_SCREEN_BINDINGS), ("journal", JOURNAL_BINDINGS)):
        for binding in bound_actions(items):
            action = _palette_action(scope, binding.action)
            keys = current_keys(binding, keymap, app.key_display)
            yield PaletteEntry(described(binding), f"keys: {keys}", partial(app.run_action, action))
    yield PaletteEntry("Benchmark with a load…", "workload, seed, open-loop arrivals at a rate, SLO (issue 33)",
                       partial(app.run_action, "bench_load"))
    for name in sorted(app.available_themes):
        yield PaletteEntry(f"Theme: {name}", "switch the color theme (saved to the config)", partial(setattr, app, "theme", name))


def _palette_action(scope: str, action: str) -> str:
    """The action string `App.run_action` needs for a binding of `scope` (journal keys via the screen)."""
    if scope == "screen":
        return f"screen.{action}"
    if scope == "journal":
        return f"screen.in_journal('{action}')"
    return action


class SpecdecAppLike(Protocol):
    """What the provider needs from the app."""

    effective_keymap: dict[str, str]
    available_themes: dict[str, object]

    def run_action(self, action: str) -> object: ...

    def key_display(self, key: str) -> str: ...


class SpecdecCommands(Provider):
    """The panel's actions and themes in the command palette (ctrl+p)."""

    async def discover(self) -> Hits:
        for entry in palette_entries(self.app):  # type: ignore[arg-type]
            if not entry.title.startswith("Theme: "):
                yield DiscoveryHit(entry.title, entry.run, help=entry.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in palette_entries(self.app):  # type: ignore[arg-type]
            score = matcher.match(entry.title)
            if score > 0:
                yield Hit(score, matcher.highlight(entry.title), entry.run, help=entry.help)
