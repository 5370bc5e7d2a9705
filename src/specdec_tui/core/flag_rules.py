"""The checks SGLang's start-up hooks apply to the speculative flags, as Issues a user can act on, by release.

Ported (facts, not code) from SGLang 0.5.23 `srt/arg_groups/speculative_hook.py`:
  - `handle_speculative_decoding`: the algorithm is upper-cased, NEXTN and EAGLE resolve to EAGLE; block
    verification only for EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK (and on CUDA or ROCm: the panel's hosts are),
    and on EAGLE / EAGLE3 it turns rejection sampling on; the draft window must be positive and warns for
    algorithms other than EAGLE, EAGLE3 and DFLASH; the sink must be >= 0 and needs the window;
    `SpeculativeAlgorithm.from_string` stops on a name neither built in nor registered by a plugin.
  - `_handle_eagle_family`: STANDALONE refuses attention DP; steps unset (and not adaptive) asserts topk and draft
    tokens unset; trtllm_mha refuses topk > 1; rejection sampling only for EAGLE / EAGLE3 / NEXTN, with topk 1 and
    thresholds 1.0, and with deterministic inference only on a CUDA-compatible device; topk 1 adjusts draft tokens
    to steps + 1; topk > 1 with page size > 1 only on flashinfer / fa3 / triton.
  - NGRAM, DFLASH and DSPARK: core/flag_rules_algorithms.py.
Not ported (they need what a unit does not say: the model's architecture, the device, environment variables):
the Gemma4 FROZEN_KV_MTP promotion, the out-of-tree platform checks, IQuest Q1, DP spec/prefill coordination, UNO.
Hints of the panel's own (a draft model for EAGLE3 / STANDALONE, flags that do nothing) say so.
`speculative_rules(flags, release)`: the checks are those of 0.5.23 (CHECKED_RELEASES); another release is judged by
them too, and each message names the release whose checks said it.
"""

from __future__ import annotations

from specdec_tui.core.flag_issue import Issue
from specdec_tui.core.flag_rules_algorithms import block_rules, ngram_rules
from specdec_tui.core.flag_rules_values import Flags, attn_dp_enabled, float_flag, int_flag, resolved_algorithm
from specdec_tui.core.flag_table import BUILTIN_ALGORITHMS, EAGLE_FAMILY, TREE_FLAGS

CHECKED_RELEASES = ("0.5.23",)
NEEDS_DRAFT_MODEL = ("EAGLE3", "STANDALONE", "DFLASH")
PAGE_TREE_BACKENDS = ("flashinfer", "fa3", "triton")
ATTENTION_FLAGS = ("attention-backend", "prefill-attention-backend", "decode-attention-backend")
BLOCK_VERIFY_ALGORITHMS = ("EAGLE", "EAGLE3", "DFLASH", "DSPARK")
WINDOW_ALGORITHMS = ("EAGLE", "EAGLE3", "DFLASH")


def checks_of(release: str) -> str:
    """The release whose start-up checks judge `release` (the newest ported one when it is not ported)."""
    return release if release in CHECKED_RELEASES else CHECKED_RELEASES[-1]


def speculative_rules(flags: Flags, release: str = CHECKED_RELEASES[-1]) -> list[Issue]:
    """Start-up checks of the speculative flags (names canonical, without "--")."""
    who = f"SGLang {checks_of(release)}"
    algorithm = resolved_algorithm(flags)
    if algorithm is None:
        spec_flags = [n for n in flags if (n.startswith("speculative-") or n == "enable-multi-layer-eagle")
                      and n != "speculative-algorithm"]
        if not spec_flags:
            return []
        names = ", ".join(f"--{n}" for n in spec_flags)
        return [Issue("warning", spec_flags[0], f"{names} do nothing without --speculative-algorithm; set an "
                      "algorithm or remove them.", remove=tuple(spec_flags))]
    issues = _general_rules(who, algorithm, flags)
    written = (flags.get("speculative-algorithm") or "").upper()
    if written not in BUILTIN_ALGORITHMS:
        return issues  # a plugin's own validator decides; the name itself was checked with the value
    if algorithm == "NGRAM":
        issues.extend(ngram_rules(who, flags))
    elif algorithm in ("DFLASH", "DSPARK"):
        issues.extend(block_rules(who, algorithm, flags))
    elif written in EAGLE_FAMILY:
        issues.extend(_eagle_rules(who, written, flags))
    return issues


def _general_rules(who: str, algorithm: str, flags: Flags) -> list[Issue]:
    issues: list[Issue] = []
    written = (flags.get("speculative-algorithm") or "").upper()
    if written not in BUILTIN_ALGORITHMS:
        issues.append(Issue("warning", "speculative-algorithm", f"--speculative-algorithm {flags['speculative-algorithm']}"
                            f" is not built in to {who} (ok if a plugin registers it; otherwise it stops with "
                            f"'Unknown speculative algorithm name: {written}'). Built in: "
                            "EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH, DSPARK, UNO."))
    flag = "speculative-use-block-verification"
    if flag in flags and algorithm not in BLOCK_VERIFY_ALGORITHMS:
        issues.append(Issue("error", flag, f"{who} stops at start-up: --speculative-use-block-verification only "
                            "supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK.", remove=(flag,)))
    window = int_flag(flags, "speculative-draft-window-size")
    if window is not None and window <= 0:
        issues.append(Issue("error", "speculative-draft-window-size", f"{who} stops at start-up: "
                            f"--speculative-draft-window-size must be positive, got {window}."))
    elif window is not None and algorithm not in WINDOW_ALGORITHMS:
        issues.append(Issue("warning", "speculative-draft-window-size", f"{who} warns at start-up: "
                            "--speculative-draft-window-size has no effect with speculative_algorithm="
                            f"{algorithm} (honored by DFLASH, Llama EAGLE-3, and the EAGLE/MTP/NEXTN draft-decode "
                            "path on the Triton/FlashInfer draft backends).", remove=("speculative-draft-window-size",)))
    sink = int_flag(flags, "speculative-draft-sink-size")
    if sink is not None and sink < 0:
        issues.append(Issue("error", "speculative-draft-sink-size", f"{who} stops at start-up: "
                            f"--speculative-draft-sink-size must be non-negative, got {sink}."))
    elif sink is not None and "speculative-draft-window-size" not in flags:
        issues.append(Issue("error", "speculative-draft-sink-size", f"{who} stops at start-up: "
                            "--speculative-draft-sink-size requires --speculative-draft-window-size.",
                            remove=("speculative-draft-sink-size",)))
    return issues


def _draft_model_rules(algorithm: str, flags: Flags) -> list[Issue]:
    """The panel's hints (not a start-up check): a separate draft model, or the model's own MTP head."""
    if flags.get("speculative-draft-model-path"):
        return []
    if algorithm in NEEDS_DRAFT_MODEL:
        return [Issue("error", "speculative-draft-model-path", f"{algorithm} needs a separate draft model: "
                      "set --speculative-draft-model-path.")]
    if algorithm == "EAGLE":
        return [Issue("warning", "speculative-draft-model-path", "EAGLE without --speculative-draft-model-path "
                      "works only when the model carries its own MTP/NextN head (SGLang then drafts with the "
                      "target model); write NEXTN to say so, or set a draft model.",
                      fix={"speculative-algorithm": "NEXTN"})]
    return []


def _eagle_rules(who: str, algorithm: str, flags: Flags) -> list[Issue]:
    issues = _draft_model_rules(algorithm, flags)
    if algorithm == "STANDALONE" and attn_dp_enabled(flags):
        issues.append(Issue("error", "speculative-algorithm", f"{who} stops at start-up: Currently standalone "
                            "speculative decoding does not support dp attention."))
    adaptive = "speculative-adaptive" in flags
    has = {n: n in flags for n in TREE_FLAGS}
    steps, given_topk, draft = (int_flag(flags, n) for n in TREE_FLAGS)
    topk = 1 if given_topk is None and adaptive else given_topk
    issues.extend(_topk_rules(who, algorithm, flags, topk))
    if not has["speculative-num-steps"] and not adaptive:
        if has["speculative-eagle-topk"] or has["speculative-num-draft-tokens"]:
            present = tuple(n for n in TREE_FLAGS[1:] if has[n])
            issues.append(Issue("error", present[0], f"without --speculative-num-steps {who} chooses steps, topk "
                                "and draft tokens itself and stops at start-up (a bare AssertionError) when only "
                                "some are given; set --speculative-num-steps too (or --speculative-adaptive), or "
                                "remove " + " and ".join(f"--{n}" for n in present) + ".", remove=present))
        return issues
    if steps is None:
        if adaptive and has["speculative-num-draft-tokens"]:
            issues.append(Issue("warning", "speculative-num-draft-tokens", f"with --speculative-adaptive {who} sets "
                                "the draft tokens to steps + 1 itself; --speculative-num-draft-tokens is ignored.",
                                remove=("speculative-num-draft-tokens",)))
        return issues  # adaptive picks steps from its config, or a type error was already reported
    if has["speculative-eagle-topk"] and given_topk is None:
        return issues  # a type error was already reported
    if topk is None:
        issues.append(Issue("error", "speculative-eagle-topk", f"with --speculative-num-steps set, {who} skips "
                            "its automatic choice and stops at start-up without --speculative-eagle-topk (it "
                            "compares the missing topk with 1); 1 drafts a single chain.",
                            fix={"speculative-eagle-topk": "1", "speculative-num-draft-tokens": str(steps + 1)}))
        return issues
    if topk == 1:
        if draft != steps + 1:
            given = f"--speculative-num-draft-tokens {draft}" if draft is not None else "no --speculative-num-draft-tokens"
            issues.append(Issue("warning", "speculative-num-draft-tokens", f"with topk 1 the draft is one chain "
                                f"of {steps} tokens plus the root, so {who} overrides {given} with {steps + 1} "
                                "at startup (it logs 'speculative_num_draft_tokens is adjusted'); write "
                                f"{steps + 1} so the unit says what runs.",
                                fix={"speculative-num-draft-tokens": str(steps + 1)}))
        return issues
    if topk < 1:
        return issues  # no start-up check of 0.5.23 refuses it; the tree below needs topk > 1
    # The tree's size: srt/speculative/eagle_utils.py organize_draft_results (top num_draft_tokens - 1 of
    # topk + (steps - 1) * topk**2 candidates), not a start-up check.
    limit = topk + (steps - 1) * topk * topk + 1
    if draft is None:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"with topk {topk} {who} needs "
                            f"--speculative-num-draft-tokens (at most {limit} for {steps} steps)."))
    elif draft > limit:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"{draft} draft tokens are impossible: "
                            f"{steps} steps with topk {topk} build a tree of only {limit - 1} candidates plus "
                            f"the root, so at most {limit}.", fix={"speculative-num-draft-tokens": str(limit)}))
    return issues


def _topk_rules(who: str, algorithm: str, flags: Flags, topk: int | None) -> list[Issue]:
    """What a tree (topk > 1) needs of the attention backend and the sampling options."""
    issues: list[Issue] = []
    tree = topk is not None and topk > 1
    backends = [flags.get(n) for n in ATTENTION_FLAGS]
    if tree and "trtllm_mha" in backends:
        issues.append(Issue("error", "speculative-eagle-topk", f"{who} stops at start-up: trtllm_mha backend only "
                            "supports topk = 1 for speculative decoding.", fix={"speculative-eagle-topk": "1"}))
    page = int_flag(flags, "page-size") or 1
    backend = flags.get("attention-backend")
    if tree and page > 1 and backend not in PAGE_TREE_BACKENDS:
        text = (f"speculative_eagle_topk > 1 with page_size > 1 is only supported on {PAGE_TREE_BACKENDS}; got "
                f"attention_backend={backend!r}. Use page_size == 1 or one of those backends.")
        if backend is None:
            issues.append(Issue("warning", "page-size", f"{who} stops unless the attention backend it picks is one "
                                f"of {', '.join(PAGE_TREE_BACKENDS)}: {text}"))
        else:
            issues.append(Issue("error", "attention-backend", f"{who} stops at start-up: {text}"))
    resolved = "EAGLE" if algorithm == "NEXTN" else algorithm
    implied = "speculative-use-block-verification" in flags and resolved in ("EAGLE", "EAGLE3")
    if "speculative-use-rejection-sampling" in flags or implied:
        issues.extend(_rejection_sampling_rules(who, resolved, flags, topk, implied))
    return issues


def _rejection_sampling_rules(who: str, resolved: str, flags: Flags, topk: int | None, implied: bool) -> list[Issue]:
    """Rejection sampling, asked for or turned on by block verification (EAGLE / EAGLE3)."""
    flag = "speculative-use-rejection-sampling"
    named = "speculative-use-block-verification" if implied and flag not in flags else flag
    why = " (block verification turns rejection sampling on)" if named != flag else ""
    issues: list[Issue] = []
    if resolved not in ("EAGLE", "EAGLE3"):
        issues.append(Issue("error", flag, f"{who} stops at start-up: --speculative-use-rejection-sampling is only "
                            f"supported for EAGLE / EAGLE3 / NEXTN, not speculative_algorithm={resolved}.",
                            remove=(flag,)))
    if topk is not None and topk != 1:
        issues.append(Issue("error", named, f"{who} stops at start-up{why}: --speculative-use-rejection-sampling "
                            "requires --speculative-eagle-topk=1."))
    single = float_flag(flags, "speculative-accept-threshold-single", 1.0)
    acc = float_flag(flags, "speculative-accept-threshold-acc", 1.0)
    if single != 1.0 or acc != 1.0:
        issues.append(Issue("error", named, f"{who} stops at start-up{why}: --speculative-use-rejection-sampling is "
                            "incompatible with --speculative-accept-threshold-single / "
                            "--speculative-accept-threshold-acc; rejection sampling ignores the accept thresholds.",
                            remove=tuple(n for n in ("speculative-accept-threshold-single",
                                                     "speculative-accept-threshold-acc") if n in flags)))
    if "enable-deterministic-inference" in flags:
        issues.append(Issue("warning", named, f"{who} starts this on a CUDA (or ROCm) GPU only: off CUDA it stops "
                            "with 'Deterministic rejection sampling is currently supported only on CUDA-compatible "
                            "devices because draft proposal sampling uses a Triton hash kernel.'"))
    return issues
