"""Values no server can run with, which SGLang 0.5.23's parser takes (`--speculative-num-steps -1`,
`--mem-fraction-static 8`): the panel refuses them as errors, so no push, sweep or tune launches one (a tune's
`--space speculative-num-steps=-1,3` launched steps -1)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from textual.widgets import Input

from specdec_tui.core.flags import validate
from specdec_tui.hosts.local.workspace import demo_unit_text
from specdec_tui.loop.tune_space import SpaceError, candidates
from specdec_tui.ui.widgets.flag_form import widget_id
from specdec_tui.ui.widgets.unit_editor import UnitEditor

from .ui_helpers import offline_app, started

BASE = {"model-path": "m", "speculative-algorithm": "NEXTN", "speculative-num-steps": "3",
        "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "4"}
COUNTED = ("speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens", "max-running-requests",
           "cuda-graph-max-bs-decode")


def errors(**values: str) -> list[str]:
    flags = {**BASE, **{name.replace("_", "-"): value for name, value in values.items()}}
    return [f"{i.flag}: {i.message}" for i in validate(flags) if i.level == "error"]


@pytest.mark.parametrize("flag", COUNTED)
def test_a_count_below_zero_is_an_error_that_says_why(flag: str) -> None:
    said = errors(**{flag: "-1"})
    assert len(said) == 1 and said[0].startswith(f"{flag}: --{flag} -1: a count of "), said
    assert "cannot be below 0" in said[0] and "SGLang 0.5.23 takes it without a check" in said[0]


def test_counts_of_zero_and_more_and_words_the_parser_refuses_are_not_this_rule_s() -> None:
    assert not errors(max_running_requests="0", cuda_graph_max_bs_decode="0")
    assert not errors(max_running_requests="64", cuda_graph_max_bs_decode="32")
    said = errors(max_running_requests="many")
    assert len(said) == 1 and "invalid int value: 'many'" in said[0], said  # the parser's words, once


@pytest.mark.parametrize("fraction", ["0", "-0.5", "1.5", "8", "nan", "inf"])
def test_a_memory_fraction_outside_zero_to_one_is_an_error(fraction: str) -> None:
    said = errors(mem_fraction_static=fraction)
    assert len(said) == 1 and "is not a share of the GPU's memory" in said[0], said


@pytest.mark.parametrize("fraction", ["0.01", "0.85", "1"])
def test_a_memory_fraction_inside_is_no_error(fraction: str) -> None:
    assert not errors(mem_fraction_static=fraction)


def test_a_tune_space_never_holds_a_count_below_zero() -> None:
    found, refused = candidates(demo_unit_text(30000), {"speculative-num-steps": ("-1", "3")})
    assert [c.label for c in found] == ["steps=3"]
    assert len(refused) == 1 and "a count of draft steps cannot be below 0" in refused[0].reason
    with pytest.raises(SpaceError, match="no combination of the space can be launched: .*cannot be below 0"):
        candidates(demo_unit_text(30000), {"max-running-requests": ("-4",)})


def test_tune_with_only_a_negative_value_launches_nothing_and_says_why() -> None:
    tune = subprocess.run([sys.executable, "-m", "specdec_tui", "tune", "--host", "demo", "--space",
                           "speculative-num-steps=-1", "--slo", "ttft_p99=2s", "--concurrency", "1"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert tune.returncode != 0 and "a count of draft steps cannot be below 0" in tune.stderr, tune.stderr
    assert "Traceback" not in tune.stderr and "· restart" not in tune.stderr


async def test_the_form_shows_a_negative_steps_value_as_an_error_where_it_is_typed() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        field = app.screen.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input)
        field.focus()
        await pilot.press("end", "backspace", "minus", "1")
        await pilot.pause()
        assert "--speculative-num-steps -1" in app.screen.query_one(UnitEditor).text
        inline = app.screen.query_one(f"#{widget_id('issue', 'speculative-num-steps')}")
        assert inline.has_class("-shown") and inline.has_class("-error")
        assert "a count of draft steps cannot be below 0" in str(inline.render())
        assert app.config_pane.errors
