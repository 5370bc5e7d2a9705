"""Whether more captured CUDA graphs fit, from the server's own memory figures: the capture lines of its current
start (`Capture … CUDA graph end. …, mem usage=… GB, avail mem=… GB.`, rank 0) and the startup summary's
`available_gpu_mem`. The doctor asks before it offers to raise `--cuda-graph-max-bs-decode` (issue 32: "within
memory"): a raise that does not fit would only trade the eager cliff for a start that fails at capture.

The graphs' memory grows with the largest captured batch (their static buffers are per batch slot), so the raise
costs at most the captured graphs' memory times (new / captured - 1) (an upper bound: part of it is a fixed base);
it fits when that is at most `FREE_SHARE` of what the
server had free after capture (the rest stays for prefill activations, which run outside the static fraction)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specdec_tui.core.sglang.records import CudaGraphRecord, LogRecord, ServerArgsRecord, StartupSummaryRecord

__all__ = ["FREE_SHARE", "GraphRoom", "graph_room"]

FREE_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class GraphRoom:
    graphs_gb: float  # what the captured graphs hold now (rank 0)
    free_gb: float  # free after capture
    extra_gb: float  # what capturing up to the new batch would add

    @property
    def fits(self) -> bool:
        return self.extra_gb <= self.free_gb * FREE_SHARE

    def words(self, captured: int, target: int) -> str:
        return (f"graphs up to batch {target} would take ~{self.extra_gb:.1f} GB more than the {self.graphs_gb:.2f} GB "
                f"the graphs up to {captured} take, of the {self.free_gb:.1f} GB free after capture (at most "
                f"{FREE_SHARE:.0%} of it may go to graphs)")


def graph_room(records: Sequence[LogRecord], captured: int, target: int) -> GraphRoom | None:
    """The room for graphs up to `target` (see the module doc); None when the start logged no memory figures."""
    start = max((i for i, r in enumerate(records) if isinstance(r, ServerArgsRecord)), default=-1)
    window = [r for r in records[start + 1:] if r.tags.get("TP", 0) == 0 and r.tags.get("DP", 0) == 0]
    ends = [r for r in window if isinstance(r, CudaGraphRecord) and r.phase == "end" and r.mem_usage_gb is not None]
    if not ends or captured <= 0:
        return None
    free = next((r.available_gpu_mem_gb for r in reversed(window)
                 if isinstance(r, StartupSummaryRecord) and r.available_gpu_mem_gb is not None), ends[-1].avail_mem_gb)
    if free is None:
        return None
    graphs = sum(r.mem_usage_gb or 0.0 for r in ends)
    return GraphRoom(graphs, free, graphs * max(0.0, target / captured - 1.0))
