"""The rules SGLang applies to the speculative-decoding flags at startup, as Issues a user can act on.

Source read (not copied): sgl-project/sglang `python/sglang/srt/arg_groups/speculative_hook.py` (2026 main):
  - the algorithm is upper-cased, NEXTN (and EAGLE) resolve to EAGLE; a plugin algorithm gets only its own
    `validate_server_args`, none of the builtin rules below;
  - `_handle_eagle_family`: unless `--speculative-adaptive`, steps unset requires topk and draft tokens unset
    (an assert) and SGLang chooses all three; "trtllm_mha backend only supports topk = 1 for speculative
    decoding."; rejection sampling only for EAGLE / EAGLE3 / NEXTN, with topk 1, thresholds 1.0 and no
    deterministic inference; topk 1 => draft tokens adjusted to steps + 1; topk > 1 with page size > 1 only on
    ("flashinfer", "fa3", "triton");
  - `_handle_dflash` / `_handle_dspark`: a draft model is required (DSpark may find one bundled in the target
    checkpoint), steps and topk are overridden to 1 with a warning, the block size fixes the draft tokens
    (DFLASH: equal, DSpark: gamma + 1);
  - `_handle_ngram`: topk comes from --speculative-ngram-max-bfs-breadth, draft tokens default to 12, topk > 1
    with page size > 1 only on flashinfer, no DP attention;
  - `--speculative-draft-window-size` warns for algorithms other than EAGLE3 and DFLASH.
  - `python/sglang/srt/speculative/eagle_utils.py` organize_draft_results: draft tokens are the top
    (num_draft_tokens - 1) of topk + (steps - 1) * topk**2 tree candidates, so more is impossible.
"""

from __future__ import annotations

from collections.abc import Mapping

from specdec_tui.core.flag_issue import Issue
from specdec_tui.core.flag_table import BUILTIN_ALGORITHMS, EAGLE_FAMILY, TREE_FLAGS

Flags = Mapping[str, str | None]

NEEDS_DRAFT_MODEL = ("EAGLE3", "STANDALONE", "DFLASH")
PAGE_TREE_BACKENDS = ("flashinfer", "fa3", "triton")
ATTENTION_FLAGS = ("attention-backend", "prefill-attention-backend", "decode-attention-backend")
NGRAM_DEFAULT_DRAFT_TOKENS = 12
NGRAM_DEFAULT_BREADTH = 10


def _int(flags: Flags, name: str) -> int | None:
    value = flags.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _float(flags: Flags, name: str, default: float) -> float | None:
    value = flags.get(name)
    try:
        return float(value) if value is not None else default
    except ValueError:
        return None


def speculative_rules(flags: Flags) -> list[Issue]:
    """Cross-flag rules for the speculative flags (names canonical, without "--")."""
    raw = flags.get("speculative-algorithm")
    algorithm = raw.upper() if raw else None
    if algorithm is None:
        spec_flags = [n for n in flags if (n.startswith("speculative-") or n == "enable-multi-layer-eagle")
                      and n != "speculative-algorithm"]
        if not spec_flags:
            return []
        names = ", ".join(f"--{n}" for n in spec_flags)
        return [Issue("warning", spec_flags[0], f"{names} do nothing without --speculative-algorithm; set an "
                      "algorithm or remove them.", remove=tuple(spec_flags))]
    resolved = "EAGLE" if algorithm == "NEXTN" else algorithm
    issues = _window_rules(resolved, flags)
    if "speculative-skip-dp-mlp-sync" in flags and resolved != "EAGLE":
        issues.append(Issue("error", "speculative-skip-dp-mlp-sync", "--speculative-skip-dp-mlp-sync is only "
                            f"supported with speculative_algorithm == EAGLE, got {resolved}.",
                            remove=("speculative-skip-dp-mlp-sync",)))
    if algorithm not in BUILTIN_ALGORITHMS:
        return issues  # a plugin's own validator decides; the name itself was checked with the value
    if algorithm == "NGRAM":
        issues.extend(_ngram_rules(flags))
    elif algorithm in ("DFLASH", "DSPARK"):
        issues.extend(_block_rules(algorithm, flags))
    elif algorithm in EAGLE_FAMILY:
        issues.extend(_eagle_rules(algorithm, flags))
    return issues


def _window_rules(resolved: str, flags: Flags) -> list[Issue]:
    issues: list[Issue] = []
    if "speculative-draft-window-size" in flags and resolved not in ("EAGLE3", "DFLASH"):
        issues.append(Issue("warning", "speculative-draft-window-size", "--speculative-draft-window-size has no "
                            f"effect with speculative_algorithm={resolved} (honored by Llama EAGLE-3 and DFLASH "
                            "only).", remove=("speculative-draft-window-size",)))
    if "speculative-draft-sink-size" in flags and "speculative-draft-window-size" not in flags:
        issues.append(Issue("warning", "speculative-draft-sink-size", "--speculative-draft-sink-size requires "
                            "--speculative-draft-window-size; alone it does nothing.",
                            remove=("speculative-draft-sink-size",)))
    return issues


def _ngram_rules(flags: Flags) -> list[Issue]:
    issues: list[Issue] = []
    if flags.get("speculative-draft-model-path"):
        issues.append(Issue("warning", "speculative-draft-model-path", "NGRAM drafts from earlier text, not from "
                            "a model; --speculative-draft-model-path is ignored.",
                            remove=("speculative-draft-model-path",)))
    if "speculative-eagle-topk" in flags:
        issues.append(Issue("warning", "speculative-eagle-topk", "with NGRAM, SGLang replaces "
                            "--speculative-eagle-topk by --speculative-ngram-max-bfs-breadth.",
                            remove=("speculative-eagle-topk",)))
    topk = _int(flags, "speculative-ngram-max-bfs-breadth") or NGRAM_DEFAULT_BREADTH
    page = _int(flags, "page-size") or 1
    backend = flags.get("attention-backend")
    if topk > 1 and page > 1 and backend != "flashinfer":
        text = (f"speculative_eagle_topk({topk}) > 1 with page_size({page}) > 1 is unstable and produces incorrect "
                "results for paged attention backends. This combination is only supported for the 'flashinfer' "
                "backend.")
        if backend is None:
            issues.append(Issue("warning", "page-size", f"SGLang stops unless it picks flashinfer itself: {text}",
                                fix={"attention-backend": "flashinfer"}))
        else:
            issues.append(Issue("error", "attention-backend", text, fix={"attention-backend": "flashinfer"}))
    draft = _int(flags, "speculative-num-draft-tokens") or NGRAM_DEFAULT_DRAFT_TOKENS
    budget = _int(flags, "speculative-ngram-external-sam-budget") or 0
    if budget > draft - 1:
        issues.append(Issue("error", "speculative-ngram-external-sam-budget", "--speculative-ngram-external-sam-budget"
                            " must be less than or equal to --speculative-num-draft-tokens - 1 "
                            f"({draft - 1})."))
    if "enable-dp-attention" in flags:
        issues.append(Issue("error", "enable-dp-attention", "Currently ngram speculative decoding does not support "
                            "dp attention."))
    return issues


def _block_rules(algorithm: str, flags: Flags) -> list[Issue]:
    """DFLASH and DSPARK: one draft block verified per step, so steps and topk are 1 whatever the unit says."""
    label = "DFLASH" if algorithm == "DFLASH" else "DSpark"
    issues: list[Issue] = []
    if not flags.get("speculative-draft-model-path"):
        if algorithm == "DFLASH":
            issues.append(Issue("error", "speculative-draft-model-path", "DFLASH speculative decoding requires "
                                "setting --speculative-draft-model-path."))
        else:
            issues.append(Issue("warning", "speculative-draft-model-path", "DSpark needs "
                                "--speculative-draft-model-path unless the target checkpoint bundles a DSpark draft "
                                "(SGLang then drafts from --model-path; otherwise it stops at startup)."))
    for flag, field in (("speculative-num-steps", "speculative_num_steps"),
                        ("speculative-eagle-topk", "speculative_eagle_topk")):
        value = _int(flags, flag)
        if value is not None and value != 1:
            issues.append(Issue("warning", flag, f"{label} only supports {field} == 1; overriding {field}={value} "
                                "to 1 (SGLang logs this at startup); write 1 so the unit says what runs.",
                                fix={flag: "1"}))
    block_flag = f"speculative-{algorithm.lower()}-block-size"
    block, draft = _int(flags, block_flag), _int(flags, "speculative-num-draft-tokens")
    if block is not None and draft is not None:
        want = block if algorithm == "DFLASH" else block + 1
        if draft != want and algorithm == "DFLASH":
            issues.append(Issue("error", "speculative-num-draft-tokens", "Both --speculative-num-draft-tokens and "
                                "--speculative-dflash-block-size are set but they differ. For DFLASH they must "
                                f"match. speculative_num_draft_tokens={draft}, speculative_dflash_block_size="
                                f"{block}.", fix={"speculative-num-draft-tokens": str(want)}))
        elif draft != want:
            issues.append(Issue("error", "speculative-num-draft-tokens", "DSpark speculative_num_draft_tokens must "
                                f"equal gamma + 1 (= {want} for gamma={block}), but got "
                                f"speculative_num_draft_tokens={draft}.",
                                fix={"speculative-num-draft-tokens": str(want)}))
    if algorithm == "DSPARK" and draft is not None and draft < 2:
        issues.append(Issue("error", "speculative-num-draft-tokens", "DSpark speculative_num_draft_tokens must be "
                            f">= 2 (= gamma + 1), got {draft}."))
    if algorithm == "DFLASH" and "enable-dp-attention" in flags:
        issues.append(Issue("error", "enable-dp-attention", "Currently DFLASH speculative decoding does not "
                            "support dp attention."))
    return issues


def _draft_model_rules(algorithm: str, flags: Flags) -> list[Issue]:
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


def _eagle_rules(algorithm: str, flags: Flags) -> list[Issue]:
    issues = _draft_model_rules(algorithm, flags)
    adaptive = "speculative-adaptive" in flags
    has = {n: n in flags for n in TREE_FLAGS}
    steps, given_topk, draft = (_int(flags, n) for n in TREE_FLAGS)
    topk = 1 if given_topk is None and adaptive else given_topk
    issues.extend(_topk_rules(algorithm, flags, topk))
    if not has["speculative-num-steps"] and not adaptive:
        if has["speculative-eagle-topk"] or has["speculative-num-draft-tokens"]:
            present = tuple(n for n in TREE_FLAGS[1:] if has[n])
            issues.append(Issue("error", present[0], "without --speculative-num-steps SGLang chooses steps, topk "
                                "and draft tokens itself and refuses to start when only some are given; set "
                                "--speculative-num-steps too (or --speculative-adaptive), or remove "
                                + " and ".join(f"--{n}" for n in present) + ".", remove=present))
        return issues
    if steps is None:
        if adaptive and has["speculative-num-draft-tokens"]:
            issues.append(Issue("warning", "speculative-num-draft-tokens", "with --speculative-adaptive SGLang sets "
                                "the draft tokens to steps + 1 itself; --speculative-num-draft-tokens is ignored.",
                                remove=("speculative-num-draft-tokens",)))
        return issues  # adaptive picks steps from its config, or a type error was already reported
    if has["speculative-eagle-topk"] and given_topk is None:
        return issues  # a type error was already reported
    if topk is None:
        issues.append(Issue("error", "speculative-eagle-topk", "with --speculative-num-steps set, SGLang skips "
                            "its automatic choice and needs --speculative-eagle-topk as well (1 drafts a single "
                            "chain).", fix={"speculative-eagle-topk": "1",
                                            "speculative-num-draft-tokens": str(steps + 1)}))
        return issues
    if topk == 1:
        if draft != steps + 1:
            given = f"--speculative-num-draft-tokens {draft}" if draft is not None else "no --speculative-num-draft-tokens"
            issues.append(Issue("warning", "speculative-num-draft-tokens", f"with topk 1 the draft is one chain "
                                f"of {steps} tokens plus the root, so SGLang overrides {given} with {steps + 1} "
                                "at startup (it logs 'speculative_num_draft_tokens is adjusted'); write "
                                f"{steps + 1} so the unit says what runs.",
                                fix={"speculative-num-draft-tokens": str(steps + 1)}))
        return issues
    limit = topk + (steps - 1) * topk * topk + 1
    if draft is None:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"with topk {topk} SGLang needs "
                            f"--speculative-num-draft-tokens (at most {limit} for {steps} steps)."))
    elif draft > limit:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"{draft} draft tokens are impossible: "
                            f"{steps} steps with topk {topk} build a tree of only {limit - 1} candidates plus "
                            f"the root, so at most {limit}.", fix={"speculative-num-draft-tokens": str(limit)}))
    return issues


def _topk_rules(algorithm: str, flags: Flags, topk: int | None) -> list[Issue]:
    """What a tree (topk > 1) needs of the attention backend and the sampling options."""
    issues: list[Issue] = []
    tree = topk is not None and topk > 1
    backends = [flags.get(n) for n in ATTENTION_FLAGS]
    if tree and "trtllm_mha" in backends:
        issues.append(Issue("error", "speculative-eagle-topk", "trtllm_mha backend only supports topk = 1 for "
                            "speculative decoding.", fix={"speculative-eagle-topk": "1"}))
    page = _int(flags, "page-size") or 1
    backend = flags.get("attention-backend")
    if tree and page > 1 and backend not in PAGE_TREE_BACKENDS:
        text = (f"speculative_eagle_topk > 1 with page_size > 1 is only supported on {PAGE_TREE_BACKENDS}; got "
                f"attention_backend={backend!r}. Use page_size == 1 or one of those backends.")
        if backend is None:
            issues.append(Issue("warning", "page-size", "SGLang stops unless the attention backend it picks is one "
                                f"of {', '.join(PAGE_TREE_BACKENDS)}: {text}"))
        else:
            issues.append(Issue("error", "attention-backend", text))
    if "speculative-use-block-verification" in flags and tree:
        issues.append(Issue("error", "speculative-use-block-verification", "--speculative-use-block-verification "
                            "requires --speculative-eagle-topk=1."))
    if "speculative-use-rejection-sampling" in flags:
        issues.extend(_rejection_sampling_rules(algorithm, flags, topk))
    return issues


def _rejection_sampling_rules(algorithm: str, flags: Flags, topk: int | None) -> list[Issue]:
    flag = "speculative-use-rejection-sampling"
    resolved = "EAGLE" if algorithm == "NEXTN" else algorithm
    issues: list[Issue] = []
    if resolved not in ("EAGLE", "EAGLE3"):
        issues.append(Issue("error", flag, "--speculative-use-rejection-sampling is only supported for EAGLE / "
                            f"EAGLE3 / NEXTN, not speculative_algorithm={resolved}.", remove=(flag,)))
    if topk is not None and topk != 1:
        issues.append(Issue("error", flag, "--speculative-use-rejection-sampling requires "
                            "--speculative-eagle-topk=1."))
    single = _float(flags, "speculative-accept-threshold-single", 1.0)
    acc = _float(flags, "speculative-accept-threshold-acc", 1.0)
    if single != 1.0 or acc != 1.0:
        issues.append(Issue("error", flag, "--speculative-use-rejection-sampling is incompatible with "
                            "--speculative-accept-threshold-single / --speculative-accept-threshold-acc; rejection "
                            "sampling ignores the accept thresholds.",
                            remove=tuple(n for n in ("speculative-accept-threshold-single",
                                                     "speculative-accept-threshold-acc") if n in flags)))
    if "enable-deterministic-inference" in flags:
        issues.append(Issue("error", flag, "--speculative-use-rejection-sampling is incompatible with "
                            "--enable-deterministic-inference; the sampling kernel draws coins from the global RNG "
                            "and is not batch-invariant."))
    return issues
