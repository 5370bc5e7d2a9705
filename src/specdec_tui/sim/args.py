"""Command line of the simulated server: `python -m sglang.launch_server`'s flags plus a few sim-only ones.

Parsed with argparse the way SGLang does, so an unknown flag is an argparse error (exit 2), and the
speculative rules SGLang applies after parsing are applied here with SGLang's own log messages.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from specdec_tui.sim import model

SPEC_ALGORITHMS = ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"]
LOG_LEVELS = ["debug", "info", "warning", "error", "critical"]
SIM_FAILURES = ["not-enough-memory", "cuda-graph-oom", "hang-loading", "crash-after-ready"]

MSG_MAX_RUNNING_48 = (
    "Max running requests is reset to 48 for speculative decoding. "
    "You can override this by explicitly setting --max-running-requests."
)
MSG_DRAFT_TOKENS_ADJUSTED = (
    "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
)


@dataclass(slots=True)
class SimArgs:
    """Resolved arguments: SGLang's server args (as SGLang would report them) and the simulator's own knobs."""

    server: dict[str, Any]
    time_scale: float
    load_seconds: float
    sim_seed: int
    gpu_mem_gb: float
    sim_fail: str | None
    warnings: list[str] = field(default_factory=list)

    @property
    def spec_steps(self) -> int:
        """Draft steps per round, 0 when speculative decoding is off."""
        if not self.server.get("speculative_algorithm"):
            return 0
        return int(self.server.get("speculative_num_steps") or 0)


def _bool_flag(p: argparse.ArgumentParser, *names: str, help: str) -> None:
    p.add_argument(*names, action="store_true", help=help)


def build_parser(prog: str = "python -m specdec_tui.sim") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Simulated SGLang server (no GPU).")
    # model and tokenizer
    p.add_argument("--model-path", "--model", dest="model_path", type=str, required=True,
                   help="The path of the model weights (only its name matters here).")
    p.add_argument("--tokenizer-path", type=str, default=None)
    p.add_argument("--served-model-name", type=str, default=None)
    p.add_argument("--revision", type=str, default=None)
    p.add_argument("--load-format", type=str, default="auto")
    _bool_flag(p, "--trust-remote-code", help="Allow custom models from the Hub.")
    p.add_argument("--dtype", type=str, default="auto", choices=["auto", "half", "float16", "bfloat16", "float", "float32"])
    p.add_argument("--kv-cache-dtype", type=str, default="auto")
    p.add_argument("--quantization", type=str, default=None)
    p.add_argument("--context-length", type=int, default=None)
    # HTTP server
    p.add_argument("--host", type=str, default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--api-key", type=str, default=None)
    _bool_flag(p, "--skip-server-warmup", help="Do not send the warmup request.")
    # memory and scheduling
    p.add_argument("--mem-fraction-static", type=float, default=None)
    p.add_argument("--max-running-requests", type=int, default=None)
    p.add_argument("--max-queued-requests", type=int, default=None)
    p.add_argument("--max-total-tokens", type=int, default=None)
    p.add_argument("--chunked-prefill-size", type=int, default=None)
    p.add_argument("--max-prefill-tokens", type=int, default=16384)
    p.add_argument("--schedule-policy", type=str, default="fcfs", choices=["lpm", "random", "fcfs", "dfs-weight", "lof", "priority"])
    p.add_argument("--page-size", type=int, default=None)
    _bool_flag(p, "--disable-radix-cache", help="Disable the prefix cache.")
    # parallelism
    p.add_argument("--tp-size", "--tp", "--tensor-parallel-size", dest="tp_size", type=int, default=1)
    p.add_argument("--dp-size", "--dp", "--data-parallel-size", dest="dp_size", type=int, default=1)
    p.add_argument("--ep-size", "--ep", "--expert-parallel-size", dest="ep_size", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", type=int, default=0)
    _bool_flag(p, "--enable-dp-attention", help="Data parallelism for attention.")
    # kernels and graphs
    p.add_argument("--attention-backend", type=str, default=None)
    p.add_argument("--cuda-graph-max-bs", type=int, default=None)
    p.add_argument("--cuda-graph-bs", type=int, nargs="+", default=None)
    _bool_flag(p, "--disable-cuda-graph", help="Disable cuda graph.")
    _bool_flag(p, "--enable-torch-compile", help="Optimize the model with torch.compile.")
    _bool_flag(p, "--disable-overlap-schedule", help="Disable the overlap scheduler.")
    _bool_flag(p, "--enable-mixed-chunk", help="Mix prefill and decode in a batch.")
    p.add_argument("--mamba-ssm-dtype", type=str, default="float32", choices=["float32", "bfloat16"])
    # speculative decoding
    p.add_argument("--speculative-algorithm", type=str, default=None, choices=SPEC_ALGORITHMS)
    p.add_argument("--speculative-draft-model-path", "--speculative-draft-model", dest="speculative_draft_model_path",
                   type=str, default=None)
    p.add_argument("--speculative-draft-model-revision", type=str, default=None)
    p.add_argument("--speculative-num-steps", type=int, default=None)
    p.add_argument("--speculative-eagle-topk", type=int, default=None)
    p.add_argument("--speculative-num-draft-tokens", type=int, default=None)
    p.add_argument("--speculative-accept-threshold-single", type=float, default=1.0)
    p.add_argument("--speculative-accept-threshold-acc", type=float, default=1.0)
    p.add_argument("--speculative-token-map", type=str, default=None)
    # logging and observability
    p.add_argument("--log-level", type=str, default="info", choices=LOG_LEVELS)
    p.add_argument("--log-level-http", type=str, default=None)
    _bool_flag(p, "--log-requests", help="Log metadata of all requests.")
    _bool_flag(p, "--enable-metrics", help="Enable /metrics (Prometheus).")
    _bool_flag(p, "--show-time-cost", help="Show time cost of custom marks.")
    p.add_argument("--decode-log-interval", type=int, default=40)
    p.add_argument("--random-seed", type=int, default=None)
    p.add_argument("--watchdog-timeout", type=float, default=300)
    p.add_argument("--stream-interval", type=int, default=1)
    p.add_argument("--reasoning-parser", type=str, default=None)
    p.add_argument("--tool-call-parser", type=str, default=None)
    p.add_argument("--chat-template", type=str, default=None)
    # sim-only
    sim = p.add_argument_group("simulator")
    sim.add_argument("--time-scale", type=float, default=1.0, help="run startup and decoding X times faster")
    sim.add_argument("--load-seconds", type=float, default=4.0, help="simulated model loading time (before scaling)")
    sim.add_argument("--sim-seed", type=int, default=0, help="seed for generated text and acceptance draws")
    sim.add_argument("--gpu-mem-gb", type=float, default=model.DEFAULT_GPU_MEM_GB, help="memory per simulated GPU")
    sim.add_argument("--sim-fail", choices=SIM_FAILURES, default=None, help="force a failure mode for rehearsal")
    return p


def _resolve_speculative(ns: argparse.Namespace, warnings: list[str]) -> None:
    """SGLang's post-parse rules for speculative decoding, with its log messages."""
    if ns.speculative_algorithm == "NEXTN":
        ns.speculative_algorithm = "EAGLE"  # NEXTN shares the EAGLE implementation
    if ns.speculative_algorithm not in ("EAGLE", "EAGLE3", "STANDALONE"):
        return
    if ns.max_running_requests is None:
        ns.max_running_requests = 48
        warnings.append(MSG_MAX_RUNNING_48)
    if ns.speculative_draft_model_path is None:
        ns.speculative_draft_model_path = ns.model_path  # MTP heads ship inside the target checkpoint
    if ns.speculative_num_steps is None:
        # SGLang's auto choice for Qwen3-Next/Qwen3.5 style MTP models
        ns.speculative_num_steps = 3
        ns.speculative_eagle_topk = 1 if ns.speculative_eagle_topk is None else ns.speculative_eagle_topk
        ns.speculative_num_draft_tokens = ns.speculative_num_draft_tokens or 4
    if ns.speculative_eagle_topk is None:
        ns.speculative_eagle_topk = 1
    if ns.speculative_num_draft_tokens is None:
        ns.speculative_num_draft_tokens = ns.speculative_num_steps + 1
    if ns.speculative_eagle_topk == 1 and ns.speculative_num_draft_tokens != ns.speculative_num_steps + 1:
        warnings.append(MSG_DRAFT_TOKENS_ADJUSTED)
        ns.speculative_num_draft_tokens = ns.speculative_num_steps + 1


def parse_sim_args(argv: Sequence[str] | None = None, prog: str = "python -m specdec_tui.sim") -> SimArgs:
    """Parses and resolves; argparse exits 2 on unknown flags or bad values, as SGLang's launcher does."""
    parser = build_parser(prog)
    ns = parser.parse_args(argv)
    if ns.time_scale <= 0:
        parser.error("argument --time-scale: must be > 0")
    if ns.speculative_num_steps is not None and ns.speculative_num_steps < 1:
        parser.error("argument --speculative-num-steps: must be >= 1")
    if ns.mem_fraction_static is not None and not 0.0 < ns.mem_fraction_static < 1.0:
        parser.error("argument --mem-fraction-static: must be between 0 and 1")
    warnings: list[str] = []
    _resolve_speculative(ns, warnings)
    if ns.served_model_name is None:
        ns.served_model_name = ns.model_path
    if ns.tokenizer_path is None:
        ns.tokenizer_path = ns.model_path
    if ns.mem_fraction_static is None:
        ns.mem_fraction_static = 0.85 if ns.tp_size >= 4 else 0.88
    if ns.chunked_prefill_size is None:
        ns.chunked_prefill_size = 8192
    if ns.page_size is None:
        ns.page_size = 1
    if ns.context_length is None:
        ns.context_length = model.CONTEXT_LEN
    if ns.random_seed is None:
        ns.random_seed = ns.sim_seed
    sim_keys = ("time_scale", "load_seconds", "sim_seed", "gpu_mem_gb", "sim_fail")
    server = {k: v for k, v in vars(ns).items() if k not in sim_keys}
    return SimArgs(
        server=server,
        time_scale=ns.time_scale,
        load_seconds=ns.load_seconds,
        sim_seed=ns.sim_seed,
        gpu_mem_gb=ns.gpu_mem_gb,
        sim_fail=ns.sim_fail,
        warnings=warnings,
    )


def server_args_repr(server: dict[str, Any]) -> str:
    """`ServerArgs(model_path='...', ...)` as SGLang prints it in its startup line."""
    return "ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in server.items()) + ")"
