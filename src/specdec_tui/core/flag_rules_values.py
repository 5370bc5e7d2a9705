"""Reading a unit's flags (canonical names, values as text) as SGLang's start-up hooks read its arguments."""

from __future__ import annotations

from collections.abc import Mapping

Flags = Mapping[str, str | None]


def int_flag(flags: Flags, name: str) -> int | None:
    value = flags.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def float_flag(flags: Flags, name: str, default: float | None) -> float | None:
    value = flags.get(name)
    try:
        return float(value) if value is not None else default
    except ValueError:
        return None


def attn_dp_enabled(flags: Flags) -> bool:
    """0.5.23 `runtime_context.attn_dp_enabled_of`: attn_dp_size > 1, where the deprecated
    `--dp-size N --enable-dp-attention` becomes attn_dp_size N (`parallel_hook._handle_deprecated_dp_attention`)."""
    attn = int_flag(flags, "attn-dp-size") or 1
    if attn == 1 and "enable-dp-attention" in flags:
        attn = int_flag(flags, "dp-size") or 1
    return attn > 1


def resolved_algorithm(flags: Flags) -> str | None:
    """The algorithm after `handle_speculative_decoding`: upper-cased, NEXTN (and EAGLE) resolved to EAGLE."""
    raw = flags.get("speculative-algorithm")
    if not raw:
        return None
    algorithm = raw.upper()
    return "EAGLE" if algorithm == "NEXTN" else algorithm
