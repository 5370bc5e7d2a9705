"""Rules for the capacity flags: memory fraction, the per-phase CUDA graphs, and what SGLang needs to start.

Source read (not copied), sgl-project/sglang:
  - `python/sglang/srt/model_executor/cuda_graph_config.py`: `parse_cuda_graph_config_arg` (the JSON of
    --cuda-graph-config: an object of phases "decode"/"prefill", each an object of ALLOWED_KEYS_PER_PHASE) and its
    ArgumentTypeError texts. The newest copy allows "full" for prefill ("Opt-in: the padding waste is the
    operator's call") and the prefill keys full_prefill_max_req / full_prefill_prefix_chunk_tokens; an earlier
    copy (same flags) rejected full for prefill ("full is decode-only").
  - `python/sglang/srt/arg_groups/cuda_graph_hook.py` parse_cuda_graph_config: precedence JSON > per-phase
    flags > --disable-{phase}-cuda-graph > legacy --disable-cuda-graph > defaults.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from specdec_tui.core.flag_issue import Issue

Flags = Mapping[str, str | None]

PHASES = ("decode", "prefill")
PHASE_KEYS = {
    "decode": ("backend", "max_bs", "bs", "tc_compiler"),
    "prefill": ("backend", "max_bs", "bs", "tc_compiler", "full_prefill_max_req", "full_prefill_prefix_chunk_tokens"),
}
DECODE_SIZE_FLAGS = ("cuda-graph-max-bs", "cuda-graph-bs", "cuda-graph-max-bs-decode", "cuda-graph-bs-decode")


def cuda_graph_config_error(raw: str) -> str | None:
    """SGLang's argparse error for a --cuda-graph-config value, or None when SGLang accepts it."""
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as e:
        return f"--cuda-graph-config must be JSON: {e}"
    if not isinstance(parsed, dict):
        return f"--cuda-graph-config must be a JSON object, got {type(parsed).__name__}"
    for phase, settings in parsed.items():
        if phase not in PHASES:
            return f"--cuda-graph-config: unknown phase '{phase}', expected one of {PHASES}"
        if not isinstance(settings, dict):
            return f"--cuda-graph-config['{phase}'] must be a JSON object, got {type(settings).__name__}"
        for key in settings:
            if key not in PHASE_KEYS[phase]:
                return f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of {PHASE_KEYS[phase]}"
    return None


def _json_phases(flags: Flags) -> dict[str, dict[str, Any]]:
    raw = flags.get("cuda-graph-config")
    if raw is None or cuda_graph_config_error(raw) is not None:
        return {}
    parsed: dict[str, dict[str, Any]] = json.loads(raw)
    return parsed


def _ints(text: str | None) -> list[int] | None:
    try:
        return [int(part) for part in text.split()] if text else None
    except ValueError:
        return None


def graph_phase_settings(flags: Flags) -> dict[str, dict[str, Any]]:
    """Per phase, the CUDA-graph settings the unit's flags set (backend, max_bs, bs; a key is absent when SGLang's
    default applies), by SGLang's precedence: --cuda-graph-config JSON > --cuda-graph-{backend,max-bs,bs}-{phase} >
    --disable-{phase}-cuda-graph > the deprecated --disable-cuda-graph. `flags` holds canonical names; the
    deprecated --cuda-graph-max-bs/--cuda-graph-bs stand for the decode flags they alias."""
    settings: dict[str, dict[str, Any]] = {phase: {} for phase in PHASES}
    for phase in PHASES:
        current = settings[phase]
        if "disable-cuda-graph" in flags or f"disable-{phase}-cuda-graph" in flags:
            current["backend"] = "disabled"
        if flags.get(f"cuda-graph-backend-{phase}"):
            current["backend"] = flags[f"cuda-graph-backend-{phase}"]
        legacy = phase == "decode"
        max_bs = flags.get(f"cuda-graph-max-bs-{phase}") or (flags.get("cuda-graph-max-bs") if legacy else None)
        if max_bs is not None and max_bs.isdigit():
            current["max_bs"] = int(max_bs)
        sizes = _ints(flags.get(f"cuda-graph-bs-{phase}") or (flags.get("cuda-graph-bs") if legacy else None))
        if sizes:
            current["bs"] = sizes
        current.update(_json_phases(flags).get(phase, {}))
    return settings


def capacity_rules(flags: Flags) -> list[Issue]:
    """Cross-flag rules for the capacity flags (names canonical, without "--")."""
    issues: list[Issue] = []
    try:
        fraction = float(flags["mem-fraction-static"] or "")
    except (KeyError, ValueError):
        fraction = None
    if fraction is not None and 0.95 < fraction < 1:
        issues.append(Issue("warning", "mem-fraction-static", f"--mem-fraction-static {fraction:g} leaves little "
                            "memory for activations and CUDA graphs; startup or the first large batch may run "
                            "out of memory."))
    phases = graph_phase_settings(flags)
    sizes = tuple(n for n in DECODE_SIZE_FLAGS if n in flags)
    if sizes and phases["decode"].get("backend") == "disabled":
        issues.append(Issue("warning", sizes[0], "decode CUDA graph batch sizes do nothing while the decode CUDA "
                            "graph is disabled.", remove=sizes))
    if phases["prefill"].get("backend") == "full":
        json_backend = "backend" in _json_phases(flags).get("prefill", {})
        where = "cuda-graph-config" if json_backend else "cuda-graph-backend-prefill"
        issues.append(Issue("warning", where, "a full prefill CUDA graph is opt-in in current SGLang (each batch is "
                            "padded up to a captured token bucket) and SGLang releases from before it took full as "
                            "decode-only and refuse it; breakable, tc_piecewise and disabled work on both."))
    if "model-path" not in flags:
        issues.append(Issue("error", "model-path", "SGLang needs --model-path (or --model) to start."))
    return issues
