"""Flag parsing and SGLang's speculative rules, the memory plan and the timing model (no processes but one)."""

from __future__ import annotations

import subprocess
import sys
from itertools import pairwise

import pytest

from specdec_tui.sim.args import parse_sim_args
from specdec_tui.sim.spec_resolve import MSG_DRAFT_TOKENS_ADJUSTED, MSG_MAX_RUNNING_48
from specdec_tui.sim.startup import memory_plan
from tests.test_sim_support import SEED_MODEL, seed_flags


def test_nextn_becomes_eagle_with_sglangs_defaults_and_messages():
    a = parse_sim_args(["--model", SEED_MODEL, "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "2",
                        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "8"])
    assert a.server["speculative_algorithm"] == "EAGLE"
    assert a.server["max_running_requests"] == 48
    assert a.server["speculative_num_draft_tokens"] == 3
    assert a.warnings == [MSG_MAX_RUNNING_48, MSG_DRAFT_TOKENS_ADJUSTED]
    assert "Max running requests is reset to 48 for speculative decoding" in MSG_MAX_RUNNING_48


def test_explicit_max_running_requests_and_matching_draft_tokens_are_kept_silently():
    a = parse_sim_args([*seed_flags(3), "--max-running-requests", "8"])
    assert a.server["max_running_requests"] == 8
    assert a.server["speculative_num_draft_tokens"] == 4
    assert a.warnings == []


def test_aliases_and_sim_options():
    a = parse_sim_args(["--model-path", "m", "--tp-size", "2", "--dp", "1", "--time-scale", "10", "--sim-seed", "7"])
    assert (a.server["tp_size"], a.server["served_model_name"], a.time_scale, a.sim_seed) == (2, "m", 10.0, 7)
    assert a.spec_steps == 0


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--model-path", "m", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        # 0.5.23 declares no --tp: argparse takes it as a prefix of --tp-size and names that option's own spellings
        (["--model-path", "m", "--tp", "four"],
         "argument --tp-size/--tensor-parallel-size: invalid int value: 'four'"),
        (["--tp", "4"], "the following arguments are required: --model-path/--model"),
    ],
)
def test_bad_command_lines_are_argparse_errors(argv, expected, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_sim_args(argv)
    assert exc.value.code == 2
    assert expected in capsys.readouterr().err


def test_the_cli_passes_every_flag_through_and_exits_2_on_unknown():
    proc = subprocess.run([sys.executable, "-m", "specdec_tui.cli.main", "sim", "--model-path", "m", "--bogus", "1"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "specdec-tui sim: error: unrecognized arguments: --bogus 1" in proc.stderr


@pytest.mark.parametrize("steps, expected", [(1, 26), (2, 21), (3, 17)])
def test_seed_unit_memory_plan_reports_the_seeds_max_running_requests(steps, expected):
    plan = memory_plan(parse_sim_args(seed_flags(steps)))
    assert plan.max_running_requests == expected
    assert plan.fits_pool and plan.fits_graphs


def test_more_steps_cost_kv_tokens_and_concurrency():
    plans = [memory_plan(parse_sim_args(seed_flags(k))) for k in range(1, 7)]
    assert all(a.max_total_num_tokens > b.max_total_num_tokens for a, b in pairwise(plans))
    assert all(a.max_running_requests > b.max_running_requests for a, b in pairwise(plans))


def test_memory_failures_depend_on_fraction_tree_and_graph_batch():
    """The weights leave nothing at 0.6; graphs live outside the static fraction and are captured only up to
    the request pool (upstream clamps the capture list to it), so a deep chain's few requests fit at 0.85,
    while at 0.94 the graphs do not, unless fewer batch sizes are captured or graphs are off."""
    assert not memory_plan(parse_sim_args([*seed_flags(3), "--mem-fraction-static", "0.6"])).fits_pool
    assert memory_plan(parse_sim_args(seed_flags(9))).fits_graphs
    wide = [*seed_flags(3), "--mem-fraction-static", "0.94"]
    assert memory_plan(parse_sim_args(wide)).fits_pool
    assert not memory_plan(parse_sim_args(wide)).fits_graphs
    assert memory_plan(parse_sim_args([*wide, "--cuda-graph-max-bs-decode", "4"])).fits_graphs
    assert memory_plan(parse_sim_args([*wide, "--cuda-graph-backend-decode", "disabled"])).fits_graphs


@pytest.mark.parametrize("argv, error", [
    (["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "d", "--speculative-num-steps", "2",
      "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "3", "--speculative-use-block-verification"],
     "ValueError: --speculative-use-block-verification only supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK."),
    (["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "2", "--speculative-eagle-topk", "1",
      "--speculative-num-draft-tokens", "3", "--speculative-draft-sink-size", "4"],
     "ValueError: --speculative-draft-sink-size requires --speculative-draft-window-size."),
    (["--speculative-algorithm", "NGRAM", "--attn-dp-size", "2"],
     "ValueError: Currently ngram speculative decoding does not support dp attention."),
])
def test_the_sim_stops_at_start_up_where_0_5_23_does(argv: list[str], error: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # upstream 0.5.23: srt/arg_groups/speculative_hook.py (ValueErrors after parsing: exit 1, not argparse's 2)
    with pytest.raises(SystemExit) as exc:
        parse_sim_args(["--model-path", "m", *argv])
    assert exc.value.code == 1
    assert capsys.readouterr().err.strip().endswith(error)


def test_sim_help_lists_sglangs_flags_and_the_simulators_own():
    """`specdec-tui sim --help` printed a usage line and -h alone: every flag was hidden. It lists SGLang's flags
    with upstream's help and the simulator's own, under the command the user typed, and exits 0."""
    proc = subprocess.run([sys.executable, "-m", "specdec_tui.cli.main", "sim", "--help"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: specdec-tui sim")
    assert "--speculative-num-steps" in proc.stdout and "The path of the model weights" in proc.stdout
    assert "--time-scale" in proc.stdout and "faster" in proc.stdout
