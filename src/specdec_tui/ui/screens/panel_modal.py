"""The base of every question, form and help the panel puts over its screen. Textual stops the app's key bindings
at a modal screen (only the modal's own apply), so quit's ctrl+q did nothing while one was up — the question about
an earlier draft at start held it, and the keys after it. Here ctrl+q (id `quit-from-modal`) runs the app's quit,
which asks first, as from the main screen, when an edit is unpushed or a benchmark runs."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from textual.binding import BindingType
from textual.screen import ModalScreen

from specdec_tui.ui.keymap import MODAL_BINDINGS

ResultT = TypeVar("ResultT")


class PanelModal(ModalScreen[ResultT]):
    """A modal screen that answers quit's key (its subclasses' BINDINGS are added to these by Textual)."""

    BINDINGS: ClassVar[list[BindingType]] = MODAL_BINDINGS
