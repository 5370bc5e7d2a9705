"""SGLang's post-parse rules for speculative decoding, applied to the sim's parsed flags with SGLang's log lines.

Source read (not copied): sgl-project/sglang `python/sglang/srt/arg_groups/speculative_hook.py` (2026 main):
handle_speculative_decoding (revision "main" for a draft path, the name upper-cased, NEXTN/EAGLE -> EAGLE,
the draft-window warning, adaptive), _handle_eagle_family (48 reset, steps/topk/draft-token auto choice by
architecture, the topk == 1 adjustment), _handle_dflash, _handle_dspark, _handle_ngram, and
_auto_choose_speculative_params: STANDALONE (3, 1, 4); LlamaForCausalLM (5, 4, 8); Grok1ForCausalLM and
Grok1VForCausalLM (5, 4, 8); everything else (3, 1, 4). DEFAULT_DSPARK_GAMMA = 7 is from
`python/sglang/srt/speculative/dspark_components/dspark_config.py`.

SGLang stops with a ValueError (or an AssertionError) for a command line these rules refuse; `resolve_speculative`
returns that exception's last traceback line instead, for the caller to print and exit 1 with.
"""

from __future__ import annotations

import argparse

from specdec_tui.core.flag_table import BUILTIN_ALGORITHMS
from specdec_tui.sim.adaptive import AdaptiveConfigError, candidate_steps
from specdec_tui.sim.profiles import profile_for

MSG_MAX_RUNNING_48 = (
    "Max running requests is reset to 48 for speculative decoding. "
    "You can override this by explicitly setting --max-running-requests."
)
MSG_DRAFT_TOKENS_ADJUSTED = (
    "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
)
MSG_NGRAM_DRAFT_TOKENS = (
    "speculative_num_draft_tokens is set to 12 by default for ngram speculative decoding. "
    "You can override this by explicitly setting --speculative-num-draft-tokens."
)
MSG_NGRAM_MIXED_CHUNK = "The mixed chunked prefill are disabled because of using ngram speculative decoding."
DFLASH_DEFAULT_BLOCK = 16
DSPARK_DEFAULT_GAMMA = 7
AUTO_TREE = {"LlamaForCausalLM": (5, 4, 8), "Grok1ForCausalLM": (5, 4, 8), "Grok1VForCausalLM": (5, 4, 8)}
AUTO_CHAIN = (3, 1, 4)


def model_architecture(model_path: str) -> str:
    """The architecture the sim pretends the checkpoint has: Grok when the path says so (so the auto choice can
    be rehearsed), otherwise its profile's (sim/profiles.py)."""
    if "grok" in model_path.lower():
        return "Grok1ForCausalLM"
    return profile_for(model_path).profile.architecture


def auto_tree(algorithm: str, architecture: str) -> tuple[int, int, int]:
    """SGLang's (steps, topk, draft tokens) when the unit leaves all three to it."""
    return AUTO_CHAIN if algorithm == "STANDALONE" else AUTO_TREE.get(architecture, AUTO_CHAIN)


def _reset_max_running(ns: argparse.Namespace, warnings: list[str]) -> None:
    if ns.max_running_requests is None:
        ns.max_running_requests = 48
        warnings.append(MSG_MAX_RUNNING_48)


def _disable_mixed_chunk(ns: argparse.Namespace, warnings: list[str], using: str) -> None:
    if ns.enable_mixed_chunk:
        ns.enable_mixed_chunk = False
        warnings.append(f"Mixed chunked prefill is disabled because of using {using} speculative decoding.")


def _force_one(ns: argparse.Namespace, warnings: list[str], label: str) -> None:
    """DFLASH/DSpark verify one block per step: steps and topk are 1 whatever the command line says."""
    for field in ("speculative_num_steps", "speculative_eagle_topk"):
        value = getattr(ns, field)
        if value is not None and int(value) != 1:
            warnings.append(f"{label} only supports {field} == 1; overriding {field}={value} to 1.")
        setattr(ns, field, 1)


def resolve_speculative(ns: argparse.Namespace, warnings: list[str]) -> str | None:
    """Applies the rules in place, appending SGLang's warnings; returns SGLang's error line when it would stop."""
    if ns.speculative_draft_model_path is not None and ns.speculative_draft_model_revision is None:
        ns.speculative_draft_model_revision = "main"
    if ns.speculative_algorithm is None:
        return None
    given = ns.speculative_algorithm
    algorithm = given.upper()
    ns.speculative_algorithm = "EAGLE" if algorithm in ("NEXTN", "EAGLE") else algorithm
    if ns.speculative_draft_window_size is not None:
        if ns.speculative_draft_window_size <= 0:
            return f"ValueError: --speculative-draft-window-size must be positive, got {ns.speculative_draft_window_size}."
        if ns.speculative_algorithm not in ("EAGLE3", "DFLASH"):
            warnings.append("--speculative-draft-window-size has no effect with speculative_algorithm="
                            f"{ns.speculative_algorithm} (honored by Llama EAGLE-3 and DFLASH only).")
    if algorithm not in BUILTIN_ALGORITHMS:
        return f"ValueError: Unknown speculative algorithm name: {given}"  # the sim loads no plugins
    if ns.speculative_adaptive:
        failure = _adaptive(ns, warnings)
        if failure is not None:
            return failure
    if algorithm == "DFLASH":
        return _dflash(ns, warnings)
    if algorithm == "DSPARK":
        return _dspark(ns, warnings)
    if algorithm == "NGRAM":
        return _ngram(ns, warnings)
    if algorithm in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE"):
        return _eagle_family(ns, warnings)
    _reset_max_running(ns, warnings)  # FROZEN_KV_MTP; UNO's own handler is not simulated
    return None


def _adaptive(ns: argparse.Namespace, warnings: list[str]) -> str | None:
    """upstream: speculative_hook.py `_maybe_disable_adaptive` (the unsupported cases it can judge from flags)
    and `_init_adaptive_speculative_params` (topk 1, the middle candidate, steps + 1 draft tokens)."""
    reason = None
    if ns.speculative_algorithm not in ("EAGLE", "EAGLE3"):
        reason = f"speculative_algorithm={ns.speculative_algorithm} (only EAGLE/EAGLE3 are supported)"
    elif ns.speculative_eagle_topk is not None and ns.speculative_eagle_topk != 1:
        reason = f"speculative_eagle_topk={ns.speculative_eagle_topk} (only topk=1 is supported)"
    if reason is not None:
        warnings.append(f"speculative_adaptive disabled: {reason}. Falling back to static speculative params.")
        ns.speculative_adaptive = False
        return None
    try:
        candidates = candidate_steps(ns.speculative_adaptive_config)
    except AdaptiveConfigError as err:
        return str(err)
    if ns.speculative_eagle_topk is None:
        ns.speculative_eagle_topk = 1
    if ns.speculative_num_steps is None:
        ns.speculative_num_steps = candidates[len(candidates) // 2]
    if ns.speculative_num_steps not in candidates:
        return (f"ValueError: --speculative-num-steps={ns.speculative_num_steps} is not in the adaptive config "
                f"candidate_steps {candidates}. Pass one of those values.")
    ns.speculative_num_draft_tokens = ns.speculative_num_steps + 1
    return None


def _eagle_family(ns: argparse.Namespace, warnings: list[str]) -> str | None:
    _reset_max_running(ns, warnings)
    _disable_mixed_chunk(ns, warnings, "eagle")
    if ns.speculative_draft_model_path is None:
        ns.speculative_draft_model_path = ns.model_path  # the MTP head ships inside the target checkpoint
    if ns.speculative_num_steps is None:
        if not ns.speculative_adaptive and (ns.speculative_eagle_topk is not None
                                            or ns.speculative_num_draft_tokens is not None):
            return "AssertionError"
        steps, topk, draft = auto_tree(ns.speculative_algorithm, model_architecture(ns.model_path))
        ns.speculative_num_steps = steps
        if not ns.speculative_adaptive:
            ns.speculative_eagle_topk, ns.speculative_num_draft_tokens = topk, draft
    if ns.speculative_eagle_topk is None:
        return "TypeError: '>' not supported between instances of 'NoneType' and 'int'"
    if ns.speculative_use_rejection_sampling and ns.speculative_eagle_topk != 1:
        return "ValueError: --speculative-use-rejection-sampling requires --speculative-eagle-topk=1."
    if ns.speculative_eagle_topk == 1 and ns.speculative_num_draft_tokens != ns.speculative_num_steps + 1:
        warnings.append(MSG_DRAFT_TOKENS_ADJUSTED)
        ns.speculative_num_draft_tokens = ns.speculative_num_steps + 1
    return None


def _dflash(ns: argparse.Namespace, warnings: list[str]) -> str | None:
    if ns.speculative_draft_model_path is None:
        return "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path."
    _force_one(ns, warnings, "DFLASH")
    block = ns.speculative_dflash_block_size
    if block is not None:
        if ns.speculative_num_draft_tokens is not None and ns.speculative_num_draft_tokens != block:
            return ("ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but "
                    "they differ. For DFLASH they must match. speculative_num_draft_tokens="
                    f"{ns.speculative_num_draft_tokens}, speculative_dflash_block_size={block}.")
        ns.speculative_num_draft_tokens = block
    if ns.speculative_num_draft_tokens is None:
        ns.speculative_num_draft_tokens = DFLASH_DEFAULT_BLOCK  # the sim's draft has no block_size to read
        warnings.append(f"speculative_num_draft_tokens is not set; defaulting to {DFLASH_DEFAULT_BLOCK} for DFLASH.")
    _reset_max_running(ns, warnings)
    _disable_mixed_chunk(ns, warnings, "dflash")
    return None


def _dspark(ns: argparse.Namespace, warnings: list[str]) -> str | None:
    if ns.speculative_draft_model_path is None:  # the sim's checkpoint bundles no DSpark draft
        return "ValueError: DSpark dense speculative decoding requires setting --speculative-draft-model-path."
    _force_one(ns, warnings, "DSpark")
    gamma = ns.speculative_dspark_block_size
    if gamma is None and ns.speculative_num_draft_tokens is None:
        gamma = DSPARK_DEFAULT_GAMMA
        warnings.append(f"DSpark gamma is not set; defaulting to {gamma}.")
    if gamma is not None:
        window = gamma + 1
        if ns.speculative_num_draft_tokens is not None and ns.speculative_num_draft_tokens != window:
            return (f"ValueError: DSpark speculative_num_draft_tokens must equal gamma + 1 (= {window} for "
                    f"gamma={gamma}), but got speculative_num_draft_tokens={ns.speculative_num_draft_tokens}.")
        ns.speculative_num_draft_tokens = window
    if ns.speculative_num_draft_tokens < 2:
        return ("ValueError: DSpark speculative_num_draft_tokens must be >= 2 (= gamma + 1), "
                f"got {ns.speculative_num_draft_tokens}.")
    _reset_max_running(ns, warnings)
    _disable_mixed_chunk(ns, warnings, "dspark")
    return None


def _ngram(ns: argparse.Namespace, warnings: list[str]) -> str | None:
    _reset_max_running(ns, warnings)
    ns.enable_mixed_chunk = False
    ns.speculative_eagle_topk = ns.speculative_ngram_max_bfs_breadth
    if ns.speculative_num_draft_tokens is None:
        ns.speculative_num_draft_tokens = 12
        warnings.append(MSG_NGRAM_DRAFT_TOKENS)
    if ns.speculative_num_steps is None:
        ns.speculative_num_steps = ns.speculative_num_draft_tokens // ns.speculative_eagle_topk
    warnings.append(MSG_NGRAM_MIXED_CHUNK)
    return None
