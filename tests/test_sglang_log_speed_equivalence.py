"""The fast SGLang log parser reads every line exactly as the original one did (golden-file test).

`tests/data/logs/parsed_golden.jsonl` holds ~4k lines — the log samples in tests/data/logs/, mutated
variants of them (other prefixes, ANSI, truncations, odd numbers, odd characters) and near-miss
fragment soups — each with the record the parser gave *before* the speed work. Regenerate it only for
an intended behaviour change:  python tests/test_sglang_log_speed_equivalence.py --write
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import ErrorRecord, LogRecord

LOGS = Path(__file__).parent / "data" / "logs"
GOLDEN = LOGS / "parsed_golden.jsonl"


def record_dict(record: LogRecord) -> dict[str, Any]:
    """Everything a caller can read from a record (fields, summary, fatal), JSON-typed; `raw` is the line itself."""
    out: dict[str, Any] = {"type": type(record).__name__, "summary": record.summary()}
    for item in dataclasses.fields(record):
        if item.name == "raw":
            continue
        value = getattr(record, item.name)
        out[item.name] = value.isoformat() if isinstance(value, datetime) else value
    if isinstance(record, ErrorRecord):
        out["fatal"] = record.fatal
    return out


def canonical(record: dict[str, Any]) -> str:
    """JSON text keeps int/float/bool apart, which `==` on dicts would not (1 == 1.0 == True)."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def golden_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="ascii").split("\n") if line]


def test_every_golden_line_parses_to_the_same_record() -> None:
    rows = golden_rows()
    assert len(rows) > 3000
    mismatches = []
    for row in rows:
        record = parse_line(row["line"])
        if record.raw != row["line"] or canonical(record_dict(record)) != canonical(row["record"]):
            mismatches.append(row["line"])
    assert mismatches == [], f"{len(mismatches)} lines parse differently, first: {mismatches[:3]!r}"


def test_golden_corpus_covers_every_record_kind() -> None:
    kinds = {row["record"]["type"] for row in golden_rows()}
    assert kinds == {
        "DecodeRecord", "PrefillRecord", "StartupSummaryRecord", "LoadWeightRecord", "KVCacheRecord",
        "CudaGraphRecord", "ReadyRecord", "ErrorRecord", "AccessRecord", "AdjustRecord", "TextRecord",
        "ConcurrencyLimitRecord", "DeprecationRecord", "ServerArgsRecord",
    }


def test_records_of_a_repeated_line_do_not_share_values() -> None:
    # the parser caches parsed `key: value` pieces; a list value must still be each record's own
    line = "[2026-01-01 00:00:00 DP0 TP1] Decode batch, #running-req: 3, per dp: [1, 2], accept len: 2.50, "
    first = parse_line(line)
    first.extra["per_dp"].append(99)
    first.tags["TP"] = 7
    second = parse_line(line)
    assert second.extra == {"per_dp": [1, 2]} and second.tags == {"DP": 0, "TP": 1}
    assert (second.running_req, second.accept_len) == (3, 2.5)


# ---------------------------------------------------------------------------------------------
# Corpus (used only by --write)

_PREFIXES = (
    "",
    "Mar 11 13:53:21 llm-two python3[12345]: ",
    "2026-03-11T13:53:22+0000 llm-two python3[12345]: ",
    "2026-03-11T13:53:22.123456Z llm-two sglang: ",
    "\x1b[32m",
    "INFO:     ",
    "WARN ",
    "[gpu=3] ",
    "[TP 2] ",
)
_SUFFIXES = ("", "\r\n", "  ", "\n", ".", ", ", "\x1b[0m", " ,", " (x, y)", " [1, [2, 3]]")
_NUMBERS = ("0", "7", "-3", "+4", "1e3", "2.5E-2", ".5", "5.", "12.50%", "99999999999999999999", "1_000", "١٢", "0.0", "1e999")
_ODD_CHARS = (",", ":", "(", ")", "[", "]", "{", "}", "=", ".", "%", " ", "#", "\t", "K", "ſ", "İ", "١", "\x1b[1m")
_FRAGMENTS = (
    "[2025-01-01 00:00:00 TP0] ", "[2025-13-01 00:00:00] ", "[2025-01-01 00:00:00,123 DP1 TP1] ",
    "[2025-01-01T00:00:00.1234567] ", "Decode batch", "Prefill batch", " [12]", ", ", ". ", ": ", "=", "#running-req",
    "#token", "accept len", "accept-len 2.5", "cuda graph", "gen throughput (token/s)", "(", ")", "[", "]", "1.5", "GB",
    "GiB", "True", "false", "%", "Capture cuda graph end", "KV Cache is allocated.", "Load weight end.", "Load weight begin.",
    "max_total_num_tokens=", "avail mem=", "mem usage=", "Time elapsed:", "\x1b[31m", "INFO: ", "ERROR ",
    '127.0.0.1:1 - "GET /health HTTP/1.1" 200', "Traceback (most recent call last)", "ValueError: ", "CUDA error",
    "is adjusted to", "is reset to 4", "page_size", "overriding x=1 to 2", "The server is fired up and ready to roll!",
    "max_running_requests", " reduced from the requested 4 to ", "=26 (per dp worker)", ", bound by mamba_state_pool",
    "; other limits: kv_capacity=9", " To raise it: ", "'--x' is deprecated", "Endpoint '/a'", " Use '--y' instead.",
    "Health check failed.", " for last 20 seconds.", "mem_fraction_static=", "Spec v2 is enabled", "Spec v1 is used for ",
    "#full token", "mamba num", "#gpu token", "musa graph", "WARNING x.py:12: ",
    "KV cache pool is full. Retract requests. #retracted_reqs: 1", "ready", "\n", " ",
)
_EXTRA_LINES = (
    "[2026-01-01 00:00:00] Decode batch, #running-req: 3, new thing: 1.5, mode: fast, per dp: [1, 2], ",
    "[2026-01-01 00:00:00] Decode batch, accept-len 2.50, queue 4, ratio 12%, (a, b): 3, x: {1, 2}, y: [1.5, True, a]",
    "[2026-01-01 00:00:00] Prefill batch [9]. #new-seq: 1.0, #new-token: 2.5, token usage: 50%, cache: 1.5 GiB, t: 3 ms",
    "[2026-01-01 00:00:00] Mamba Cache is allocated. #tokens: 100, size: 0.5 MiB",
    "[2026-01-01 00:00:00] kv cache is allocated. #tokens: 1e3, K size: 1 GB, V size: 2 GB, KV size: 4 GB",
    "[2026-01-01 00:00:00] Capture target decode CUDA graph begin. avail mem=1.5 GB",
    "[2026-01-01 00:00:00] Load weight end. elapsed=1.5 s, type=X, dtype=torch.float16, avail mem=3 GB, mem usage=2 GB.",
    "[2026-01-01 00:00:00] max_total_num_tokens=1, available_cpu_mem=3.5 GB, extra_thing=True, list=[1, 2]",
    "[2026-01-01 00:00:00] Overriding chunked_prefill_size=8192 to 4096",
    "[2026-01-01 00:00:00] chunked_prefill_size is set to 4096 because of x",
    "[2026-01-01 00:00:00] Cuda graph is disabled because of using torch native attention backend",
    "[2026-01-01 00:00:00] Radix cache is disabled for this model",
    "[2026-01-01 00:00:00] The radix cache is forced as chunk cache",
    "[2026-01-01 00:00:00] Changing page_size from 1 to 16 for FA3",
    "[2026-01-01 00:00:00] The expert parallel size is adjusted to be the same as the tensor parallel size [8]",
    "[2026-01-01 00:00:00] Pipeline parallelism is incompatible with overlap schedule.",
    "[2026-01-01 00:00:00] Spec v2: overlap schedule is turned on.",
    "[2026-01-01 00:00:00] NCCL error: unhandled system error",
    "[2026-01-01 00:00:00] illegal memory access was encountered",
    "[2026-01-01 00:00:00] scheduler is dead",
    "[2026-01-01 00:00:00] child process 7 died",
    "[2026-01-01 00:00:00] SIGQUIT received",
    "[2026-01-01 00:00:00] failed to initialize the model runner",
    "[2026-01-01 00:00:00] TokenizerManager hit an exception",
    "usage: launch_server.py: error: argument --tp-size: invalid int value",
    "INFO:     127.0.0.1:40000 - \"POST /v1/chat/completions HTTP/1.1\" 404 Not Found",
    "::1:40000 - \"DELETE /x?y=1 HTTP/2\" 500",
    "",
    "   ",
    "\x1b[31m\x1b[0m",
    "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, max_running_requests=None, "
    "speculative_algorithm='EAGLE', speculative_num_steps=1, speculative_num_draft_tokens=2, x={'a': [1, 2]})",
)


def _mutations(line: str, rng: random.Random) -> Iterator[str]:
    """Variants of one real line: other prefixes/suffixes, truncations, swapped numbers, odd characters."""
    body = line.split("] ", 1)[-1] if line.startswith("[") else line
    for prefix in _PREFIXES:
        yield prefix + line
        yield prefix + body
    for suffix in _SUFFIXES:
        yield line + suffix
    yield line.upper()
    yield line.lower()
    yield line[1:]
    for _ in range(6):
        yield line[: rng.randint(0, len(line))]
    for _ in range(6):
        cut = rng.randint(0, len(line))
        yield line[:cut] + rng.choice(_ODD_CHARS) + line[cut:]
    for _ in range(4):
        cut = rng.randint(0, max(len(line) - 1, 0))
        yield line[:cut] + line[cut + 1 :]
    for _ in range(6):
        words = line.split(" ")
        for index, word in enumerate(words):
            if any(ch.isdigit() for ch in word) and rng.random() < 0.5:
                words[index] = rng.choice(_NUMBERS) + ("," if word.endswith(",") else "")
        yield " ".join(words)


def corpus() -> list[str]:
    rng = random.Random(20260311)
    real = [line for path in sorted(LOGS.glob("*.log")) for line in path.read_text().splitlines()]
    lines = list(real) + list(_EXTRA_LINES)
    for line in real + list(_EXTRA_LINES):
        lines.extend(_mutations(line, rng))
    for _ in range(1200):
        lines.append("".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 14))))
    return list(dict.fromkeys(lines))


def write_golden() -> int:
    rows = [json.dumps({"line": line, "record": record_dict(parse_line(line))}) for line in corpus()]
    GOLDEN.write_text("\n".join(rows) + "\n", encoding="ascii")  # escaped: no line separators inside a row
    return len(rows)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_sglang_log_speed_equivalence.py --write   (regenerates the golden file)")
    print(f"wrote {write_golden()} lines to {GOLDEN}")
