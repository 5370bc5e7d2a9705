"""The argparse `type` functions a release's schema names, with upstream's behaviour and words.

A schema names a type as `int`, `float`, `str`, `json`, or upstream's function by its dotted name; argparse calls
it on the value and reports its `ArgumentTypeError` text, or "invalid <function name> value: '...'" for any other
error, so each stand-in keeps upstream's function name. A name this module does not know is taken as text (the
value is not checked; `unknown_types` lists them so a new release's new type is noticed).

Read (not copied) in SGLang 0.5.23: `srt/utils/common.py` (human_readable_int, json_list_type, nullable_str),
`srt/model_executor/cuda_graph_config.py` (parse_cuda_graph_backend_arg, parse_cuda_graph_config_arg and
ALLOWED_KEYS_PER_PHASE).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

TypeFn = Callable[[str], Any]
GRAPH_PHASES = ("decode", "prefill")
# 0.5.23's ALLOWED_KEYS_PER_PHASE (tc_compiler is "internal compatibility only; rejected by both parsers").
GRAPH_PHASE_KEYS = {
    "decode": ("backend", "max_bs", "bs"),
    "prefill": ("backend", "max_bs", "bs", "max_context_size", "full_prefill_max_req",
                "full_prefill_prefix_chunk_tokens", "max_seq_len"),
}
_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def human_readable_int(value: str) -> int:
    value = value.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. Use an integer IEC value such as "
                    f"'{int(Decimal(number))}{suffix}', or an SI value such as '{number}{suffix[0]}'.")
            return int(number) * _IEC[suffix]
        return int(Decimal(number) * _SI[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes "
            "(1Ki, 1Mi). Suffixes are case-sensitive.") from None


def json_list_type(value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"Invalid JSON list: {value}. Please provide a valid JSON list.") from None


def nullable_str(value: str) -> str | None:
    return None if not value or value == "None" else value


def parse_cuda_graph_backend_arg(raw: str) -> str:
    if raw == "tc_piecewise":
        raise argparse.ArgumentTypeError("tc_piecewise was removed; select breakable, full, or disabled")
    return raw


def parse_cuda_graph_config_arg(raw: str) -> dict[str, dict[str, Any]]:
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"--cuda-graph-config must be JSON: {e}") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(f"--cuda-graph-config must be a JSON object, got {type(parsed).__name__}")
    result: dict[str, dict[str, Any]] = {}
    for phase, settings in parsed.items():
        phase = str(phase)
        if phase not in GRAPH_PHASES:
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config: unknown phase '{phase}', expected one of {GRAPH_PHASES}")
        if not isinstance(settings, dict):
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config['{phase}'] must be a JSON object, got {type(settings).__name__}")
        if "backend" in settings:
            parse_cuda_graph_backend_arg(settings["backend"])
        allowed = GRAPH_PHASE_KEYS[phase]
        result[phase] = {}
        for key, value in settings.items():
            if key not in allowed:
                raise argparse.ArgumentTypeError(
                    f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of {allowed}")
            result[phase][key] = value
    return result


def _json(value: str) -> Any:
    return json.loads(value)


_json.__name__ = "loads"  # argparse names json.loads "loads" in its message
KNOWN: dict[str, TypeFn] = {
    "int": int, "float": float, "str": str, "json": _json,
    "sglang.srt.utils.common.human_readable_int": human_readable_int,
    "sglang.srt.utils.common.json_list_type": json_list_type,
    "sglang.srt.utils.common.nullable_str": nullable_str,
    "sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_backend_arg": parse_cuda_graph_backend_arg,
    "sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_config_arg": parse_cuda_graph_config_arg,
}


def type_function(name: str | None) -> TypeFn | None:
    """The callable argparse would use for a schema's type name (None: no type, the text itself)."""
    if name is None:
        return None
    return KNOWN.get(name, str)


def unknown_types(names: list[str | None]) -> list[str]:
    return sorted({n for n in names if n is not None and n not in KNOWN})
