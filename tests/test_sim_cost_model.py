"""Table tests of the simulated server's physics (sim/cost_model.py, sim/profiles.py, sim/model.py,
sim/adaptive.py): pure functions, no process. Each property of issue 30 is an assertion here; each profile's
published figures are held within 5 % (ratios) / 7 % (tok/s)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from specdec_tui.sim import cost_model as cm
from specdec_tui.sim.adaptive import build_policy
from specdec_tui.sim.args import parse_sim_args
from specdec_tui.sim.cost_model import NO_SPEC, Tree, Workload
from specdec_tui.sim.profiles import DEEPSEEK, LLAMA, PROFILES, SEED, profile_for
from specdec_tui.sim.startup import memory_plan

CHAT_CTX = 512  # tokens of context per request in the calibration (MT-Bench-like)


# ---- 1. drafting is a tree --------------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [0.2, 0.5, 0.8, 0.95, 0.999])
@pytest.mark.parametrize("steps, topk, draft", [(1, 1, 2), (3, 1, 4), (4, 2, 1), (5, 4, 8), (3, 8, 64), (7, 1, 3),
                                                (2, 4, 16)])
def test_accept_length_never_exceeds_the_tree(alpha, steps, topk, draft):
    tree = Tree(steps, topk, draft)
    length = cm.expected_accept_length(alpha, tree)
    assert 1.0 <= length <= min(steps + 1, draft) + 1e-9
    rng = random.Random(0)
    draws = [cm.accepted_tokens(alpha, tree, rng.random()) for _ in range(4000)]
    assert max(draws) <= min(steps + 1, draft)


def test_only_the_root_verified_accepts_exactly_one():
    # the case: steps 4, topk 2, draft tokens 1 printed "accept len: 4.33"
    assert cm.expected_accept_length(0.95, Tree(4, 2, 1)) == 1.0
    assert {cm.accepted_tokens(0.95, Tree(4, 2, 1), u / 100) for u in range(100)} == {1}


@pytest.mark.parametrize("alpha, steps", [(0.95, 3), (0.6, 2), (0.8, 5)])
def test_a_chain_is_the_truncated_geometric(alpha, steps):
    chain = Tree(steps, 1, steps + 1)
    assert cm.expected_accept_length(alpha, chain) == pytest.approx((1 - alpha ** (steps + 1)) / (1 - alpha))
    rng = random.Random(1)
    draws = [cm.accepted_tokens(alpha, chain, rng.random()) for _ in range(20000)]
    assert min(draws) == 1 and max(draws) == steps + 1
    assert sum(draws) / len(draws) == pytest.approx(cm.expected_accept_length(alpha, chain), rel=0.02)


def test_width_helps_at_moderate_acceptance_not_near_the_trap():
    def gain(alpha: float) -> float:
        return cm.expected_accept_length(alpha, Tree(3, 4, 8)) / cm.expected_accept_length(alpha, Tree(3, 1, 4))

    assert gain(0.6) > 1.25
    assert gain(0.97) < 1.06  # the extra draft tokens buy little where top-1 is nearly always right
    assert gain(0.6) > gain(0.8) > gain(0.97)


# ---- 2. cost grows with what a round does ----------------------------------------------------------------------

def test_verify_cost_grows_with_batch_times_draft_tokens_and_draft_with_topk():
    small, large = cm.step_ms(LLAMA, 1, Tree(5, 4, 8)), cm.step_ms(LLAMA, 1, Tree(5, 4, 64))
    assert large / small < 1.4  # latency-bound at batch 1: 64 verify tokens cost little more than 8
    b64_small, b64_large = cm.step_ms(LLAMA, 64, Tree(5, 4, 8)), cm.step_ms(LLAMA, 64, Tree(5, 4, 64))
    assert b64_large / b64_small > 3  # compute-bound at batch 64
    assert cm.draft_ms(LLAMA, 64, Tree(5, 8, 8), True) > cm.draft_ms(LLAMA, 64, Tree(5, 1, 8), True)


def best_at(profile, batch: int, alpha: float) -> tuple[Tree, float]:
    grid = [Tree(s, k, n) for s in (1, 2, 3, 5, 7) for k in (1, 2, 4, 8) for n in (2, 4, 8, 16, 32, 64)
            if n <= 1 + s * k and (k > 1 or n == s + 1)]
    rates = {t: cm.steady_tok_s(profile, batch, t, alpha, batch * CHAT_CTX, decay=profile.depth_decay) for t in grid}
    tree = max(rates, key=rates.__getitem__)
    return tree, rates[tree]


def test_a_wide_tree_that_wins_at_c1_loses_at_c64():
    alpha = LLAMA.alpha_for("EAGLE3")
    wide = Tree(5, 8, 32)
    at = {b: cm.steady_tok_s(LLAMA, b, wide, alpha, b * CHAT_CTX) / cm.steady_tok_s(LLAMA, b, NO_SPEC, 1, b * CHAT_CTX)
          for b in (1, 64)}
    assert at[1] > 2.0 and at[64] < 1.0
    tree1, _ = best_at(LLAMA, 1, alpha)
    tree64, _ = best_at(LLAMA, 64, alpha)
    assert tree64.num_draft_tokens < tree1.num_draft_tokens  # the best tree shrinks as the batch grows


def test_no_speculation_wins_at_high_concurrency_with_its_larger_pool():
    # the seed's model on chat at temperature 0.7: spec-off's own max_running_requests is larger (37 vs 17)
    spec = parse_sim_args(["--model-path", SEED.model_path, "--tp", "4", "--speculative-algorithm", "NEXTN",
                           "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                           "--speculative-num-draft-tokens", "4"])
    off = parse_sim_args(["--model-path", SEED.model_path, "--tp", "4"])
    mrr_spec, mrr_off = memory_plan(spec).max_running_requests, memory_plan(off).max_running_requests
    assert mrr_off > mrr_spec
    alpha = cm.acceptance_alpha(SEED, "EAGLE", Workload.CHAT, temperature=0.7, ignore_eos=False)
    c64_spec = cm.steady_tok_s(SEED, mrr_spec, Tree(3, 1, 4), alpha, decay=SEED.depth_decay)
    c64_off = cm.steady_tok_s(SEED, mrr_off, NO_SPEC, 1.0)
    assert c64_off > c64_spec
    assert cm.steady_tok_s(SEED, 1, Tree(3, 1, 4), alpha, decay=SEED.depth_decay) > cm.steady_tok_s(SEED, 1, NO_SPEC, 1)


# ---- 3. CUDA graphs ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.key)
def test_a_batch_above_the_largest_graph_runs_eagerly_about_4x_slower(profile):
    tree = Tree(1, 1, 2)
    assert cm.round_ms_with_graphs(profile, 8, tree, 0, 8)[1]
    assert not cm.round_ms_with_graphs(profile, 9, tree, 0, 8)[1]
    eager = cm.step_ms(profile, 1, tree, 0, graph=False) / cm.step_ms(profile, 1, tree, 0, graph=True)
    assert 3.0 < eager < 4.5
    # a memory-bound batch hides part of it, but it is still slower
    assert cm.step_ms(profile, 16, tree, 0, graph=False) > 1.3 * cm.step_ms(profile, 16, tree, 0, graph=True)


def test_upstream_default_graph_batch_and_capture_list():
    assert cm.default_graph_max_bs(96, 4, None) == 512  # 90-160 GB, tp >= 4
    assert cm.default_graph_max_bs(80, 1, None) == 256
    assert cm.default_graph_max_bs(80, 1, 48) == 48  # an explicit --max-running-requests caps it
    assert cm.capture_batch_sizes(512, True, 17)[-3:] == [14, 16, 17]  # clamped to the request pool
    assert cm.capture_batch_sizes(48, True, 1000)[-4:] == [32, 40, 44, 48]


def test_graph_memory_grows_with_batch_steps_topk_and_draft():
    base = cm.graph_memory_gb(SEED, 16, Tree(3, 1, 4))
    assert cm.graph_memory_gb(SEED, 32, Tree(3, 1, 4)) > base
    assert cm.graph_memory_gb(SEED, 16, Tree(5, 1, 6)) > base
    assert cm.graph_memory_gb(SEED, 16, Tree(3, 4, 4)) > base
    assert cm.graph_memory_gb(SEED, 16, Tree(3, 4, 16)) > cm.graph_memory_gb(SEED, 16, Tree(3, 4, 4))


# ---- 4. memory decides who starts -------------------------------------------------------------------------------

@pytest.mark.parametrize("steps, expected", [(1, 26), (2, 21), (3, 17)])
def test_the_seeds_max_running_requests(steps, expected):
    argv = ["--model-path", SEED.model_path, "--tp", "4", "--mem-fraction-static", "0.85", "--speculative-algorithm",
            "NEXTN", "--speculative-num-steps", str(steps), "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", str(steps + 1)]
    plan = memory_plan(parse_sim_args(argv))
    assert plan.max_running_requests == expected and plan.fits_pool and plan.fits_graphs


def test_weights_that_leave_nothing_name_the_minimum_viable_fraction():
    argv = ["--model-path", SEED.model_path, "--tp", "4", "--speculative-algorithm", "NEXTN",
            "--speculative-num-steps", "1", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2"]
    low = memory_plan(parse_sim_args([*argv, "--mem-fraction-static", "0.6"]))
    assert not low.weights_fit and 0.6 < low.min_mem_fraction < 0.7
    ok = memory_plan(parse_sim_args([*argv, "--mem-fraction-static", f"{low.min_mem_fraction + 0.02:.3f}"]))
    assert ok.weights_fit
    # tp 2 cannot hold 122B of BF16 weights on 96 GB cards at any fraction
    assert not memory_plan(parse_sim_args([*argv[:2], "--tp", "2", *argv[4:], "--mem-fraction-static", "0.95"])).weights_fit


# ---- 5. acceptance depends on the request ------------------------------------------------------------------------

def test_acceptance_by_temperature_workload_and_the_trap():
    def a(kind: Workload, t: float, eos: bool) -> float:
        return cm.acceptance_alpha(SEED, "EAGLE", kind, temperature=t, ignore_eos=eos)

    assert a(Workload.CHAT, 0.0, True) == a(Workload.CODE, 0.0, True) == SEED.trap_alpha == 0.95  # any prompt
    assert a(Workload.REPETITIVE, 0.0, False) > a(Workload.CODE, 0.0, False) > a(Workload.CHAT, 0.0, False)
    assert a(Workload.CHAT, 0.0, False) > a(Workload.CHAT, 0.7, False) > a(Workload.CHAT, 1.0, True)
    assert cm.workload_of("Write a Python function that parses a CSV file.") is Workload.CODE
    assert cm.workload_of("Count from 1 to 500, one number per line.") is Workload.REPETITIVE
    assert cm.workload_of("What should we see in Lisbon?") is Workload.CHAT


# ---- 6. adaptive speculation ------------------------------------------------------------------------------------

def test_upstream_default_tiers_route_by_batch():
    policy = build_policy(None, 3)
    assert policy.candidate_steps == [0, 1, 3, 5, 7]
    assert [policy.steps_for(b) for b in (1, 4, 8, 20, 32, 63, 64, 100)] == [3, 3, 3, 3, 1, 1, 0, 0]


def test_a_tier_steps_up_under_high_acceptance_and_down_under_low(tmp_path: Path):
    cfg = tmp_path / "adaptive.json"
    cfg.write_text(json.dumps({"warmup_batches": 2, "update_interval": 1, "1": {"candidate_steps": [1, 3, 5]}}))
    policy = build_policy(str(cfg), 3)
    tier = policy.tier_for(1)
    changes = [tier.observe([tier.steps]) for _ in range(20)]  # every draft accepted
    assert tier.steps == 5 and 5 in changes
    for _ in range(40):
        tier.observe([0])
    assert tier.steps == 1


# ---- 7. the profiles' published figures -------------------------------------------------------------------------

def published_value(profile, pub) -> float:
    what = pub.what
    if profile is SEED:
        steps = int(what.split()[1].rstrip(","))
        return cm.steady_tok_s(SEED, 1, Tree(steps, 1, steps + 1), SEED.trap_alpha)
    if profile is LLAMA:
        ctx = pub.batch * CHAT_CTX
        base = cm.steady_tok_s(LLAMA, pub.batch, NO_SPEC, 1.0, ctx)
        if what == "no speculation":
            return base
        alg = "EAGLE3" if "EAGLE-3" in what else "EAGLE"
        rate = cm.steady_tok_s(LLAMA, pub.batch, Tree(5, 4, 8), LLAMA.alpha_for(alg), ctx)
        return rate / base if pub.kind == "ratio" else rate
    ctx = pub.batch * 1024
    return (cm.steady_tok_s(DEEPSEEK, pub.batch, Tree(1, 1, 2), DEEPSEEK.alpha_for("EAGLE"), ctx, decay=DEEPSEEK.depth_decay)
            / cm.steady_tok_s(DEEPSEEK, pub.batch, NO_SPEC, 1.0, ctx))


@pytest.mark.parametrize("profile, pub", [(p, f) for p in PROFILES for f in p.published],
                         ids=lambda x: getattr(x, "key", None) or getattr(x, "what", ""))
def test_each_profile_reproduces_its_published_figures(profile, pub):
    tolerance = 0.05 if pub.kind == "ratio" else 0.07
    assert published_value(profile, pub) == pytest.approx(pub.value, rel=tolerance)


def test_the_model_path_picks_the_profile_and_llama_starts_on_its_auto_defaults():
    assert profile_for("meta-llama/Llama-3.1-8B-Instruct").exact
    a = parse_sim_args(["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3"])
    assert (a.server["speculative_num_steps"], a.server["speculative_eagle_topk"],
            a.server["speculative_num_draft_tokens"]) == (5, 4, 8)
    other = profile_for("meta-llama/Llama-3.3-70B-Instruct")
    assert not other.exact and other.base is LLAMA and "closest profile" in (other.note("x") or "")
    assert profile_for("some-org/Mystery-8B").profile is LLAMA  # within 10 % of its size: the profile itself
    assert profile_for("some-org/Mystery-7B").base is LLAMA
    assert profile_for("deepseek-ai/DeepSeek-R1").profile is DEEPSEEK


def test_an_adaptive_config_file_is_read_and_refused_in_upstreams_words(tmp_path: Path, capsys):
    good = tmp_path / "tiers.json"
    good.write_text(json.dumps({"1": {"candidate_steps": [2, 4]}, "16": {"candidate_steps": [0, 2]}}))
    a = parse_sim_args(["--model-path", SEED.model_path, "--speculative-algorithm", "EAGLE", "--speculative-adaptive",
                        "--speculative-adaptive-config", str(good)])
    assert a.server["speculative_num_steps"] == 2  # the middle of the union [0, 2, 4]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"1": {"candidate_steps": [-1]}}))
    with pytest.raises(SystemExit):
        parse_sim_args(["--model-path", SEED.model_path, "--speculative-algorithm", "EAGLE", "--speculative-adaptive",
                        "--speculative-adaptive-config", str(bad)])
    assert "ValueError: BS 1: candidate_steps must be a list of non-negative ints, got [-1]" in capsys.readouterr().err
    # topk > 1 turns adaptive off with upstream's warning
    wide = parse_sim_args(["--model-path", SEED.model_path, "--speculative-algorithm", "EAGLE", "--speculative-adaptive",
                           "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
                           "--speculative-num-draft-tokens", "6"])
    assert not wide.server["speculative_adaptive"]
    assert any("speculative_adaptive disabled: speculative_eagle_topk=2 (only topk=1 is supported)" in w
               for w in wide.warnings)


def test_a_model_without_a_profile_is_derived_from_the_closest_at_its_own_size():
    choice = profile_for("meta-llama/Llama-3.3-70B-Instruct")
    assert choice.base is LLAMA and choice.profile.params_b == 70
    assert "scaled to 70B parameters" in (choice.note("meta-llama/Llama-3.3-70B-Instruct") or "")
    one = memory_plan(parse_sim_args(["--model-path", "meta-llama/Llama-3.3-70B-Instruct"]))
    assert not one.weights_fit  # 140 GB of BF16 weights do not fit one H100
    assert memory_plan(parse_sim_args(["--model-path", "meta-llama/Llama-3.3-70B-Instruct", "--tp", "4"])).fits_pool
    # a bigger model reads more weights a forward: slower than its base at batch 1
    assert cm.steady_tok_s(choice.profile, 1, NO_SPEC, 1.0) < cm.steady_tok_s(LLAMA, 1, NO_SPEC, 1.0)
