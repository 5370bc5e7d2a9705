"""The SGLang flag table and the startup rules, as a user reads them in `unit check` and the editor."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.flags import (
    FLAGS,
    Issue,
    apply_fix,
    canonical_name,
    groups,
    spec_for,
    validate,
)
from specdec_tui.core.unit import UnitFile

SEED = (Path(__file__).parent / "data" / "units" / "sglang-qwen.service").read_text()
BASE = {"model-path": "Qwen/Qwen3.5-122B-A10B"}


def spec_run(**flags: str | None) -> dict[str, str | None]:
    named = {k.replace("_", "-"): v for k, v in flags.items()}
    return {**BASE, "speculative-algorithm": "EAGLE3", "speculative-draft-model-path": "d", **named}


def only(issues: list[Issue], flag: str) -> Issue:
    [issue] = [i for i in issues if i.flag == flag]
    return issue


def test_aliases_resolve_to_one_spec() -> None:
    assert spec_for("--tp") is spec_for("tp-size") is spec_for("tensor-parallel-size") is FLAGS["tp-size"]
    assert canonical_name("--dp") == "dp-size"
    assert canonical_name("speculative-draft-model") == "speculative-draft-model-path"
    assert spec_for("no-such-flag") is None


def test_table_has_the_speculative_flags_with_sglangs_choices() -> None:
    algorithm = FLAGS["speculative-algorithm"]
    assert {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"} <= set(algorithm.choices)
    assert FLAGS["speculative-attention-mode"].choices == ("prefill", "decode")
    assert FLAGS["disable-cuda-graph"].is_switch and FLAGS["enable-metrics"].is_switch
    assert {s.group for s in FLAGS.values()} == {"speculative", "capacity", "server"}
    assert [s.name for s in groups()["speculative"]][0] == "speculative-algorithm"


def test_the_seed_unit_is_clean() -> None:
    assert validate(UnitFile.parse(SEED).flags()) == []


def test_unknown_flags_are_kept_and_warned_about() -> None:
    issue = only(validate({**BASE, "enable-foo": "1"}), "enable-foo")
    assert issue.level == "warning" and "not in this tool's SGLang flag table" in issue.message


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("speculative-num-steps", "three", "needs a whole number"),
        ("speculative-num-steps", "0", "out of range"),
        ("mem-fraction-static", "1.0", "must be > 0 and < 1"),
        ("mem-fraction-static", "0", "out of range"),
        ("port", "70000", "out of range"),
        ("chunked-prefill-size", "0", "(or -1)"),
        ("speculative-attention-mode", "fast", "one of prefill, decode"),
        ("cuda-graph-bs", "1 2 x", "whole numbers"),
        ("model-path", None, "needs a value"),
    ],
)
def test_type_and_range_errors(flag: str, value: str | None, words: str) -> None:
    [issue] = [i for i in validate({**BASE, flag: value}) if i.flag == flag and i.level == "error"]
    assert words in issue.message


def test_minus_one_disables_chunked_prefill() -> None:
    assert validate({**BASE, "chunked-prefill-size": "-1"}) == []


def test_a_switch_given_a_value_is_an_error_with_a_fix() -> None:
    issue = only(validate({**BASE, "enable-metrics": "true"}), "enable-metrics")
    assert issue.level == "error" and issue.fix == {"enable-metrics": None}


def test_speculative_flags_without_an_algorithm_do_nothing() -> None:
    issues = validate({**BASE, "speculative-num-steps": "3", "speculative-eagle-topk": "1"})
    [issue] = issues
    assert issue.level == "warning" and "do nothing without --speculative-algorithm" in issue.message
    assert issue.remove == ("speculative-num-steps", "speculative-eagle-topk")


def test_topk_one_needs_steps_plus_one_draft_tokens_as_sglang_adjusts_it() -> None:
    issue = only(validate({**BASE, "speculative-algorithm": "NEXTN", "speculative-num-steps": "4",
                           "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "4"}),
                 "speculative-num-draft-tokens")
    assert issue.fix == {"speculative-num-draft-tokens": "5"}
    assert "overrides --speculative-num-draft-tokens 4 with 5" in issue.message


def test_fixing_the_draft_tokens_in_the_seed_unit_after_raising_steps() -> None:
    unit = UnitFile.parse(SEED).set_flag("speculative-num-steps", "4")
    [issue] = validate(unit.flags())
    fixed = apply_fix(unit, issue)
    assert fixed.get_flag("speculative-num-draft-tokens") == "5"
    assert validate(fixed.flags()) == []
    assert fixed.text == SEED.replace("steps 3", "steps 4").replace("draft-tokens 4", "draft-tokens 5")


def test_draft_tokens_beyond_the_tree_are_impossible() -> None:
    issue = only(validate(spec_run(speculative_num_steps="2", speculative_eagle_topk="2",
                                   speculative_num_draft_tokens="8")), "speculative-num-draft-tokens")
    assert issue.level == "error" and "at most 7" in issue.message and issue.fix == {"speculative-num-draft-tokens": "7"}
    assert validate(spec_run(speculative_num_steps="2", speculative_eagle_topk="2", speculative_num_draft_tokens="7")) == []


def test_topk_without_steps_makes_sglang_refuse_to_start() -> None:
    issue = only(validate(spec_run(speculative_eagle_topk="4")), "speculative-eagle-topk")
    assert issue.level == "error" and issue.remove == ("speculative-eagle-topk",)


def test_steps_without_topk_gets_a_chain_fix() -> None:
    issue = only(validate(spec_run(speculative_num_steps="3")), "speculative-eagle-topk")
    assert issue.level == "error"
    assert issue.fix == {"speculative-eagle-topk": "1", "speculative-num-draft-tokens": "4"}


def test_draft_model_rules_follow_the_algorithm() -> None:
    assert only(validate({**BASE, "speculative-algorithm": "EAGLE3"}), "speculative-draft-model-path").level == "error"
    eagle = only(validate({**BASE, "speculative-algorithm": "EAGLE"}), "speculative-draft-model-path")
    assert eagle.level == "warning" and eagle.fix == {"speculative-algorithm": "NEXTN"}
    assert validate({**BASE, "speculative-algorithm": "NEXTN"}) == []


def test_ngram_ignores_a_draft_model() -> None:
    issue = only(validate({**BASE, "speculative-algorithm": "NGRAM", "speculative-draft-model-path": "x"}),
                 "speculative-draft-model-path")
    assert issue.level == "warning" and issue.remove == ("speculative-draft-model-path",)


def test_lowercase_algorithm_gets_a_spelling_fix() -> None:
    issue = only(validate({**BASE, "speculative-algorithm": "nextn"}), "speculative-algorithm")
    assert issue.level == "warning" and issue.fix == {"speculative-algorithm": "NEXTN"}


def test_the_same_flag_under_two_names() -> None:
    issue = only(validate({**BASE, "tp": "4", "tp-size": "2"}), "tp-size")
    assert "--tp and --tp-size set the same thing" in issue.message and issue.remove == ("tp",)


def test_capacity_rules() -> None:
    high = only(validate({**BASE, "mem-fraction-static": "0.97"}), "mem-fraction-static")
    assert high.level == "warning"
    [graphs] = [i for i in validate({**BASE, "disable-cuda-graph": None, "cuda-graph-max-bs": "32"})
                if "batch sizes do nothing" in i.message]
    assert graphs.flag == "cuda-graph-max-bs" and graphs.remove == ("cuda-graph-max-bs",)
    assert only(validate({"port": "30000"}), "model-path").level == "error"


def test_a_value_out_of_range_is_not_the_ground_of_another_flags_fix() -> None:
    """Issue 35 (4): steps 0 with topk 1 offered "--speculative-num-draft-tokens 1" (a chain of 0 tokens), so `f`
    applied that while the steps error stayed; and "must be >= 1." ended the push refusal with "..\"."""
    from specdec_tui.core.flags import listed

    flags = {"model-path": "m", "speculative-algorithm": "NEXTN", "speculative-num-steps": "0",
             "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "2"}
    issues = validate(flags)
    assert [(i.flag, i.level) for i in issues] == [("speculative-num-steps", "error")]
    assert not any(i.fixable for i in issues)
    assert f"refused: {listed(issues)}. Fix" == ("refused: --speculative-num-steps 0 is out of range: it must be "
                                               ">= 1. Fix")
