"""A Footer that shows its keys from its first frame and rebuilds only when the keys it shows change.

Textual's Footer recomposes (unmounts and mounts every key widget, then restyles them) on every
bindings update, and a focus change is one. Moving the focus into a tab then cost ~50 ms of a
2-core machine while the journal floods; the keys shown are usually the same before and after.

It also composes nothing until the screen's first bindings update, so a start drew the screen once without
keys and then rebuilt the footer for the frame that shows them (issue 16, cold start: ~17 ms of the first
frame on 2 cores). The screen's bindings are known when the footer is composed; it shows them at once.
A key of a compact footer is composed with its `-compact` class: its compact watcher, which adds the class on mount,
then finds it there and restyles nothing (8 keys, each with its two component styles, once per start).
Textual private (`ui.textual_compat`): `Footer._bindings_ready` (compose yields no key while False), `FooterKey`.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from specdec_tui.ui.textual_compat import footer_key_type, footer_keys_from_first_compose


class StableFooter(Footer):
    _shown: tuple[object, ...] | None = None

    def __init__(self, *, compact: bool = False) -> None:
        super().__init__(compact=compact)
        footer_keys_from_first_compose(self)  # the keys from the first compose on (see the docstring)

    def compose(self) -> ComposeResult:
        self._shown = self._signature(self.screen)  # what the keys composed now show
        for widget in super().compose():
            if self.compact and isinstance(widget, footer_key_type()):
                widget.set_class(True, "-compact", update=False)  # as its watcher will: no restyle (docstring)
            yield widget

    def _signature(self, screen: Screen[object]) -> tuple[object, ...]:
        """What the footer displays: each shown binding's key, text, state and tooltip."""
        return tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip)
            for (_node, binding, enabled, tooltip) in screen.active_bindings.values()
            if binding.show
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        if screen is self.screen and self.is_attached and screen.app.app_focus:
            signature = self._signature(screen)
            if signature == self._shown:
                return
            self._shown = signature  # the recompose Footer schedules now shows exactly this
        super().bindings_changed(screen)
