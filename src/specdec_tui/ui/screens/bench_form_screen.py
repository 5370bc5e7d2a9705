"""The load form: which workload, which seed, closed loop or open-loop arrivals at a rate, the SLO for goodput.
Dismisses with the profile the next benchmark runs with (`loop.bench_form.profile_from_form`), or None. The rate
search asks with the same form (`purpose="rate search"`): the SLO required, the rate its first probe's."""

from __future__ import annotations

import dataclasses

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Label, Select

from specdec_tui.core.config import BenchProfile
from specdec_tui.loop.bench_form import ARRIVAL_CHOICES, WORKLOAD_CHOICES, BenchLoadForm, FormError, profile_from_form
from specdec_tui.ui.screens.form_screen import FormScreen


class BenchFormScreen(FormScreen[BenchLoadForm, BenchProfile]):
    """Asks for the benchmark's load; dismisses with the profile to run, or None when cancelled."""

    BINDINGS = [Binding("escape", "close", "Cancel", id="bench-form-close")]
    PREFIX = "bench"
    ERRORS = (FormError,)

    def __init__(self, profile: BenchProfile, *, purpose: str = "benchmark") -> None:
        super().__init__()
        self.profile = profile
        self.purpose = purpose  # "rate search": the same load, the SLO required, the rate the first probe's
        self.initial = BenchLoadForm.of(profile)
        if purpose == "benchmark":
            self.heading = "Benchmark load: what is sent, how it arrives, what counts as good"
            self.start_label, self.first_field = "Benchmark", "rate"
        else:
            self.heading = ("Rate search: the load of each probe, the SLO it must meet, the first probe's rate "
                            "(empty: 8 req/s)")
            self.start_label, self.first_field = "Find max rate", "slo"

    def fields_compose(self) -> ComposeResult:
        shipped = [value for _, value in WORKLOAD_CHOICES]
        choices = list(WORKLOAD_CHOICES) + ([] if self.initial.workload in shipped else [(self.initial.workload, self.initial.workload)])
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

    def form(self) -> BenchLoadForm:
        return BenchLoadForm(**self.field_values(BenchLoadForm))

    def result(self, form: BenchLoadForm) -> BenchProfile:
        if self.purpose != "benchmark" and form.arrivals == "closed" and form.rate.strip():  # every probe is open loop
            form = dataclasses.replace(form, arrivals="poisson")
        return profile_from_form(form, self.profile)
