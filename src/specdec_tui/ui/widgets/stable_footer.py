"""A Footer that rebuilds only when the keys it shows change.

Textual's Footer recomposes (unmounts and mounts every key widget, then restyles them) on every
bindings update, and a focus change is one. Moving the focus into a tab then cost ~50 ms of a
2-core machine while the journal floods; the keys shown are usually the same before and after.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class StableFooter(Footer):
    _shown: tuple | None = None

    def _signature(self, screen: Screen) -> tuple:
        """What the footer displays: each shown binding's key, text, state and tooltip."""
        return tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip)
            for (_node, binding, enabled, tooltip) in screen.active_bindings.values()
            if binding.show
        )

    def bindings_changed(self, screen: Screen) -> None:
        if screen is self.screen and self.is_attached and screen.app.app_focus:
            signature = self._signature(screen)
            if signature == self._shown:
                return
            self._shown = signature  # the recompose Footer schedules now shows exactly this
        super().bindings_changed(screen)
