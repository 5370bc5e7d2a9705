"""The Health pane says the algorithm the operator configured: SGLang resolves NEXTN to EAGLE (0.5.23
`arg_groups/speculative_hook.py`, `_resolve_speculative_algorithm`) and reports EAGLE in /server_info, so the pane
showed "EAGLE" for the demo's NEXTN unit. It now reads "NEXTN (SGLang runs it as EAGLE)", and a unit that says
EAGLE reads just EAGLE (Pilot, the real demo host and simulator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.results import ServerFacts, algorithm_words
from specdec_tui.core.unit import UnitFile

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for

pytestmark = pytest.mark.timeout(240)


async def test_health_pane_names_the_units_nextn_with_sglangs_eagle_beside_it(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        pane = app.screen.query_one("#health-pane")
        assert app.trial_loop.facts is not None
        assert app.trial_loop.facts.speculative["algorithm"] == "EAGLE"  # what the server itself says
        await wait_for(pilot, lambda: "NEXTN (SGLang runs it as EAGLE) steps=1" in pane.section_text("facts"),
                       "the pane to name the unit's NEXTN")
        good = app.config_pane.running_text
        assert app.link is not None and good and "NEXTN" in good
        app.link.push(UnitFile.parse(good).set_flags({"speculative-algorithm": "EAGLE"}).text)
        await wait_for(pilot, lambda: "speculative           EAGLE steps=1" in pane.section_text("facts"),
                       "the EAGLE unit's words after the restart", steps=2400)
        assert "SGLang runs it" not in pane.section_text("facts")
        await wait_for(pilot, lambda: app.session.trials and app.session.trials[-1].facts is not None, "the trial")
        trial = app.session.trials[-1]  # the pushed trial keeps what the unit said beside the server's facts
        assert trial.facts is not None and trial.facts.configured_algorithm == "EAGLE"


def test_algorithm_words_and_a_saved_trials_facts_keep_the_configured_name() -> None:
    assert algorithm_words("EAGLE", "nextn") == "NEXTN (SGLang runs it as EAGLE)"
    assert algorithm_words("FROZEN_KV_MTP", "NEXTN") == "NEXTN (SGLang runs it as FROZEN_KV_MTP)"
    assert algorithm_words("EAGLE", "eagle") == "EAGLE"
    assert algorithm_words("EAGLE", "") == "EAGLE"  # a unit not read: the server's word stands
    assert algorithm_words("EAGLE", "\x1b[31mX") == "EAGLE"  # the unit's text is outside text: only a plain name
    facts = ServerFacts(speculative={"algorithm": "EAGLE", "num_steps": 3}, configured_algorithm="NEXTN")
    again = ServerFacts.from_dict(facts.to_dict())
    assert again.speculative_words == "NEXTN (SGLang runs it as EAGLE) steps=3"
    assert ServerFacts.from_dict({"speculative": {"algorithm": "EAGLE"}}).speculative_words == "EAGLE"  # older file
