"""The load form: which workload, which seed, closed loop or open-loop arrivals at a rate, the SLO for goodput.
Dismisses with the profile the next benchmark runs with (`loop.bench_form.profile_from_form`), or None."""

from __future__ import annotations

import dataclasses

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from specdec_tui.core.config import BenchProfile
from specdec_tui.loop.bench_form import ARRIVAL_CHOICES, WORKLOAD_CHOICES, BenchLoadForm, FormError, profile_from_form


class BenchFormScreen(ModalScreen[BenchProfile | None]):
    """Asks for the benchmark's load; dismisses with the profile to run, or None when cancelled."""

    BINDINGS = [Binding("escape", "close", "Cancel", id="bench-form-close")]
    DEFAULT_CSS = """
    BenchFormScreen { align: center middle; }
    BenchFormScreen > Vertical { width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $accent;
                                 background: $surface; padding: 0 1; }
    BenchFormScreen Grid { grid-size: 2; grid-columns: 16 1fr; grid-rows: 1; grid-gutter: 1 1; height: auto;
                           margin-top: 1; }
    BenchFormScreen #bench-form-error { color: $text-error; height: auto; margin-top: 1; }
    BenchFormScreen > Vertical > Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    BenchFormScreen Button { margin-left: 2; }
    """

    def __init__(self, profile: BenchProfile, *, purpose: str = "benchmark") -> None:
        super().__init__()
        self.profile = profile
        self.purpose = purpose  # "rate search": the same load, the SLO required, the rate the first probe's
        self.initial = BenchLoadForm.of(profile)

    def compose(self) -> ComposeResult:
        shipped = [value for _, value in WORKLOAD_CHOICES]
        choices = list(WORKLOAD_CHOICES) + ([] if self.initial.workload in shipped else [(self.initial.workload, self.initial.workload)])
        with Vertical():
            yield Static("Benchmark load: what is sent, how it arrives, what counts as good" if self.purpose == "benchmark"
                         else "Rate search: the load of each probe, the SLO it must meet, the first probe's rate "
                         "(empty: 8 req/s)", id="bench-form-title")
            with Grid():
                yield Label("Workload")
                yield Select(choices, value=self.initial.workload, allow_blank=False, id="bench-workload", compact=True)
                yield Label("Seed")
                yield Input(self.initial.seed, id="bench-seed", type="integer", compact=True)
                yield Label("Arrivals")
                yield Select(list(ARRIVAL_CHOICES), value=self.initial.arrivals, allow_blank=False, id="bench-arrivals",
                             compact=True)
                yield Label("Rate (req/s)")
                yield Input(self.initial.rate, placeholder="open loop only, e.g. 12.5", id="bench-rate", compact=True)
                yield Label("Requests")
                yield Input(self.initial.requests, placeholder="per level", id="bench-requests", compact=True)
                yield Label("SLO")
                yield Input(self.initial.slo, placeholder="ttft_p99=2s, itl_p99=50ms", id="bench-slo", compact=True)
            yield Static("", id="bench-form-error", markup=False)
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel", compact=True)
                yield Button("Benchmark" if self.purpose == "benchmark" else "Find max rate", id="start",
                             variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#bench-rate" if self.purpose == "benchmark" else "#bench-slo", Input).focus()

    def form(self) -> BenchLoadForm:
        return BenchLoadForm(
            workload=str(self.query_one("#bench-workload", Select).value),
            seed=self.query_one("#bench-seed", Input).value,
            arrivals=str(self.query_one("#bench-arrivals", Select).value),
            rate=self.query_one("#bench-rate", Input).value,
            requests=self.query_one("#bench-requests", Input).value,
            slo=self.query_one("#bench-slo", Input).value,
        )

    def submit(self) -> None:
        form = self.form()
        if self.purpose != "benchmark" and form.arrivals == "closed" and form.rate.strip():  # every probe is open loop
            form = dataclasses.replace(form, arrivals="poisson")
        try:
            profile = profile_from_form(form, self.profile)
        except FormError as err:
            self.query_one("#bench-form-error", Static).update(str(err))
            return
        self.dismiss(profile)

    @on(Input.Submitted)
    def _submitted(self, _: Input.Submitted) -> None:
        self.submit()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.submit()
        else:
            self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
