"""Start-up checks of NGRAM, DFLASH and DSPARK, as Issues (ported, facts not code, from SGLang 0.5.23
`srt/arg_groups/speculative_hook.py` `_handle_ngram`, `_handle_dflash`, `_handle_dspark`).

The device checks (NGRAM: CUDA, CPU or XPU; DFLASH / DSPARK: CUDA, NPU or XPU) hold on the panel's CUDA hosts and
are not repeated; checks that need the model's config (DFLASH's block size read from the draft, DSpark's bundled
draft) or environment variables are left to SGLang. `who` names the release whose checks speak.
"""

from __future__ import annotations

from specdec_tui.core.flag_issue import Issue
from specdec_tui.core.flag_rules_values import Flags, attn_dp_enabled, int_flag

NGRAM_DEFAULT_DRAFT_TOKENS = 12
NGRAM_DEFAULT_BREADTH = 10


def ngram_rules(who: str, flags: Flags) -> list[Issue]:
    issues: list[Issue] = []
    if flags.get("speculative-draft-model-path"):
        issues.append(Issue("warning", "speculative-draft-model-path", "NGRAM drafts from earlier text, not from "
                            "a model; --speculative-draft-model-path is ignored.",
                            remove=("speculative-draft-model-path",)))
    if "speculative-eagle-topk" in flags:
        issues.append(Issue("warning", "speculative-eagle-topk", f"with NGRAM, {who} replaces "
                            "--speculative-eagle-topk by --speculative-ngram-max-bfs-breadth.",
                            remove=("speculative-eagle-topk",)))
    topk = int_flag(flags, "speculative-ngram-max-bfs-breadth") or NGRAM_DEFAULT_BREADTH
    page = int_flag(flags, "page-size") or 1
    backend = flags.get("attention-backend")
    if topk > 1 and page > 1 and backend != "flashinfer":
        text = (f"speculative_eagle_topk({topk}) > 1 with page_size({page}) > 1 is unstable and produces incorrect "
                "results for paged attention backends. This combination is only supported for the 'flashinfer' "
                "backend.")
        if backend is None:
            issues.append(Issue("warning", "page-size", f"{who} stops unless it picks flashinfer itself: {text}",
                                fix={"attention-backend": "flashinfer"}))
        else:
            issues.append(Issue("error", "attention-backend", f"{who} stops at start-up: {text}",
                                fix={"attention-backend": "flashinfer"}))
    if "speculative-ngram-external-corpus-path" in flags:
        issues.extend(_corpus_rules(who, flags))
    if attn_dp_enabled(flags):
        issues.append(Issue("error", "speculative-algorithm", f"{who} stops at start-up: Currently ngram speculative "
                            "decoding does not support dp attention."))
    return issues


def _corpus_rules(who: str, flags: Flags) -> list[Issue]:
    """Only with an external corpus: its SAM budget (default 0) must be positive and fit in the draft."""
    draft = int_flag(flags, "speculative-num-draft-tokens") or NGRAM_DEFAULT_DRAFT_TOKENS
    budget = int_flag(flags, "speculative-ngram-external-sam-budget") or 0
    max_tokens = int_flag(flags, "speculative-ngram-external-corpus-max-tokens")
    flag = "speculative-ngram-external-sam-budget"
    if budget <= 0:
        return [Issue("error", flag, f"{who} stops at start-up: --speculative-ngram-external-sam-budget must be "
                      "positive when --speculative-ngram-external-corpus-path is set.")]
    if max_tokens is not None and max_tokens <= 0:
        return [Issue("error", "speculative-ngram-external-corpus-max-tokens", f"{who} stops at start-up: "
                      "--speculative-ngram-external-corpus-max-tokens must be positive when "
                      "--speculative-ngram-external-corpus-path is set.")]
    if budget > draft - 1:
        return [Issue("error", flag, f"{who} stops at start-up: speculative_ngram_external_sam_budget must be less "
                      f"than or equal to speculative_num_draft_tokens - 1 ({draft - 1}).")]
    return []


def block_rules(who: str, algorithm: str, flags: Flags) -> list[Issue]:
    """DFLASH and DSPARK: one draft block verified per step, so steps and topk are 1 whatever the unit says."""
    label = "DFLASH" if algorithm == "DFLASH" else "DSpark"
    issues = _block_parallel_rules(who, algorithm, flags)
    if not flags.get("speculative-draft-model-path"):
        if algorithm == "DFLASH":
            issues.append(Issue("error", "speculative-draft-model-path", f"{who} stops at start-up: DFLASH "
                                "speculative decoding requires setting --speculative-draft-model-path."))
        else:
            issues.append(Issue("warning", "speculative-draft-model-path", f"DSpark needs "
                                "--speculative-draft-model-path unless the target checkpoint bundles a DSpark draft "
                                f"({who} then drafts from --model-path; otherwise it stops at startup)."))
    for flag, field in (("speculative-num-steps", "speculative_num_steps"),
                        ("speculative-eagle-topk", "speculative_eagle_topk")):
        value = int_flag(flags, flag)
        if value is not None and value != 1:
            issues.append(Issue("warning", flag, f"{label} only supports {field} == 1; overriding {field}={value} "
                                f"to 1 ({who} logs this at startup); write 1 so the unit says what runs.",
                                fix={flag: "1"}))
    block_flag = f"speculative-{algorithm.lower()}-block-size"
    block, draft = int_flag(flags, block_flag), int_flag(flags, "speculative-num-draft-tokens")
    if algorithm == "DFLASH":
        issues.extend(_dflash_block_rules(who, flags, block, draft))
    elif block is not None and draft is not None and draft != block + 1:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"{who} stops at start-up: DSpark "
                            f"speculative_num_draft_tokens must equal gamma + 1 (= {block + 1} for gamma={block}), "
                            f"but got speculative_num_draft_tokens={draft}.",
                            fix={"speculative-num-draft-tokens": str(block + 1)}))
    if algorithm == "DSPARK" and draft is not None and draft < 2:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"{who} stops at start-up: DSpark "
                            f"speculative_num_draft_tokens must be >= 2 (= gamma + 1), got {draft}."))
    return issues


def _dflash_block_rules(who: str, flags: Flags, block: int | None, draft: int | None) -> list[Issue]:
    issues: list[Issue] = []
    if block is not None and block <= 0:
        issues.append(Issue("error", "speculative-dflash-block-size", f"{who} stops at start-up: DFLASH requires "
                            f"--speculative-dflash-block-size to be positive, got {block}."))
    elif block is not None and draft is not None and draft != block:
        issues.append(Issue("error", "speculative-num-draft-tokens", f"{who} stops at start-up: Both "
                            "--speculative-num-draft-tokens and --speculative-dflash-block-size are set but they "
                            f"differ. For DFLASH they must match. speculative_num_draft_tokens={draft}, "
                            f"speculative_dflash_block_size={block}.", fix={"speculative-num-draft-tokens": str(block)}))
    tokens = block if block is not None and block > 0 else draft
    window = int_flag(flags, "speculative-draft-window-size")
    if window is not None and window > 0 and tokens is not None and window < tokens:
        issues.append(Issue("error", "speculative-draft-window-size", f"{who} stops at start-up: "
                            "--speculative-draft-window-size must be >= --speculative-num-draft-tokens (block_size). "
                            f"window_size={window}, block_size={tokens}.",
                            fix={"speculative-draft-window-size": str(tokens)}))
    return issues


def _block_parallel_rules(who: str, algorithm: str, flags: Flags) -> list[Issue]:
    """Attention DP and pipeline parallelism: what DFLASH (and DSpark, the lm-head part) need of them."""
    issues: list[Issue] = []
    label = "DFLASH" if algorithm == "DFLASH" else "DSpark"
    if attn_dp_enabled(flags):
        if "enable-dp-lm-head" not in flags:
            issues.append(Issue("error", "enable-dp-lm-head", f"{who} stops at start-up: {label} with dp attention "
                                "requires --enable-dp-lm-head.", fix={"enable-dp-lm-head": None}))
        cp = int_flag(flags, "attn-cp-size") or 1
        if algorithm == "DFLASH" and cp != 1:
            issues.append(Issue("error", "attn-cp-size", f"{who} stops at start-up: DFLASH with dp attention does "
                                "not support context parallel."))
        elif cp > 1:
            issues.append(Issue("error", "attn-cp-size", f"{who} stops at start-up: DSpark with dp attention does "
                                f"not support context parallel (attn_cp_size={cp})."))
    if algorithm == "DFLASH" and (int_flag(flags, "pp-size") or 1) != 1:
        issues.append(Issue("error", "pp-size", f"{who} stops at start-up: Currently DFLASH speculative decoding "
                            "only supports pp_size == 1."))
    return issues
