"""SGLang-format log lines, written to stdout one flushed line at a time (journald reads them live).

Wording follows SGLang's scheduler, model runner and uvicorn config so the journal parser can be tested
against the simulator. Only the text is reproduced; the numbers come from the simulation.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

CUDA_GRAPH_HELP = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
    "3. disable torch compile by not using --enable-torch-compile\n"
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n"
)
NOT_ENOUGH_MEMORY = "Not enough memory. Please try to increase --mem-fraction-static."


class SimLog:
    """Writes `[YYYY-MM-DD HH:MM:SS] msg` (or `[... TP0] msg` when tp > 1) and flushes every line."""

    def __init__(self, tp_size: int, out: TextIO | None = None, level: str = "info") -> None:
        self.tp_size = tp_size
        self.out = out or sys.stdout
        self.quiet = level in ("warning", "error", "critical")

    def _stamp(self, tp_rank: int | None) -> str:
        now = time.strftime("%Y-%m-%d %H:%M:%S")
        tag = f" TP{tp_rank}" if tp_rank is not None and self.tp_size > 1 else ""
        return f"[{now}{tag}] "

    def line(self, msg: str, tp_rank: int | None = None, *, important: bool = False) -> None:
        if self.quiet and not important:
            return
        try:
            for part in msg.split("\n"):
                self.out.write(self._stamp(tp_rank) + part + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            pass

    def raw(self, text: str) -> None:
        """Unprefixed text (tracebacks, uvicorn start-up lines)."""
        try:
            self.out.write(text if text.endswith("\n") else text + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            pass

    def scheduler(self, msg: str) -> None:
        """A line from the rank-0 scheduler (the only rank that logs batch stats)."""
        self.line(msg, tp_rank=0)

    def all_ranks(self, msg: str) -> None:
        for rank in range(self.tp_size):
            self.line(msg, tp_rank=rank)

    def access(self, peer: str, method: str, path: str, status: int, reason: str) -> None:
        """uvicorn's access line, in SGLang's uvicorn log format."""
        self.line(f'INFO:     {peer} - "{method} {path} HTTP/1.1" {status} {reason}')


def decode_batch_line(
    *,
    running: int,
    used_tokens: int,
    token_usage: float,
    accept_len: float | None,
    accept_rate: float | None,
    cuda_graph: bool,
    gen_throughput: float,
    queue: int,
) -> str:
    msg = f"Decode batch, #running-req: {running}, #token: {used_tokens}, token usage: {token_usage:.2f}, "
    if accept_len is not None:
        msg += f"accept len: {accept_len:.2f}, accept rate: {accept_rate or 0.0:.2f}, "
    msg += f"cuda graph: {cuda_graph}, gen throughput (token/s): {gen_throughput:.2f}, #queue-req: {queue}"
    return msg


def prefill_batch_line(
    *,
    new_seq: int,
    new_token: int,
    cached_token: int,
    token_usage: float,
    running: int,
    queue: int,
    input_throughput: float,
) -> str:
    return (
        f"Prefill batch, #new-seq: {new_seq}, #new-token: {new_token}, #cached-token: {cached_token}, "
        f"token usage: {token_usage:.2f}, #running-req: {running}, #queue-req: {queue}, #pending-token: 0, "
        f"cuda graph: False, input throughput (token/s): {input_throughput:.2f}"
    )


def traceback_block(where: list[tuple[str, int, str, str]], exc: str) -> str:
    """A Python-style traceback with the given frames (file, line, function, source)."""
    lines = ["Traceback (most recent call last):"]
    for file, lineno, func, src in where:
        lines.append(f'  File "{file}", line {lineno}, in {func}')
        lines.append(f"    {src}")
    lines.append(exc)
    return "\n".join(lines)
