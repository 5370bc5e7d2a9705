"""The Tune form's fields in words → a plan and the hosts to tune on (the panel's Tune screen), refused in words."""

from __future__ import annotations

from collections.abc import Sequence

from specdec_tui.core.tune_objective import parse_slo
from specdec_tui.loop.tune import TunePlan


def form_hosts(text: str, configured: Sequence[str], active: str) -> tuple[str, ...]:
    """The hosts field → the hosts to tune on, the panel's own first (`loop.sweep_form.hosts_from_form`'s rules:
    names from the config, the active host included); ValueError in words."""
    from specdec_tui.loop.sweep_form import FormError, hosts_from_form

    try:
        return hosts_from_form(text, configured, active)
    except FormError as err:
        raise ValueError(str(err)) from None


def parse_form(space: str, slo: str, budget: str, levels: Sequence[int]) -> TunePlan:
    """The form's three fields → a plan; ValueError (SloError) or SpaceError in words. Space terms are separated
    by `;` or spaces, SLO terms by `,` or spaces."""
    from specdec_tui.loop.tune_space import parse_space

    if not budget.strip().isdigit() or int(budget) < 1:
        raise ValueError(f"budget: a whole number of launches, at least 1 (not {budget!r})")
    terms = [t for t in slo.replace(",", " ").split() if t]
    return TunePlan(parse_space([t for t in space.replace(";", " ").split() if t]), tuple(levels), parse_slo(terms),
                    budget=int(budget))
