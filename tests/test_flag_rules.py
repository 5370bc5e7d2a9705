"""The validator judges a unit as SGLang 0.5.23 (the bundled schema, its parser's own words) and its start-up
checks: per-phase CUDA graphs, deprecated flags and their rewrite, open algorithm names, DFLASH/DSPARK/NGRAM,
adaptive, page size and attention backend, rejection sampling and block verification.

Expected words are upstream's where upstream states them (0.5.23, read in /work/sglang-src):
# upstream: srt/arg_groups/speculative_hook.py (checks and their messages)
# upstream: the release's parser: ServerArgs.add_cli_args (flag names, types, choices, deprecations)
# upstream: srt/model_executor/cuda_graph_config.py (--cuda-graph-config JSON and its errors, tc_piecewise removed)
Tests that held the hand table's drift (tc_piecewise as a choice, --cuda-graph-max-bs as a working alias,
--speculative-skip-dp-mlp-sync, the window warning for NEXTN, rejection sampling refused with deterministic
inference on CUDA) now hold what 0.5.23 does, each with its reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.flags import FLAGS, Issue, apply_fix, validate
from specdec_tui.core.unit import UnitFile

SEED = (Path(__file__).parent / "data" / "units" / "sglang-qwen.service").read_text()
BASE = {"model-path": "Qwen/Qwen3.5-122B-A10B"}
NEXTN = {**BASE, "speculative-algorithm": "NEXTN", "speculative-num-steps": "3", "speculative-eagle-topk": "1",
         "speculative-num-draft-tokens": "4"}
TREE = {**BASE, "speculative-algorithm": "EAGLE3", "speculative-draft-model-path": "d", "speculative-num-steps": "3",
        "speculative-eagle-topk": "4", "speculative-num-draft-tokens": "8"}


def on(issues: list[Issue], flag: str) -> Issue:
    [issue] = [i for i in issues if i.flag == flag]
    return issue


# --- the table


@pytest.mark.parametrize("name, type_", [
    ("cuda-graph-config", "json"), ("cuda-graph-backend-decode", "choice"), ("cuda-graph-backend-prefill", "choice"),
    ("cuda-graph-max-bs-decode", "int"), ("cuda-graph-max-bs-prefill", "int"), ("cuda-graph-bs-decode", "int_list"),
    ("cuda-graph-bs-prefill", "int_list"), ("disable-decode-cuda-graph", "bool"),
    ("speculative-moe-a2a-backend", "choice"),
    ("speculative-draft-kv-cache-dtype", "choice"), ("speculative-draft-window-size", "int"),
    ("speculative-use-rejection-sampling", "bool"), ("speculative-adaptive", "bool"),
    ("speculative-adaptive-config", "str"), ("speculative-dflash-block-size", "int"),
    ("speculative-dspark-block-size", "int"), ("speculative-ngram-max-bfs-breadth", "int"),
    ("speculative-ngram-match-type", "choice"), ("speculative-ngram-external-corpus-path", "str"),
    ("enable-multi-layer-eagle", "bool"), ("attn-dp-size", "int"),
    # 0.5.23 fixes the choices of these (they were free strings in the hand table)
    ("speculative-moe-runner-backend", "choice"), ("speculative-draft-model-quantization", "choice"),
    ("speculative-draft-load-format", "choice"),
])
def test_current_flags_are_in_the_table_with_upstreams_types(name: str, type_: str) -> None:
    assert FLAGS[name].type == type_


def test_flags_0_5_23_does_not_have_are_not_in_the_table() -> None:
    for gone in ("speculative-skip-dp-mlp-sync", "cuda-graph-tc-compiler", "cuda-graph-max-bs", "cuda-graph-bs",
                 "speculative-dflash-draft-window-size"):
        assert gone not in FLAGS


def test_choices_are_upstreams() -> None:
    # tc_piecewise was removed in 0.5.23 (cuda_graph_config.parse_cuda_graph_backend_arg)
    assert FLAGS["cuda-graph-backend-decode"].choices == ("full", "breakable", "disabled")
    assert FLAGS["speculative-draft-kv-cache-dtype"].choices == ("auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16")
    assert FLAGS["speculative-ngram-match-type"].choices == ("BFS", "PROB")
    assert FLAGS["speculative-ngram-max-bfs-breadth"].default == 10


def test_the_newer_flags_are_checked_not_reported_unknown() -> None:
    clean = {**NEXTN, "speculative-draft-kv-cache-dtype": "fp8_e4m3", "enable-multi-layer-eagle": None,
             "cuda-graph-max-bs-decode": "64", "cuda-graph-bs-prefill": "1 2 4", "cuda-graph-backend-prefill":
             "breakable", "speculative-moe-runner-backend": "triton"}
    assert validate(clean) == []
    bad = on(validate({**NEXTN, "speculative-draft-kv-cache-dtype": "fp4"}), "speculative-draft-kv-cache-dtype")
    assert bad.level == "error" and bad.message.endswith("argument --speculative-draft-kv-cache-dtype: invalid "
                                                         "choice: 'fp4' (choose from 'auto', 'fp8_e5m2', 'fp8_e4m3', "
                                                         "'bf16', 'bfloat16')")


# --- deprecated cuda-graph aliases


def sglang_line(old: str, new: str) -> str:
    return f"'{old}' is deprecated and will be removed in a future release. Use '{new}' instead."


@pytest.mark.parametrize("old, value, words, fix", [
    # gone in 0.5.23: argparse's prefix matching finds two flags, so it stops (exit 2)
    ("cuda-graph-max-bs", "64", "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
     "--cuda-graph-max-bs-prefill", {"cuda-graph-max-bs-decode": "64"}),
    ("cuda-graph-bs", "1 2 4 8", "ambiguous option: --cuda-graph-bs could match --cuda-graph-bs-decode, "
     "--cuda-graph-bs-prefill", {"cuda-graph-bs-decode": "1 2 4 8"}),
])
def test_removed_graph_flags_are_refused_in_argparses_words_with_a_rewrite(old: str, value: str, words: str,
                                                                            fix: dict[str, str]) -> None:
    issue = on(validate({**NEXTN, old: value}), old)
    assert issue.level == "error" and words in issue.message and "exit 2" in issue.message
    assert issue.fix == fix and issue.remove == (old,)


def test_disable_cuda_graph_warns_in_sglangs_words_with_a_rewrite() -> None:
    issue = on(validate({**NEXTN, "disable-cuda-graph": None}), "disable-cuda-graph")
    assert issue.level == "warning"
    assert sglang_line("--disable-cuda-graph", "--cuda-graph-backend-{decode,prefill}=disabled") in issue.message
    assert issue.fix == {"cuda-graph-backend-decode": "disabled", "cuda-graph-backend-prefill": "disabled"}
    assert issue.remove == ("disable-cuda-graph",)


def test_enable_dp_attention_is_deprecated_and_rewritten_to_attn_dp_size() -> None:
    unit = UnitFile.parse(SEED).set_flags({"dp-size": "2", "enable-dp-attention": None})
    issue = on(validate(unit.flags()), "enable-dp-attention")
    assert issue.level == "warning"
    assert sglang_line("--enable-dp-attention", "--attn-dp-size <dp-size>") in issue.message
    fixed = apply_fix(unit, issue)
    assert "--attn-dp-size 2" in fixed.text and "--enable-dp-attention" not in fixed.text
    assert "--dp-size" not in fixed.text and validate(fixed.flags()) == []


def test_the_fix_rewrites_the_seed_unit_to_the_decode_flag_and_leaves_it_clean() -> None:
    unit = UnitFile.parse(SEED).set_flag("cuda-graph-max-bs-decode", "1").text.replace("--cuda-graph-max-bs-decode 1",
                                                                                         "--cuda-graph-max-bs 64")
    parsed = UnitFile.parse(unit)
    [issue] = validate(parsed.flags())
    fixed = apply_fix(parsed, issue)
    assert "--cuda-graph-max-bs-decode 64" in fixed.text and "--cuda-graph-max-bs 64" not in fixed.text
    assert validate(fixed.flags()) == []


def test_an_explicit_new_flag_is_kept_and_the_old_one_only_removed() -> None:
    issue = on(validate({**NEXTN, "disable-cuda-graph": None, "cuda-graph-backend-decode": "full"}),
               "disable-cuda-graph")
    assert issue.fix == {"cuda-graph-backend-prefill": "disabled"} and issue.remove == ("disable-cuda-graph",)
    assert "--cuda-graph-backend-decode is also set" in issue.message


def test_graph_sizes_do_nothing_when_the_decode_graph_is_off() -> None:
    issue = on(validate({**NEXTN, "cuda-graph-backend-decode": "disabled", "cuda-graph-max-bs-decode": "32"}),
               "cuda-graph-max-bs-decode")
    assert issue.remove == ("cuda-graph-max-bs-decode",)
    assert validate({**NEXTN, "cuda-graph-backend-prefill": "disabled", "cuda-graph-max-bs-decode": "32"}) == []


@pytest.mark.parametrize("raw, error", [
    ('{"verify": {}}', "--cuda-graph-config: unknown phase 'verify', expected one of ('decode', 'prefill')"),
    ('{"decode": {"size": 4}}',
     "--cuda-graph-config['decode']: unknown key 'size', expected one of ('backend', 'max_bs', 'bs')"),
    # 0.5.23: tc_compiler is "internal compatibility only; rejected by both configuration parsers"
    ('{"decode": {"tc_compiler": "eager"}}',
     "--cuda-graph-config['decode']: unknown key 'tc_compiler', expected one of ('backend', 'max_bs', 'bs')"),
    ('{"decode": {"backend": "tc_piecewise"}}', "tc_piecewise was removed; select breakable, full, or disabled"),
    ('[1]', "--cuda-graph-config must be a JSON object, got list"),
    ('{"decode": 4}', "--cuda-graph-config['decode'] must be a JSON object, got int"),
])
def test_cuda_graph_config_errors_are_sglangs(raw: str, error: str) -> None:
    issue = on(validate({**NEXTN, "cuda-graph-config": raw}), "cuda-graph-config")
    assert issue.level == "error" and issue.message.endswith(f"argument --cuda-graph-config: {error}")


def test_full_prefill_is_a_choice_of_0_5_23_with_its_warning() -> None:
    # cuda_graph_hook.py warns for it at start-up (experimental); it starts
    words = "cuda_graph_config[prefill].backend='full' is experimental. Use breakable for production workloads."
    flag = on(validate({**NEXTN, "cuda-graph-backend-prefill": "full"}), "cuda-graph-backend-prefill")
    assert flag.level == "warning" and flag.message.endswith(words)
    json_full = on(validate({**NEXTN, "cuda-graph-config": '{"prefill": {"backend": "full", "full_prefill_max_req": 8}}'}),
                   "cuda-graph-config")
    assert json_full.level == "warning" and json_full.message.endswith(words)
    assert validate({**NEXTN, "cuda-graph-backend-prefill": "breakable"}) == []
    removed = on(validate({**NEXTN, "cuda-graph-backend-prefill": "tc_piecewise"}), "cuda-graph-backend-prefill")
    assert removed.level == "error" and removed.message.endswith(
        "argument --cuda-graph-backend-prefill: tc_piecewise was removed; select breakable, full, or disabled")


# --- the algorithm name


@pytest.mark.parametrize("written", ["nextn", "eagle3", "Dflash"])
def test_the_name_is_accepted_in_any_case(written: str) -> None:
    # 0.5.23's parser takes any string and upper-cases it (the hand table's "older releases" note is gone)
    issues = validate({**BASE, "speculative-algorithm": written, "speculative-draft-model-path": "d"})
    assert [i for i in issues if i.flag == "speculative-algorithm"] == []


def test_lowercase_names_get_the_rules_of_their_algorithm() -> None:
    issue = on(validate({**NEXTN, "speculative-algorithm": "nextn", "speculative-num-steps": "4"}),
               "speculative-num-draft-tokens")
    assert issue.fix == {"speculative-num-draft-tokens": "5"}


def test_an_unknown_name_may_be_a_plugin() -> None:
    [issue] = validate({**BASE, "speculative-algorithm": "MEDUSA"})
    assert issue.level == "warning"
    assert "not built in to SGLang 0.5.23 (ok if a plugin registers it" in issue.message
    assert "'Unknown speculative algorithm name: MEDUSA'" in issue.message
    assert validate({**BASE, "speculative-algorithm": "FROZEN_KV_MTP"}) == []


# --- DFLASH / DSPARK


def test_dflash_and_dspark_run_steps_and_topk_one() -> None:
    dflash = validate({**BASE, "speculative-algorithm": "DFLASH", "speculative-draft-model-path": "d",
                       "speculative-num-steps": "3", "speculative-eagle-topk": "1"})
    steps = on(dflash, "speculative-num-steps")
    assert steps.level == "warning" and steps.fix == {"speculative-num-steps": "1"}
    assert "DFLASH only supports speculative_num_steps == 1; overriding speculative_num_steps=3 to 1" in steps.message
    dspark = on(validate({**BASE, "speculative-algorithm": "DSPARK", "speculative-draft-model-path": "d",
                          "speculative-eagle-topk": "4"}), "speculative-eagle-topk")
    assert "DSpark only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk=4 to 1" in dspark.message


def test_dflash_needs_a_draft_model_and_dspark_may_find_one_in_the_checkpoint() -> None:
    dflash = on(validate({**BASE, "speculative-algorithm": "DFLASH"}), "speculative-draft-model-path")
    assert dflash.level == "error"
    assert dflash.message == ("SGLang 0.5.23 stops at start-up: DFLASH speculative decoding requires setting "
                              "--speculative-draft-model-path.")
    dspark = on(validate({**BASE, "speculative-algorithm": "DSPARK"}), "speculative-draft-model-path")
    assert dspark.level == "warning" and "bundles a DSpark draft" in dspark.message


def test_block_sizes_fix_the_draft_tokens() -> None:
    dflash = on(validate({**BASE, "speculative-algorithm": "DFLASH", "speculative-draft-model-path": "d",
                          "speculative-dflash-block-size": "8", "speculative-num-draft-tokens": "4"}),
                "speculative-num-draft-tokens")
    assert dflash.message == ("SGLang 0.5.23 stops at start-up: Both --speculative-num-draft-tokens and "
                              "--speculative-dflash-block-size are set but they differ. For DFLASH they must match. "
                              "speculative_num_draft_tokens=4, "
                              "speculative_dflash_block_size=8.")
    dspark = on(validate({**BASE, "speculative-algorithm": "DSPARK", "speculative-draft-model-path": "d",
                          "speculative-dspark-block-size": "7", "speculative-num-draft-tokens": "7"}),
                "speculative-num-draft-tokens")
    assert dspark.fix == {"speculative-num-draft-tokens": "8"}
    assert "DSpark speculative_num_draft_tokens must equal gamma + 1 (= 8 for gamma=7)" in dspark.message


# --- NGRAM


def test_ngram_tree_on_pages_needs_flashinfer() -> None:
    ngram = {**BASE, "speculative-algorithm": "NGRAM", "page-size": "16"}
    unset = on(validate(ngram), "page-size")
    assert unset.level == "warning" and unset.fix == {"attention-backend": "flashinfer"}
    text = ("speculative_eagle_topk(10) > 1 with page_size(16) > 1 is unstable and produces incorrect results for "
            "paged attention backends. This combination is only supported for the 'flashinfer' backend.")
    assert on(validate({**ngram, "attention-backend": "fa3"}), "attention-backend").message.endswith(text)
    assert validate({**ngram, "attention-backend": "flashinfer"}) == []
    assert validate({**ngram, "speculative-ngram-max-bfs-breadth": "1"}) == []


def test_ngram_sam_budget_is_bounded_by_the_default_12_draft_tokens() -> None:
    # 0.5.23 checks the budget only with an external corpus, and then it must be positive (its default is 0)
    ngram = {**BASE, "speculative-algorithm": "NGRAM"}
    assert validate({**ngram, "speculative-ngram-external-sam-budget": "12"}) == []
    corpus = {**ngram, "speculative-ngram-external-corpus-path": "/c.jsonl"}
    issue = on(validate({**corpus, "speculative-ngram-external-sam-budget": "12"}), "speculative-ngram-external-sam-budget")
    assert issue.message.endswith("speculative_ngram_external_sam_budget must be less than or equal to "
                                  "speculative_num_draft_tokens - 1 (11).")
    unset = on(validate(corpus), "speculative-ngram-external-sam-budget")
    assert unset.message.endswith("--speculative-ngram-external-sam-budget must be positive when "
                                  "--speculative-ngram-external-corpus-path is set.")
    assert validate({**corpus, "speculative-ngram-external-sam-budget": "4"}) == []


def test_ngram_refuses_attention_dp_only_when_it_is_on() -> None:
    ngram = {**BASE, "speculative-algorithm": "NGRAM"}
    for dp in ({"attn-dp-size": "2"}, {"dp-size": "2", "enable-dp-attention": None}):
        issue = on(validate({**ngram, **dp}), "speculative-algorithm")
        assert issue.message.endswith("Currently ngram speculative decoding does not support dp attention.")
    # --enable-dp-attention with dp size 1 leaves attn_dp_size 1 (parallel_hook): no attention DP
    assert [i.level for i in validate({**ngram, "enable-dp-attention": None})] == ["warning"]


# --- EAGLE family: adaptive, page size, attention backends, rejection sampling


def test_adaptive_lifts_the_must_be_unset_rule() -> None:
    topk_only = {**BASE, "speculative-algorithm": "NEXTN", "speculative-eagle-topk": "1"}
    assert on(validate(topk_only), "speculative-eagle-topk").level == "error"
    assert validate({**topk_only, "speculative-adaptive": None}) == []
    steps_only = {**BASE, "speculative-algorithm": "NEXTN", "speculative-num-steps": "3", "speculative-adaptive": None}
    assert [i.flag for i in validate(steps_only)] == ["speculative-num-draft-tokens"]  # topk 1: write steps + 1


@pytest.mark.parametrize("backend, level", [("flashinfer", None), ("fa3", None), ("triton", None),
                                            ("flashmla", "error"), (None, "warning")])
def test_topk_above_one_with_pages_only_on_three_backends(backend: str | None, level: str | None) -> None:
    flags = {**TREE, "page-size": "64", **({"attention-backend": backend} if backend else {})}
    issues = [i for i in validate(flags) if "page_size > 1" in i.message]
    assert [i.level for i in issues] == ([level] if level else [])
    if level == "error":
        assert issues[0].message.endswith("speculative_eagle_topk > 1 with page_size > 1 is only supported on "
                                     "('flashinfer', 'fa3', 'triton'); got attention_backend='flashmla'. Use "
                                     "page_size == 1 or one of those backends.")


def test_trtllm_mha_needs_topk_one() -> None:
    issue = on(validate({**TREE, "decode-attention-backend": "trtllm_mha"}), "speculative-eagle-topk")
    assert issue.message.endswith("trtllm_mha backend only supports topk = 1 for speculative decoding.")
    assert validate({**NEXTN, "attention-backend": "trtllm_mha"}) == []


def test_rejection_sampling_rules() -> None:
    flag = "speculative-use-rejection-sampling"
    assert validate({**NEXTN, flag: None}) == []
    tree = [i.message for i in validate({**TREE, flag: None}) if i.flag == flag]
    assert tree == ["SGLang 0.5.23 stops at start-up: --speculative-use-rejection-sampling requires "
                    "--speculative-eagle-topk=1."]
    standalone = on(validate({**NEXTN, "speculative-algorithm": "STANDALONE", "speculative-draft-model-path": "d",
                              flag: None}), flag)
    assert standalone.message.endswith("--speculative-use-rejection-sampling is only supported for EAGLE / EAGLE3 / NEXTN, "
                                  "not speculative_algorithm=STANDALONE.")
    threshold = on(validate({**NEXTN, flag: None, "speculative-accept-threshold-single": "0.9"}), flag)
    assert "rejection sampling ignores the accept thresholds" in threshold.message
    assert threshold.remove == ("speculative-accept-threshold-single",)
    # 0.5.23 refuses deterministic rejection sampling only off CUDA: a CUDA host starts it, so it is no error
    deterministic = on(validate({**NEXTN, flag: None, "enable-deterministic-inference": None}), flag)
    assert deterministic.level == "warning" and "Deterministic rejection sampling is currently supported only on " \
        "CUDA-compatible devices" in deterministic.message


def test_block_verification_only_for_eagle_and_the_block_drafters() -> None:
    flag = "speculative-use-block-verification"
    for algorithm in ("STANDALONE", "NGRAM"):
        issue = on(validate({**NEXTN, "speculative-algorithm": algorithm, "speculative-draft-model-path": "d",
                             flag: None}), flag)
        assert issue.level == "error" and issue.message.endswith(
            "--speculative-use-block-verification only supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK.")
    assert validate({**NEXTN, flag: None}) == []
    # on EAGLE / EAGLE3 it turns rejection sampling on, whose topk-1 rule then applies
    tree = on(validate({**TREE, flag: None}), flag)
    assert "block verification turns rejection sampling on" in tree.message


def test_the_draft_window_has_no_effect_outside_eagle_eagle3_and_dflash() -> None:
    # 0.5.23 honours it for EAGLE (and NEXTN, which resolves to EAGLE) too: no warning there
    assert validate({**NEXTN, "speculative-draft-window-size": "512"}) == []
    assert validate({**TREE, "speculative-num-draft-tokens": "8", "speculative-draft-window-size": "512"}) == []
    standalone = {**NEXTN, "speculative-algorithm": "STANDALONE", "speculative-draft-model-path": "d"}
    issue = on(validate({**standalone, "speculative-draft-window-size": "512"}), "speculative-draft-window-size")
    assert issue.level == "warning" and issue.message.endswith(
        "--speculative-draft-window-size has no effect with speculative_algorithm=STANDALONE (honored by DFLASH, "
        "Llama EAGLE-3, and the EAGLE/MTP/NEXTN draft-decode path on the Triton/FlashInfer draft backends).")
    sink = on(validate({**NEXTN, "speculative-draft-sink-size": "4"}), "speculative-draft-sink-size")
    assert sink.level == "error"  # a ValueError in 0.5.23, not a no-op
    assert sink.message.endswith("--speculative-draft-sink-size requires --speculative-draft-window-size.")


def test_an_old_flag_after_its_new_flag_is_the_value_older_releases_kept() -> None:
    # releases that had --cuda-graph-max-bs stored it into cuda_graph_max_bs_decode: the later one won
    later = on(validate({**NEXTN, "cuda-graph-max-bs-decode": "32", "cuda-graph-max-bs": "64"}), "cuda-graph-max-bs")
    assert later.fix == {"cuda-graph-max-bs-decode": "64"} and later.remove == ("cuda-graph-max-bs",)
    earlier = on(validate({**NEXTN, "cuda-graph-max-bs": "64", "cuda-graph-max-bs-decode": "32"}), "cuda-graph-max-bs")
    assert earlier.fix is None and earlier.remove == ("cuda-graph-max-bs",)


def test_flex_attention_refuses_speculative_decoding_and_the_prefill_context_must_be_positive() -> None:
    # attention_hook.py (an assert) and cuda_graph_hook.py _resolve_max_context_size
    flex = on(validate({**NEXTN, "attention-backend": "flex_attention"}), "attention-backend")
    assert flex.level == "error" and flex.message.endswith(
        "Speculative decoding is currently not supported with Flex Attention backend")
    assert validate({**BASE, "attention-backend": "flex_attention"}) == []
    zero = on(validate({**NEXTN, "cuda-graph-prefill-max-context": "0"}), "cuda-graph-prefill-max-context")
    assert zero.message.endswith("--cuda-graph-prefill-max-context must be a positive integer")
    assert validate({**NEXTN, "cuda-graph-prefill-max-context": "4k"}) == []
