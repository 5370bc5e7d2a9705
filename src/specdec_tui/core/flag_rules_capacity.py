"""Rules for the capacity flags: memory fraction and the per-phase CUDA graphs.

The value of --cuda-graph-config is checked by the release's own argparse type (core/sglang_schema/arg_types.py,
0.5.23's `parse_cuda_graph_config_arg`); this reads the settings it gives.
Source read (not copied), SGLang 0.5.23 `srt/arg_groups/cuda_graph_hook.py` parse_cuda_graph_config: precedence
JSON > per-phase flags > --disable-{phase}-cuda-graph > the deprecated --disable-cuda-graph > defaults.
and its `validate_cuda_graph_config` (the backends a phase allows: the argparse choices already hold them), the
warning for a full prefill graph and `_resolve_max_context_size` (--cuda-graph-prefill-max-context must be > 0);
`attention_hook.py`: the Flex Attention backend refuses speculative decoding (an assert).
The memory warning is the panel's own hint, not a start-up check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from specdec_tui.core.flag_issue import Issue
from specdec_tui.core.flag_rules import checks_of

Flags = Mapping[str, str | None]

PHASES = ("decode", "prefill")
DECODE_SIZE_FLAGS = ("cuda-graph-max-bs-decode", "cuda-graph-bs-decode")


def _json_phases(flags: Flags) -> dict[str, dict[str, Any]]:
    raw = flags.get("cuda-graph-config")
    try:
        parsed = json.loads(raw) if raw is not None else {}
    except ValueError:
        return {}
    return {k: v for k, v in parsed.items() if isinstance(v, dict)} if isinstance(parsed, dict) else {}


def _ints(text: str | None) -> list[int] | None:
    try:
        return [int(part) for part in text.split()] if text else None
    except ValueError:
        return None


def graph_phase_settings(flags: Flags) -> dict[str, dict[str, Any]]:
    """Per phase, the CUDA-graph settings the unit's flags set (backend, max_bs, bs; a key is absent when SGLang's
    default applies), by SGLang's precedence: --cuda-graph-config JSON > --cuda-graph-{backend,max-bs,bs}-{phase} >
    --disable-{phase}-cuda-graph > the deprecated --disable-cuda-graph. `flags` holds canonical names."""
    settings: dict[str, dict[str, Any]] = {phase: {} for phase in PHASES}
    for phase in PHASES:
        current = settings[phase]
        if "disable-cuda-graph" in flags or f"disable-{phase}-cuda-graph" in flags:
            current["backend"] = "disabled"
        if flags.get(f"cuda-graph-backend-{phase}"):
            current["backend"] = flags[f"cuda-graph-backend-{phase}"]
        max_bs = flags.get(f"cuda-graph-max-bs-{phase}")
        if max_bs is not None and max_bs.isdigit():
            current["max_bs"] = int(max_bs)
        sizes = _ints(flags.get(f"cuda-graph-bs-{phase}"))
        if sizes:
            current["bs"] = sizes
        current.update(_json_phases(flags).get(phase, {}))
    return settings


def capacity_rules(flags: Flags, release: str = "0.5.23") -> list[Issue]:
    """Cross-flag rules for the capacity flags (names canonical, without "--")."""
    who = f"SGLang {checks_of(release)}"
    issues: list[Issue] = _startup_checks(who, flags)
    try:
        fraction = float(flags["mem-fraction-static"] or "")
    except (KeyError, ValueError):
        fraction = None
    if fraction is not None and 0.95 < fraction <= 1:
        issues.append(Issue("warning", "mem-fraction-static", f"--mem-fraction-static {fraction:g} leaves little "
                            "memory for activations and CUDA graphs; startup or the first large batch may run "
                            "out of memory."))
    phases = graph_phase_settings(flags)
    sizes = tuple(n for n in DECODE_SIZE_FLAGS if n in flags)
    if sizes and phases["decode"].get("backend") == "disabled":
        issues.append(Issue("warning", sizes[0], "decode CUDA graph batch sizes do nothing while the decode CUDA "
                            "graph is disabled.", remove=sizes))
    return issues


def _startup_checks(who: str, flags: Flags) -> list[Issue]:
    issues: list[Issue] = []
    if graph_phase_settings(flags)["prefill"].get("backend") == "full":
        json_backend = "backend" in _json_phases(flags).get("prefill", {})
        where = "cuda-graph-config" if json_backend else "cuda-graph-backend-prefill"
        issues.append(Issue("warning", where, f"{who} warns at start-up: cuda_graph_config[prefill].backend='full' is "
                            "experimental. Use breakable for production workloads."))
    context = flags.get("cuda-graph-prefill-max-context")
    size = _size(context)
    if size is not None and size <= 0:
        issues.append(Issue("error", "cuda-graph-prefill-max-context", f"{who} stops at start-up: "
                            "--cuda-graph-prefill-max-context must be a positive integer"))
    if flags.get("attention-backend") == "flex_attention" and flags.get("speculative-algorithm"):
        issues.append(Issue("error", "attention-backend", f"{who} stops at start-up (an assert): Speculative decoding "
                            "is currently not supported with Flex Attention backend"))
    return issues


def _size(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None  # a suffixed size (4k) is positive, or argparse refused it already
