"""The sim follows current SGLang's speculative rules and CUDA-graph flags: what it resolves and what it logs.

Every expected line is shaped as upstream's format strings produce it:
# upstream: python/sglang/srt/arg_groups/speculative_hook.py (rules, auto choice, log lines)
# upstream: python/sglang/srt/speculative/spec_info.py (from_string: "Unknown speculative algorithm name: ...")
# upstream: python/sglang/srt/server_args.py + python/sglang/srt/arg_groups/argparse_actions.py (deprecated aliases)
"""

from __future__ import annotations

import asyncio
import io

import pytest

from specdec_tui.sim.args import deprecation_warnings, parse_sim_args
from specdec_tui.sim.logs import SimLog
from specdec_tui.sim.spec_resolve import (
    MSG_DRAFT_TOKENS_ADJUSTED,
    MSG_MAX_RUNNING_48,
    MSG_NGRAM_DRAFT_TOKENS,
    MSG_NGRAM_MIXED_CHUNK,
)
from specdec_tui.sim.startup import memory_plan, run_startup
from tests.test_sim_support import SEED_MODEL, seed_flags

TREE = ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")


def tree(argv: list[str]) -> tuple[int, int, int]:
    server = parse_sim_args(argv).server
    return tuple(server[k] for k in TREE)  # type: ignore[return-value]


def failure(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        parse_sim_args(argv)
    assert exc.value.code == 1  # SGLang raises after parsing: a traceback and exit 1, not argparse's 2
    return capsys.readouterr().err.strip()


@pytest.mark.parametrize("written, resolved", [("nextn", "EAGLE"), ("NextN", "EAGLE"), ("eagle3", "EAGLE3"),
                                               ("standalone", "STANDALONE")])
def test_the_algorithm_is_upper_cased_and_nextn_is_eagle(written: str, resolved: str) -> None:
    a = parse_sim_args(["--model-path", SEED_MODEL, "--speculative-algorithm", written,
                        "--speculative-draft-model-path", "draft"])
    assert a.server["speculative_algorithm"] == resolved
    assert a.server["speculative_draft_model_revision"] == "main"  # set for any draft path


def test_an_unknown_algorithm_stops_sglang_after_parsing(capsys: pytest.CaptureFixture[str]) -> None:
    err = failure(["--model-path", "m", "--speculative-algorithm", "medusa"], capsys)
    assert err == "ValueError: Unknown speculative algorithm name: medusa"


@pytest.mark.parametrize("model_path, algorithm, expected", [
    ("meta-llama/Llama-3.1-8B-Instruct", "EAGLE", (5, 4, 8)),
    ("xai-org/grok-1", "EAGLE", (5, 4, 8)),
    (SEED_MODEL, "NEXTN", (3, 1, 4)),
    ("meta-llama/Llama-3.1-8B-Instruct", "STANDALONE", (3, 1, 4)),
])
def test_the_automatic_choice_when_steps_topk_and_draft_tokens_are_unset(model_path: str, algorithm: str,
                                                                         expected: tuple[int, int, int]) -> None:
    argv = ["--model-path", model_path, "--speculative-algorithm", algorithm, "--speculative-draft-model-path", "d"]
    assert tree(argv) == expected


def test_topk_without_steps_trips_sglangs_assert(capsys: pytest.CaptureFixture[str]) -> None:
    err = failure(["--model-path", "m", "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "4"], capsys)
    assert err == "AssertionError"


def test_steps_without_topk_stops_sglang_where_it_compares_topk(capsys: pytest.CaptureFixture[str]) -> None:
    # upstream: `speculative_eagle_topk > 1` (the page-size rule) with topk None
    err = failure(["--model-path", "m", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3"], capsys)
    assert err == "TypeError: '>' not supported between instances of 'NoneType' and 'int'"


def test_adaptive_lifts_the_assert_and_chains_topk_one(capsys: pytest.CaptureFixture[str]) -> None:
    a = parse_sim_args(["--model-path", "m", "--speculative-algorithm", "NEXTN", "--speculative-adaptive",
                        "--speculative-num-draft-tokens", "9", "--speculative-num-steps", "3"])
    assert tuple(a.server[k] for k in TREE) == (3, 1, 4)
    a = parse_sim_args(["--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-adaptive"])
    assert tuple(a.server[k] for k in TREE) == (3, 1, 4)  # the middle of upstream's candidates [0, 1, 3, 5, 7]
    # upstream 0.5.23 refuses launch steps that no tier can switch to
    with pytest.raises(SystemExit) as exc:
        parse_sim_args(["--model-path", "m", "--speculative-algorithm", "NEXTN", "--speculative-adaptive",
                        "--speculative-num-steps", "2"])
    assert exc.value.code == 1
    assert ("--speculative-num-steps=2 is not in the adaptive config candidate_steps [0, 1, 3, 5, 7]"
            in capsys.readouterr().err)


def test_dflash_forces_steps_and_topk_to_one_and_defaults_the_block(capsys: pytest.CaptureFixture[str]) -> None:
    a = parse_sim_args(["--model-path", "m", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path",
                        "z-lab/dflash", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2"])
    assert tuple(a.server[k] for k in TREE) == (1, 1, 16)
    assert a.server["max_running_requests"] == 48
    assert a.warnings == [
        "DFLASH only supports speculative_num_steps == 1; overriding speculative_num_steps=3 to 1.",
        "DFLASH only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk=2 to 1.",
        "speculative_num_draft_tokens is not set; defaulting to 16 for DFLASH.",
        MSG_MAX_RUNNING_48,
    ]
    err = failure(["--model-path", "m", "--speculative-algorithm", "DFLASH"], capsys)
    assert err == "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path."


def test_dflash_block_size_must_match_the_draft_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--model-path", "m", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d",
            "--speculative-dflash-block-size", "8"]
    assert tree(base)[2] == 8
    err = failure([*base, "--speculative-num-draft-tokens", "4"], capsys)
    assert err == ("ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but "
                   "they differ. For DFLASH they must match. speculative_num_draft_tokens=4, "
                   "speculative_dflash_block_size=8.")


def test_dspark_verifies_gamma_plus_one(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--model-path", "m", "--speculative-algorithm", "dspark", "--speculative-draft-model-path", "d"]
    a = parse_sim_args(base)
    assert tuple(a.server[k] for k in TREE) == (1, 1, 8)
    assert a.warnings == ["DSpark gamma is not set; defaulting to 7.", MSG_MAX_RUNNING_48]
    assert tree([*base, "--speculative-dspark-block-size", "3"]) == (1, 1, 4)
    err = failure([*base, "--speculative-dspark-block-size", "3", "--speculative-num-draft-tokens", "3"], capsys)
    assert err == ("ValueError: DSpark speculative_num_draft_tokens must equal gamma + 1 (= 4 for gamma=3), but got "
                   "speculative_num_draft_tokens=3.")


def test_ngram_defaults_to_12_draft_tokens_and_resets_max_running_requests() -> None:
    a = parse_sim_args(["--model-path", "m", "--speculative-algorithm", "ngram"])
    assert tuple(a.server[k] for k in TREE) == (1, 10, 12)  # topk = --speculative-ngram-max-bfs-breadth (10)
    assert a.server["max_running_requests"] == 48
    assert a.warnings == [MSG_MAX_RUNNING_48, MSG_NGRAM_DRAFT_TOKENS, MSG_NGRAM_MIXED_CHUNK]
    assert MSG_NGRAM_DRAFT_TOKENS == ("speculative_num_draft_tokens is set to 12 by default for ngram speculative "
                                      "decoding. You can override this by explicitly setting "
                                      "--speculative-num-draft-tokens.")
    explicit = parse_sim_args(["--model-path", "m", "--speculative-algorithm", "NGRAM", "--max-running-requests", "8",
                               "--speculative-num-draft-tokens", "8", "--speculative-ngram-max-bfs-breadth", "4"])
    assert tuple(explicit.server[k] for k in TREE) == (2, 4, 8)
    assert explicit.warnings == [MSG_NGRAM_MIXED_CHUNK]


def test_the_draft_window_warning_names_the_resolved_algorithm() -> None:
    a = parse_sim_args([*seed_flags(3), "--speculative-draft-window-size", "512"])
    assert ("--speculative-draft-window-size has no effect with speculative_algorithm=EAGLE (honored by Llama "
            "EAGLE-3 and DFLASH only).") in a.warnings


def test_the_newer_speculative_flags_parse_with_their_types() -> None:
    a = parse_sim_args([*seed_flags(3), "--speculative-draft-kv-cache-dtype", "fp8_e4m3",
                        "--speculative-moe-a2a-backend", "deepep", "--speculative-draft-window-size", "1024",
                        "--speculative-use-rejection-sampling", "--enable-multi-layer-eagle",
                        "--speculative-ngram-match-type", "PROB"])
    s = a.server
    assert (s["speculative_draft_kv_cache_dtype"], s["speculative_moe_a2a_backend"]) == ("fp8_e4m3", "deepep")
    assert s["speculative_draft_window_size"] == 1024 and s["speculative_use_rejection_sampling"] is True
    assert s["enable_multi_layer_eagle"] is True and s["speculative_ngram_match_type"] == "PROB"


# --- CUDA graphs: new per-phase flags, deprecated aliases and SGLang's line for them

def graph_line(old: str, new: str) -> str:
    # upstream: print_deprecated_warning wraps the message in bold yellow
    return f"\x1b[1;33m'{old}' is deprecated and will be removed in a future release. Use '{new}' instead.\x1b[0m"


def test_the_deprecated_switches_still_work_and_get_sglangs_deprecation_line() -> None:
    a = parse_sim_args([*seed_flags(3), "--cuda-graph-max-bs-decode", "16", "--disable-cuda-graph",
                        "--dp-size", "2", "--enable-dp-attention"])
    assert a.decode_graph_disabled and a.decode_graph_max_bs == 16
    assert deprecation_warnings(a) == [
        graph_line("--disable-cuda-graph", "--cuda-graph-backend-{decode,prefill}=disabled"),
        graph_line("--enable-dp-attention", "--attn-dp-size <dp-size>"),
    ]


@pytest.mark.parametrize("old, matches", [
    ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"),
    ("--cuda-graph-bs", "--cuda-graph-bs-decode, --cuda-graph-bs-prefill")])
def test_the_removed_graph_flags_stop_the_sim_as_they_stop_0_5_23(old: str, matches: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # 0.5.23 no longer declares them; argparse's prefix matching finds two flags and exits 2 (the sim used to
    # take them as deprecated aliases)
    with pytest.raises(SystemExit) as exc:
        parse_sim_args([*seed_flags(3), old, "16"])
    assert exc.value.code == 2
    assert f"error: ambiguous option: {old} could match {matches}" in capsys.readouterr().err


def test_the_per_phase_flags_say_the_same_without_a_warning() -> None:
    a = parse_sim_args([*seed_flags(3), "--cuda-graph-max-bs-decode", "16", "--cuda-graph-bs-decode", "1", "2",
                        "--cuda-graph-backend-decode", "disabled", "--cuda-graph-backend-prefill", "breakable"])
    assert a.decode_graph_disabled and a.decode_graph_max_bs == 16
    assert a.server["cuda_graph_config"] == {"decode": {"backend": "disabled", "max_bs": 16, "bs": [1, 2]},
                                             "prefill": {"backend": "breakable"}}
    assert deprecation_warnings(a) == []


def test_precedence_json_over_per_phase_flags_over_the_legacy_switch() -> None:
    # upstream: python/sglang/srt/arg_groups/cuda_graph_hook.py parse_cuda_graph_config
    kept = parse_sim_args([*seed_flags(3), "--disable-cuda-graph", "--cuda-graph-backend-decode", "full"])
    assert not kept.decode_graph_disabled
    assert kept.server["cuda_graph_config"]["prefill"] == {"backend": "disabled"}
    json_wins = parse_sim_args([*seed_flags(3), "--cuda-graph-max-bs-decode", "32",
                                "--cuda-graph-config", '{"decode": {"max_bs": 8}}'])
    assert json_wins.decode_graph_max_bs == 8


def test_a_bad_cuda_graph_config_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    # upstream: python/sglang/srt/model_executor/cuda_graph_config.py parse_cuda_graph_config_arg
    with pytest.raises(SystemExit) as exc:
        parse_sim_args(["--model-path", "m", "--cuda-graph-config", '{"verify": {}}'])
    assert exc.value.code == 2
    assert ("argument --cuda-graph-config: --cuda-graph-config: unknown phase 'verify', expected one of "
            "('decode', 'prefill')") in capsys.readouterr().err


def test_graph_memory_follows_the_decode_phase_whichever_flag_set_it() -> None:
    # at 0.94 the seed's steps-3 graphs (17 requests) do not fit outside the static fraction
    tight = [*seed_flags(3), "--mem-fraction-static", "0.94"]
    assert not memory_plan(parse_sim_args(tight)).fits_graphs
    for extra in (["--cuda-graph-max-bs-decode", "4"],
                  ["--cuda-graph-backend-decode", "disabled"], ["--disable-decode-cuda-graph"]):
        assert memory_plan(parse_sim_args([*tight, *extra])).fits_graphs, extra
    assert not memory_plan(parse_sim_args([*tight, "--cuda-graph-max-bs-prefill", "4"])).fits_graphs


def test_the_startup_log_opens_with_the_deprecation_line_before_server_args() -> None:
    a = parse_sim_args([*seed_flags(3), "--disable-cuda-graph", "--time-scale", "1000", "--load-seconds", "0"])
    out = io.StringIO()
    asyncio.run(run_startup(a, SimLog(4, out=out)))
    lines = out.getvalue().splitlines()
    assert lines[0] == graph_line("--disable-cuda-graph", "--cuda-graph-backend-{decode,prefill}=disabled")  # bare: pre-config
    assert lines[1].endswith(MSG_MAX_RUNNING_48)
    assert "] server_args={'model_path': " in lines[2]  # 0.5.23 logs the resolved dict
    assert MSG_DRAFT_TOKENS_ADJUSTED not in out.getvalue()
