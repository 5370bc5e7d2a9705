"""The sweep's form: which flag, which values, how many runs, what "best" means, on which hosts. It dismisses
with a `loop.sweep_plan.SweepPlan` (made by `loop.sweep_form.plan_from_form`), or None when cancelled; what it
held when it was left (`left`) is shown again the next time it opens (`SessionSide.sweep`)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Label, Select, Static

from specdec_tui.core.config import BenchProfile
from specdec_tui.loop.sweep_form import (
    OBJECTIVES,
    SWEEP_FLAGS,
    FormError,
    SweepForm,
    plan_from_form,
)
from specdec_tui.loop.sweep_plan import SweepPlan
from specdec_tui.ui.screens.form_screen import FormScreen


class SweepFormScreen(FormScreen[SweepForm, SweepPlan]):
    """Asks for the sweep; dismisses with a `sweep.SweepPlan`, or None when cancelled."""

    BINDINGS = [Binding("escape", "close", "Cancel", id="sweep-form-close")]
    PREFIX = "sweep"
    heading = "Sweep one flag: push, restart and benchmark each value"
    start_label, first_field = "Start sweep", "values"
    ERRORS = (FormError,)
    DEFAULT_CSS = "SweepFormScreen #sweep-form-hint { color: $text-muted; margin-top: 1; }"

    def __init__(self, profile: BenchProfile, *, flag: str = "speculative-num-steps", values: str = "1..4",
                 repeats: int = 3, configured: Sequence[str] = (), active: str = "",
                 last: SweepForm | None = None) -> None:
        super().__init__()
        self.profile = profile
        self.configured, self.active = tuple(configured), active
        # `last`: what the form held when it was last left (started or cancelled), shown again as it was typed
        self.initial = last or SweepForm(flag, values, str(repeats), "c1", active)

    def fields_compose(self) -> ComposeResult:
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

    def notes_compose(self) -> ComposeResult:
        if len(self.configured) > 1:
            yield Static(f"Several hosts (of {', '.join(self.configured)}) share the values and run at once; "
                         "their units must match but for the flag.", id="sweep-form-hint", markup=False)

    def absent(self, name: str) -> str:
        if name == "hosts":  # one host configured: the active one
            return self.active
        return super().absent(name)

    def form(self) -> SweepForm:
        return SweepForm(**self.field_values(SweepForm))

    def result(self, form: SweepForm) -> SweepPlan:
        return plan_from_form(form, self.profile, configured=self.configured, active=self.active)
