"""The sweep's form: which flag, which values, how many runs, what "best" means, on which hosts. It dismisses
with a `loop.sweep_plan.SweepPlan` (made by `loop.sweep_form.plan_from_form`), or None when cancelled."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from specdec_tui.core.config import BenchProfile
from specdec_tui.loop.sweep_form import (
    OBJECTIVES,
    SWEEP_FLAGS,
    FormError,
    SweepForm,
    plan_from_form,
)
from specdec_tui.loop.sweep_plan import SweepPlan


class SweepFormScreen(ModalScreen[SweepPlan | None]):
    """Asks for the sweep; dismisses with a `sweep.SweepPlan`, or None when cancelled."""

    BINDINGS = [Binding("escape", "close", "Cancel", id="sweep-form-close")]
    # One row per field (label | compact widget): the whole form, hosts included, fits an 80x24 terminal.
    DEFAULT_CSS = """
    SweepFormScreen { align: center middle; }
    SweepFormScreen > Vertical { width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $accent;
                                 background: $surface; padding: 0 1; }
    SweepFormScreen Grid { grid-size: 2; grid-columns: 16 1fr; grid-rows: 1; grid-gutter: 1 1; height: auto;
                           margin-top: 1; }
    SweepFormScreen #sweep-form-hint { color: $text-muted; margin-top: 1; }
    SweepFormScreen #sweep-form-error { color: $text-error; height: auto; margin-top: 1; }
    SweepFormScreen > Vertical > Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    SweepFormScreen Button { margin-left: 2; }
    """

    def __init__(self, profile: BenchProfile, *, flag: str = "speculative-num-steps", values: str = "1..4",
                 repeats: int = 3, configured: Sequence[str] = (), active: str = "",
                 last: SweepForm | None = None) -> None:
        super().__init__()
        self.profile = profile
        self.configured, self.active = tuple(configured), active
        # `last`: what the form held when it was last left (started or cancelled), shown again as it was typed
        self.initial = last or SweepForm(flag, values, str(repeats), "c1", active)
        self.left: SweepForm | None = None  # what it holds when it is left: the opener keeps it for next time

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Sweep one flag: push, restart and benchmark each value", id="sweep-form-title")
            with Grid():
                yield Label("Flag")
                yield Select([(label, name) for label, name in SWEEP_FLAGS], value=self.initial.flag,
                             allow_blank=False, id="sweep-flag", compact=True)
                yield Label("Values")
                yield Input(self.initial.values, placeholder="1..6 or 1,2,3", id="sweep-values", compact=True)
                yield Label("Runs per value")
                # not type="integer": that drops the dots of a mistyped "1..3" and reads 13; the plan says what is wrong
                yield Input(self.initial.repeats, placeholder="3", id="sweep-repeats", compact=True)
                yield Label("Objective")
                objective = self.initial.objective if self.initial.objective in {k for _, k in OBJECTIVES} else "c1"
                yield Select([(label, key) for label, key in OBJECTIVES], value=objective, allow_blank=False,
                             id="sweep-objective", compact=True)
                if len(self.configured) > 1:  # several hosts in the config: the sweep may run on some at once
                    yield Label("Hosts")
                    yield Input(self.initial.hosts, placeholder=self.active, id="sweep-hosts", compact=True)
            if len(self.configured) > 1:
                yield Static(f"Several hosts (of {', '.join(self.configured)}) share the values and run at once; "
                             "their units must match but for the flag.", id="sweep-form-hint", markup=False)
            yield Static("", id="sweep-form-error", markup=False)
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel", compact=True)
                yield Button("Start sweep", id="start", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#sweep-values", Input).focus()

    def form(self) -> SweepForm:
        return SweepForm(
            flag=str(self.query_one("#sweep-flag", Select).value),
            values=self.query_one("#sweep-values", Input).value,
            repeats=self.query_one("#sweep-repeats", Input).value,
            objective=str(self.query_one("#sweep-objective", Select).value),
            hosts=self.query_one("#sweep-hosts", Input).value if self.query("#sweep-hosts") else self.active,
        )

    def submit(self) -> None:
        self.left = self.form()
        try:
            plan = plan_from_form(self.left, self.profile, configured=self.configured, active=self.active)
        except FormError as err:
            self.query_one("#sweep-form-error", Static).update(str(err))
            return
        self.dismiss(plan)

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
