"""The shape the panel's forms share (the benchmark load form, the sweep form): a heading, one row per field
(label | compact widget) so a whole form fits an 80x24 terminal, an error line, Cancel and a start button. The
fields are read into the form's dataclass by name (`#<prefix>-<field>`), turned into what the form dismisses with
by the loop's rules (`result`), and a refusal is said on the error line. What the form held when it was left
(started or cancelled) is kept in `left`, for the opener to show again."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.widgets import Button, Input, Select, Static

from specdec_tui.core.long_words import clip_long_words
from specdec_tui.ui.screens.panel_modal import PanelModal

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

FormT = TypeVar("FormT")  # the fields as typed (a frozen dataclass of strings)
ResultT = TypeVar("ResultT")  # what the form dismisses with when it starts


class FormScreen(PanelModal[ResultT | None], Generic[FormT, ResultT]):
    """A modal form; subclasses name their fields (`fields_compose`), read them (`form`, through `field_values`)
    and turn them into the result (`result`, raising one of `ERRORS` with the words to show)."""

    PREFIX: ClassVar[str]  # the widgets' ids: "<prefix>-<field>", "<prefix>-form-error"
    ERRORS: ClassVar[tuple[type[Exception], ...]]  # the loop's refusals of what was typed
    # Set on the class, or per form in `__init__` (one screen class may ask for different things):
    heading: str
    start_label: str  # the start button's
    first_field: str  # the field that has the focus when the form opens

    DEFAULT_CSS = """
    FormScreen { align: center middle; }
    FormScreen > Vertical { width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $accent;
                            background: $surface; padding: 0 1; }
    FormScreen Grid { grid-size: 2; grid-columns: 16 1fr; grid-rows: 1; grid-gutter: 1 1; height: auto; margin-top: 1; }
    FormScreen .form-error { color: $text-error; height: auto; margin-top: 1; }
    FormScreen > Vertical > Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    FormScreen Button { margin-left: 2; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.left: FormT | None = None  # what it holds when it is left: the opener may keep it for next time

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.heading, id=f"{self.PREFIX}-form-title")
            with Grid():
                yield from self.fields_compose()
            yield from self.notes_compose()
            yield Static("", id=f"{self.PREFIX}-form-error", classes="form-error", markup=False)
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel", compact=True)
                yield Button(self.start_label, id="start", variant="primary", compact=True)

    def fields_compose(self) -> ComposeResult:
        """The rows: a `Label`, then the field's `Input` or `Select` with id "<prefix>-<field>"."""
        raise NotImplementedError

    def notes_compose(self) -> ComposeResult:
        """Lines under the fields (none by default)."""
        yield from ()

    def on_mount(self) -> None:
        self.query_one(f"#{self.PREFIX}-{self.first_field}").focus()

    def field_values(self, form_type: type[DataclassInstance]) -> dict[str, str]:
        """Each field of `form_type` as its widget shows it; one the form does not show, `absent(name)`."""
        values: dict[str, str] = {}
        for spec in fields(form_type):
            found = self.query(f"#{self.PREFIX}-{spec.name}")
            widget = found.first() if found else None
            values[spec.name] = (str(widget.value) if isinstance(widget, (Input, Select)) else self.absent(spec.name))
        return values

    def absent(self, name: str) -> str:
        """The value of a field the form does not show."""
        raise LookupError(f"the form shows no field {name!r}")

    def form(self) -> FormT:
        raise NotImplementedError

    def result(self, form: FormT) -> ResultT:
        raise NotImplementedError

    def submit(self) -> None:
        self.left = self.form()
        try:
            result = self.result(self.left)
        except self.ERRORS as err:
            self.query_one(f"#{self.PREFIX}-form-error", Static).update(clip_long_words(str(err)))
            return
        self.dismiss(result)

    def cancel(self) -> None:
        self.left = self.form()
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, _: Input.Submitted) -> None:
        self.submit()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.submit()
        else:
            self.cancel()

    def action_close(self) -> None:
        self.cancel()
