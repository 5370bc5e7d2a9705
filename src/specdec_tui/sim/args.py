"""Command line of the simulated server: `python -m sglang.launch_server`'s flags plus a few sim-only ones.

Parsed with argparse the way SGLang does, so an unknown flag is an argparse error (exit 2), and the
speculative rules SGLang applies after parsing are applied here with SGLang's own log messages (the rules
themselves: sim/spec_resolve.py). The speculative and per-phase CUDA-graph flags are declared from the
flag table in core/flag_table.py, so the sim and the validator know the same flags with the same types.

Upstream read (not copied), sgl-project/sglang: `python/sglang/srt/server_args.py` (deprecated aliases:
`--cuda-graph-max-bs` stores into cuda_graph_max_bs_decode, `--cuda-graph-bs` into cuda_graph_bs_decode,
`--disable-cuda-graph` stores True), `python/sglang/srt/arg_groups/argparse_actions.py` (their warning,
bold yellow, logged while argparse runs, before logging is configured, so it reaches stderr bare).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from specdec_tui.core.flag_deprecations import DEPRECATIONS, deprecation_message
from specdec_tui.core.flag_rules_capacity import cuda_graph_config_error, graph_phase_settings
from specdec_tui.core.flag_table import FLAGS, FlagSpec
from specdec_tui.sim.profiles import profile_for
from specdec_tui.sim.spec_resolve import resolve_speculative

LOG_LEVELS = ["debug", "info", "warning", "error", "critical"]
SIM_FAILURES = ["not-enough-memory", "cuda-graph-oom", "hang-loading", "crash-after-ready"]

# Flags of the table the sim declares from it (the rest of its command line is written out below).
_GRAPH_FLAGS = ("cuda-graph-config", "cuda-graph-backend-decode", "cuda-graph-backend-prefill",
                "cuda-graph-max-bs-decode", "cuda-graph-max-bs-prefill", "cuda-graph-bs-decode",
                "cuda-graph-bs-prefill", "cuda-graph-tc-compiler", "disable-decode-cuda-graph",
                "disable-prefill-cuda-graph")
_DEPRECATED_KEY = "_deprecated_options"
DEPRECATION_COLOR = ("\033[1;33m", "\033[0m")  # upstream's print_deprecated_warning


@dataclass(slots=True)
class SimArgs:
    """Resolved arguments: SGLang's server args (as SGLang would report them) and the simulator's own knobs."""

    server: dict[str, Any]
    time_scale: float
    load_seconds: float
    sim_seed: int
    gpu_mem_gb: float | None  # None: the model profile's GPU (sim/profiles.py)
    sim_fail: str | None
    warnings: list[str] = field(default_factory=list)
    deprecated_options: list[str] = field(default_factory=list)  # deprecated flags as typed, in order

    @property
    def spec_steps(self) -> int:
        """Draft steps per round, 0 when speculative decoding is off."""
        if not self.server.get("speculative_algorithm"):
            return 0
        return int(self.server.get("speculative_num_steps") or 0)

    @property
    def decode_graph_disabled(self) -> bool:
        """No decode CUDA graph, by SGLang's precedence of --cuda-graph-config, the per-phase flags and the
        deprecated --disable-cuda-graph."""
        return bool(self.server["cuda_graph_config"]["decode"].get("backend") == "disabled")

    @property
    def decode_graph_max_bs(self) -> int | None:
        """The largest decode batch captured in a CUDA graph (None = SGLang's default)."""
        value = self.server["cuda_graph_config"]["decode"].get("max_bs")
        return int(value) if value is not None else None


class _DeprecatedAlias(argparse.Action):
    """Stores like the flag it stands for and remembers it was used, for SGLang's deprecation line."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, True if self.nargs == 0 else values)
        used = getattr(namespace, _DEPRECATED_KEY, None) or []
        setattr(namespace, _DEPRECATED_KEY, [*used, option_string or ""])


def deprecation_warnings(a: SimArgs) -> list[str]:
    """The lines SGLang prints for the deprecated flags of this command line, in its words and colour."""
    start, end = DEPRECATION_COLOR
    return [f"{start}{deprecation_message(option)}{end}" for option in a.deprecated_options]


def _json_config(raw: str) -> dict[str, Any]:
    error = cuda_graph_config_error(raw)
    if error is not None:
        raise argparse.ArgumentTypeError(error)
    parsed: dict[str, Any] = json.loads(raw)
    return parsed


def _add_table_flag(p: argparse.ArgumentParser, spec: FlagSpec) -> None:
    """Declares one flag of core's table the way SGLang's argparse does (types, choices, nargs)."""
    names = [f"--{spec.name}", *(f"--{alias}" for alias in spec.aliases)]
    dest = spec.name.replace("-", "_")
    if spec.type == "bool":
        p.add_argument(*names, dest=dest, action="store_true", help=spec.help)
        return
    kinds: dict[str, Any] = {"int": int, "float": float, "str": str, "choice": str, "int_list": int,
                             "json": _json_config}
    extra: dict[str, Any] = {"nargs": "+"} if spec.type == "int_list" else {}
    if spec.choices and not spec.open_choices:
        extra["choices"] = list(spec.choices)
    p.add_argument(*names, dest=dest, type=kinds[spec.type], default=spec.default, help=spec.help, **extra)


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
    p.add_argument("--dist-init-addr", "--nccl-init-addr", dest="dist_init_addr", type=str, default=None,
                   help="The host address for initializing distributed backend (e.g., `192.168.0.2:25000`).")
    _bool_flag(p, "--enable-dp-attention", help="Data parallelism for attention.")
    # kernels and graphs
    p.add_argument("--attention-backend", type=str, default=None)
    p.add_argument("--prefill-attention-backend", type=str, default=None)
    p.add_argument("--decode-attention-backend", type=str, default=None)
    for name in _GRAPH_FLAGS:
        _add_table_flag(p, FLAGS[name])
    p.add_argument("--cuda-graph-max-bs", type=int, action=_DeprecatedAlias, dest="cuda_graph_max_bs_decode",
                   help="Deprecated alias for --cuda-graph-max-bs-decode.")
    p.add_argument("--cuda-graph-bs", type=int, nargs="+", action=_DeprecatedAlias, dest="cuda_graph_bs_decode",
                   help="Deprecated alias for --cuda-graph-bs-decode.")
    p.add_argument("--disable-cuda-graph", nargs=0, action=_DeprecatedAlias, default=False,
                   help="Deprecated. Use --cuda-graph-backend-{decode,prefill}=disabled instead.")
    _bool_flag(p, "--enable-deterministic-inference", help="Batch-invariant, deterministic inference.")
    _bool_flag(p, "--enable-torch-compile", help="Optimize the model with torch.compile.")
    _bool_flag(p, "--disable-overlap-schedule", help="Disable the overlap scheduler.")
    _bool_flag(p, "--enable-mixed-chunk", help="Mix prefill and decode in a batch.")
    p.add_argument("--mamba-ssm-dtype", type=str, default="float32", choices=["float32", "bfloat16"])
    # speculative decoding (no choices for the algorithm: SGLang upper-cases it and plugins may register more)
    for spec in FLAGS.values():
        if spec.group == "speculative":
            _add_table_flag(p, spec)
    window = DEPRECATIONS["speculative-dflash-draft-window-size"]
    p.add_argument(f"--{window.old}", type=int, action=_DeprecatedAlias, dest="speculative_draft_window_size",
                   help=argparse.SUPPRESS)
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
    sim.add_argument("--gpu-mem-gb", type=float, default=None,
                     help="memory per simulated GPU (default: the model profile's GPU)")
    sim.add_argument("--sim-fail", choices=SIM_FAILURES, default=None, help="force a failure mode for rehearsal")
    return p


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
    _check_nodes(parser, ns)
    deprecated = vars(ns).pop(_DEPRECATED_KEY, None) or []
    warnings: list[str] = []
    failure = resolve_speculative(ns, warnings)
    if failure is not None:
        parser.exit(1, f"{failure}\n")
    ns.cuda_graph_config = graph_phase_settings(_as_unit_flags(ns, (*_GRAPH_FLAGS, "disable-cuda-graph")))
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
        ns.context_length = profile_for(ns.model_path).profile.context_len
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
        deprecated_options=deprecated,
    )


def _check_nodes(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> None:
    """The multi-node flags must describe one node of a world (sim/cluster.py runs the rendezvous)."""
    from specdec_tui.sim.cluster import DistAddr

    if ns.nnodes < 1:
        parser.error("argument --nnodes: must be >= 1")
    if not 0 <= ns.node_rank < ns.nnodes:
        parser.error(f"argument --node-rank: must be in [0, {ns.nnodes}) for --nnodes {ns.nnodes}")
    if ns.nnodes > 1 and ns.dist_init_addr is None:
        parser.error("argument --dist-init-addr: required when --nnodes > 1 (node 0's HOST:PORT)")
    if ns.dist_init_addr is not None:
        try:
            DistAddr.parse(ns.dist_init_addr)
        except ValueError as err:
            parser.error(f"argument --dist-init-addr: {err}")


def _as_unit_flags(ns: argparse.Namespace, names: Sequence[str]) -> dict[str, str | None]:
    """The parsed values of `names` in a unit's words (a set switch is a bare None, a list is space-separated),
    leaving out what the command line did not set; core's CUDA-graph precedence reads this shape."""
    flags: dict[str, str | None] = {}
    for name in names:
        value = getattr(ns, name.replace("-", "_"), None)
        if value is None or value is False:
            continue
        if value is True:
            flags[name] = None
        elif isinstance(value, dict):
            flags[name] = json.dumps(value)
        elif isinstance(value, list):
            flags[name] = " ".join(str(v) for v in value)
        else:
            flags[name] = str(value)
    return flags


def server_args_repr(server: dict[str, Any]) -> str:
    """`ServerArgs(model_path='...', ...)` as SGLang prints it in its startup line."""
    return "ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in server.items()) + ")"
