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
    # 0.5.23 declares no --tp/--dp: argparse's prefix matching takes them for --tp-size/--dp-size
    assert spec_for("--tp") is spec_for("tp-size") is spec_for("tensor-parallel-size") is FLAGS["tp-size"]
    assert canonical_name("--dp") == "dp-size"
    assert canonical_name("--cuda-graph-max-bs") == "cuda-graph-max-bs"  # ambiguous: no one flag
    assert canonical_name("speculative-draft-model") == "speculative-draft-model-path"
    assert spec_for("no-such-flag") is None


def test_table_has_the_speculative_flags_with_sglangs_choices() -> None:
    algorithm = FLAGS["speculative-algorithm"]
    assert {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"} <= set(algorithm.choices)
    assert FLAGS["speculative-attention-mode"].choices == ("prefill", "decode")
    assert FLAGS["disable-cuda-graph"].is_switch and FLAGS["enable-metrics"].is_switch
    # every option of the release is known; the panel groups some of them, the rest are "other"
    assert {s.group for s in FLAGS.values()} == {"speculative", "capacity", "server", "other"}
    assert len(FLAGS) > 500
    assert [s.name for s in groups()["speculative"]][0] == "speculative-algorithm"


def test_the_seed_unit_is_clean() -> None:
    assert validate(UnitFile.parse(SEED).flags()) == []


def test_unknown_flags_are_refused_as_sglang_refuses_them() -> None:
    # the schema is the release's whole parser: a flag it does not have stops SGLang (argparse, exit 2)
    issue = only(validate({**BASE, "enable-foo": "1"}), "enable-foo")
    assert issue.level == "error" and "unrecognized arguments: --enable-foo 1" in issue.message
    assert issue.remove == ("enable-foo",)


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("speculative-num-steps", "three", "argument --speculative-num-steps: invalid int value: 'three'"),
        ("mem-fraction-static", "half", "argument --mem-fraction-static: invalid float value: 'half'"),
        ("speculative-attention-mode", "fast",
         "argument --speculative-attention-mode: invalid choice: 'fast' (choose from 'prefill', 'decode')"),
        ("cuda-graph-bs-decode", "1 2 x", "argument --cuda-graph-bs-decode: invalid int value: 'x'"),
        ("model-path", None, "argument --model-path/--model: expected one argument"),
    ],
)
def test_type_and_range_errors(flag: str, value: str | None, words: str) -> None:
    [issue] = [i for i in validate({**BASE, flag: value}) if i.flag == flag and i.level == "error"]
    assert issue.message == f"SGLang 0.5.23 refuses the command line (exit 2): {words}"


@pytest.mark.parametrize(("flag", "value"), [
    ("speculative-num-steps", "0"), ("mem-fraction-static", "1.0"), ("port", "70000"), ("chunked-prefill-size", "0")])
def test_values_0_5_23_takes_are_not_refused(flag: str, value: str) -> None:
    # the hand table refused these ranges; 0.5.23's parser takes them and no start-up hook checks them
    assert [i for i in validate({**BASE, flag: value}) if i.flag == flag and i.level == "error"] == []


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


def test_a_lowercase_algorithm_is_what_0_5_23_takes() -> None:
    # 0.5.23's parser takes any string and upper-cases it; the old "older releases refuse it" note is gone
    assert validate({**BASE, "speculative-algorithm": "nextn"}) == []


def test_the_same_flag_under_two_names() -> None:
    issue = only(validate({**BASE, "tp": "4", "tp-size": "2"}), "tp-size")
    assert "--tp and --tp-size set the same thing" in issue.message and issue.remove == ("tp",)


def test_capacity_rules() -> None:
    high = only(validate({**BASE, "mem-fraction-static": "0.97"}), "mem-fraction-static")
    assert high.level == "warning"
    [graphs] = [i for i in validate({**BASE, "disable-cuda-graph": None, "cuda-graph-max-bs-decode": "32"})
                if "batch sizes do nothing" in i.message]
    assert graphs.flag == "cuda-graph-max-bs-decode" and graphs.remove == ("cuda-graph-max-bs-decode",)
    required = only(validate({"port": "30000"}), "model-path")
    assert required.level == "error"
    assert required.message.endswith("the following arguments are required: --model-path/--model")


def test_a_refused_value_is_not_the_ground_of_another_flags_fix() -> None:
    """Issue 35 (4): a rule (and its fix) built on a value SGLang never runs with: `f` "fixed" the draft tokens
    while the steps error stayed. (0.5.23's parser takes steps 0, so the refused value here is a word.)"""
    from specdec_tui.core.flags import listed

    flags = {"model-path": "m", "speculative-algorithm": "NEXTN", "speculative-num-steps": "zero",
             "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "2"}
    issues = validate(flags)
    assert [(i.flag, i.level) for i in issues] == [("speculative-num-steps", "error")]
    assert not any(i.fixable for i in issues)
    assert f"refused: {listed(issues)}. Fix" == ("refused: SGLang 0.5.23 refuses the command line (exit 2): argument "
                                               "--speculative-num-steps: invalid int value: 'zero'. Fix")


def test_the_forms_rows_are_options_of_the_release_with_its_help() -> None:
    from specdec_tui.core.sglang_schema.schema import default_schema
    from specdec_tui.ui.widgets.flag_form import FORM_FLAGS, algorithm_choices, flag_help

    schema = default_schema()
    for name in FORM_FLAGS:
        option = schema.option(name)
        assert option is not None, name
        assert flag_help(name) == option.help
    # --speculative-algorithm is a free string in 0.5.23's parser: the dropdown offers the builtins its help names
    assert algorithm_choices() == ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")
    assert all(a in (schema.option("speculative-algorithm").help or "") for a in algorithm_choices())  # type: ignore[union-attr]


def test_the_bundled_release_read_option_by_option_gives_what_it_gave_read_whole() -> None:
    """The bundled schema builds an option when it is first looked up (the form's start, issue 34): every option,
    spelling, prefix and FlagSpec is what the schema read whole gives, by name or as the whole table."""
    from dataclasses import astuple
    from importlib import resources

    from specdec_tui.core.flag_table import FLAGS, release_flags, spec_for
    from specdec_tui.core.sglang_schema.schema import default_schema, parse_schema

    text = resources.files("specdec_tui.core.sglang_schema").joinpath("schemas", "0.5.23.json").read_text("utf-8")
    whole, lazy = parse_schema(text), parse_schema(text, lazy=True)
    for name in ("tp", "tp-size", "speculative-eagle", "cuda-graph-bs", "speculative-num-steps", "nonesuch"):
        found, candidates = whole.resolve(name)
        got, got_candidates = lazy.resolve(name)
        assert (None if found is None else astuple(found)) == (None if got is None else astuple(got)), name
        assert candidates == got_candidates, name
        assert spec_for(name, whole) == spec_for(name, lazy), name
    assert [astuple(o) for o in whole.options] == [astuple(o) for o in lazy.options]
    assert list(whole.by_string) == list(lazy.by_string)
    assert release_flags(whole) == release_flags(lazy) == dict(FLAGS)
    assert all(FLAGS[name] is release_flags(default_schema())[name] for name in ("speculative-num-steps", "port"))
    for key in ("tp", "--tp-size", "nonesuch"):  # an alias or a dashed name is no key of the table
        assert key not in FLAGS
