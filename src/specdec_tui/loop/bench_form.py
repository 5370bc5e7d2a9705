"""The panel's load form (issue 33): workload, seed, open-loop rate and arrivals, SLO — as text fields turned into
the profile the next benchmark runs with, or a FormError in words. The same rules as the config file's keys."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.config_values import RULES

WORKLOAD_CHOICES = (("prompt set (profile)", ""), ("chat", "chat"), ("code", "code"),
                    ("long-context", "long-context"), ("trap (inflated)", "trap"))
ARRIVAL_CHOICES = (("closed loop (concurrency)", "closed"), ("Poisson at the rate", "poisson"),
                   ("constant at the rate", "constant"))


class FormError(Exception):
    """A field the form cannot use, in words."""


@dataclass(frozen=True, slots=True)
class BenchLoadForm:
    workload: str = ""  # a shipped name or a path; "" keeps the profile's prompt set
    seed: str = "0"
    arrivals: str = "closed"  # closed | poisson | constant
    rate: str = ""
    requests: str = ""
    slo: str = ""  # "ttft_p99=2s, itl_p99=50ms"

    @classmethod
    def of(cls, p: BenchProfile) -> BenchLoadForm:
        return cls(p.workload, str(p.seed), p.arrivals if p.rate is not None else "closed",
                   f"{p.rate:g}" if p.rate is not None else "", str(p.requests or ""), ", ".join(p.slo))


def profile_from_form(form: BenchLoadForm, base: BenchProfile) -> BenchProfile:
    """`base` with the form's load; FormError naming the field otherwise."""
    try:
        seed = int(form.seed.strip() or "0")
    except ValueError:
        raise FormError(f"Seed: a whole number, not {form.seed!r}") from None
    rate: float | None = None
    if form.arrivals != "closed":
        try:
            rate = float(form.rate)
        except ValueError:
            raise FormError(f"Rate: requests per second, e.g. 12.5 (got {form.rate!r})") from None
        if problem := RULES["rate"](rate):
            raise FormError(f"Rate: {problem}")
    changes: dict[str, object] = {"workload": form.workload.strip(), "seed": seed, "rate": rate,
                                  "slo": tuple(s.strip() for s in form.slo.split(",") if s.strip())}
    if form.arrivals in ("poisson", "constant"):
        changes["arrivals"] = form.arrivals
    if form.requests.strip():
        try:
            n = int(form.requests)
        except ValueError:
            raise FormError(f"Requests: a whole number, not {form.requests!r}") from None
        if n < 1:
            raise FormError("Requests: at least 1")
        changes["requests"], changes["duration_s"] = n, None
    if problem := RULES["slo"](changes["slo"]):
        raise FormError(f"SLO: {problem}")
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]
