"""SGLang's flags as this tool knows them: name, type, limits, SGLang's default and help, by group.

Source read (not copied), sgl-project/sglang:
  - `python/sglang/srt/arg_groups/fields/spec.py` (2026 main): every `--speculative-*` flag with its type, default
    and choices; `speculative_algorithm` is a plain `Optional[str]` (no argparse choices) whose help lists the
    builtins "EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH, DSPARK, UNO. Or any name registered via
    `SpeculativeAlgorithm.register`".
  - `python/sglang/srt/speculative/spec_info.py`: `SpeculativeAlgorithm.from_string` upper-cases the name, looks it
    up among the enum members (which include FROZEN_KV_MTP), then the plugin registry, else raises
    "Unknown speculative algorithm name: ...".
  - `python/sglang/srt/arg_groups/fields/exec_.py` (ExecGraph): `--cuda-graph-config` (JSON),
    `--cuda-graph-backend-{decode,prefill}` (full, breakable, tc_piecewise, disabled),
    `--cuda-graph-max-bs-{decode,prefill}` (int), `--cuda-graph-bs-{decode,prefill}` (list of int),
    `--cuda-graph-tc-compiler`, `--disable-{decode,prefill}-cuda-graph`.
  - `python/sglang/srt/server_args.py`: the old `--cuda-graph-max-bs`, `--cuda-graph-bs`, `--disable-cuda-graph` are
    deprecated aliases now (see core/flag_deprecations.py); v0.5.x had them as the only names, with argparse
    choices ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"] for the algorithm.
`--tp` and `--dp` are not declared by SGLang; argparse's prefix matching accepts them for --tp-size/--dp-size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FlagType = Literal["int", "float", "str", "bool", "choice", "int_list", "json"]
Group = Literal["speculative", "capacity", "server"]

# The builtins SGLang's help names, in its order; the dropdown offers these.
SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")
# Names `from_string` also accepts without a plugin (an enum member the help does not list).
BUILTIN_ALGORITHMS = (*SPEC_ALGORITHMS, "FROZEN_KV_MTP")
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
TREE_FLAGS = ("speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens")
CUDA_GRAPH_BACKENDS = ("full", "breakable", "tc_piecewise", "disabled")


@dataclass(frozen=True)
class FlagSpec:
    """One SGLang flag: its type and limits, SGLang's default (None = decided by SGLang at startup).

    `open_choices`: the choices are what SGLang ships, but other values are legal (plugins register more).
    `deprecated`: SGLang still accepts the flag but warns; core/flag_deprecations.py says what replaces it."""

    name: str
    type: FlagType
    group: Group
    help: str
    default: str | int | float | bool | None = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive_min: bool = False
    exclusive_max: bool = False
    aliases: tuple[str, ...] = ()
    special: tuple[str, ...] = ()  # values allowed outside the range, e.g. "-1" for "disabled"
    open_choices: bool = False
    deprecated: bool = False

    @property
    def is_switch(self) -> bool:
        return self.type == "bool"

    def describe_range(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.minimum is None and self.maximum is None:
            return ""
        lo = "" if self.minimum is None else f"{'>' if self.exclusive_min else '>='} {self.minimum:g}"
        hi = "" if self.maximum is None else f"{'<' if self.exclusive_max else '<='} {self.maximum:g}"
        text = " and ".join(part for part in (lo, hi) if part)
        return text + ("" if not self.special else " (or " + ", ".join(self.special) + ")")


def _spec(name: str, type_: FlagType, group: Group, help_: str, **kw: object) -> FlagSpec:
    return FlagSpec(name, type_, group, help_, **kw)  # type: ignore[arg-type]


_SPECULATIVE = [
    _spec("speculative-algorithm", "choice", "speculative",
          "Speculative algorithm (SGLang upper-cases it). NEXTN is an alias of EAGLE (the model's own MTP head "
          "drafts); plugins may register other names.", choices=SPEC_ALGORITHMS, open_choices=True),
    _spec("uno-lora-path", "str", "speculative", "Path to the UNO draft LoRA checkpoint."),
    _spec("speculative-draft-model-path", "str", "speculative",
          "The path of the draft model weights: a local folder or a Hugging Face repo ID.",
          aliases=("speculative-draft-model",)),
    _spec("speculative-draft-model-revision", "str", "speculative",
          "The draft model version to use: a branch name, a tag name, or a commit id."),
    _spec("speculative-draft-load-format", "str", "speculative",
          "The format of the draft model weights (defaults to --load-format)."),
    _spec("speculative-num-steps", "int", "speculative",
          "The number of steps sampled from the draft model in speculative decoding.", minimum=1),
    _spec("speculative-eagle-topk", "int", "speculative",
          "The number of tokens sampled from the draft model in EAGLE-2 each step.", minimum=1),
    _spec("speculative-num-draft-tokens", "int", "speculative",
          "The number of draft tokens verified per step (with topk 1 SGLang forces steps + 1).", minimum=1),
    _spec("speculative-dflash-block-size", "int", "speculative",
          "DFLASH only. Block size (verify window length); must match --speculative-num-draft-tokens.", minimum=1),
    _spec("speculative-dspark-block-size", "int", "speculative",
          "DSPARK only. Draft block size gamma; the verify window (draft tokens) is gamma + 1.", minimum=1),
    _spec("speculative-dspark-sps-table-path", "str", "speculative",
          "DSPARK only. A pre-profiled SPS cost table (JSON) for the ragged-verify scheduler."),
    _spec("speculative-dspark-confidence-sts-path", "str", "speculative",
          "DSPARK only. A per-position STS calibration JSON for the confidence head."),
    _spec("speculative-dspark-align-verify-tokens-to-graph-tier", "bool", "speculative",
          "DSPARK compact ragged-verify only. Fill verify lengths up to the CUDA-graph tier.", default=False),
    _spec("speculative-domino-candidate-pool-size", "int", "speculative",
          "Domino only. Size of the block-shared base-logit candidate pool; 0 scores the full vocabulary.",
          default=2048, minimum=0),
    _spec("speculative-accept-threshold-single", "float", "speculative",
          "Accept a draft token if its probability in the target model is greater than this threshold.",
          default=1.0, minimum=0.0, maximum=1.0),
    _spec("speculative-accept-threshold-acc", "float", "speculative",
          "The accept probability of a draft token is raised from p to min(1, p / threshold_acc).",
          default=1.0, minimum=0.0, maximum=1.0, exclusive_min=True),
    _spec("speculative-use-rejection-sampling", "bool", "speculative",
          "Use rejection sampling for speculative decoding (requires topk=1).", default=False),
    _spec("speculative-use-block-verification", "bool", "speculative",
          "Use block verification for EAGLE/EAGLE3/NEXTN on CUDA or ROCm (requires topk=1).", default=False),
    _spec("speculative-token-map", "str", "speculative", "The path of the draft model's small vocab table."),
    _spec("speculative-attention-mode", "choice", "speculative",
          "Attention backend mode for target verify and draft extend.", default="prefill",
          choices=("prefill", "decode")),
    _spec("speculative-draft-attention-backend", "str", "speculative",
          "Attention backend for speculative decoding drafting."),
    _spec("speculative-dsa-topk-backend", "choice", "speculative",
          "DSA indexer top-k backend for speculative draft workers.", default="sgl-kernel",
          choices=("sgl-kernel", "torch", "flashinfer")),
    _spec("speculative-draft-kv-cache-dtype", "choice", "speculative",
          "KV cache dtype for the draft model only (default follows --kv-cache-dtype); fp8_e4m3 halves the "
          "draft pool.", choices=("auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16")),
    _spec("speculative-draft-window-size", "int", "speculative",
          "Sliding window size for the draft model (honored by Llama EAGLE-3, DFLASH and the built-in "
          "EAGLE/MTP draft on Triton/FlashInfer).", minimum=1),
    _spec("speculative-draft-sink-size", "int", "speculative",
          "Attention-sink tokens the draft always attends to besides --speculative-draft-window-size.", minimum=0),
    _spec("speculative-moe-runner-backend", "str", "speculative",
          "The runner backend for MoE in speculative decoding."),
    _spec("speculative-moe-a2a-backend", "choice", "speculative",
          "The backend for MoE A2A in speculative decoding.",
          choices=("none", "deepep", "mooncake", "nixl", "mori", "ascend_fuseep", "flashinfer", "megamoe",
                   "deepep_v2", "pplx", "ascend_tp")),
    _spec("speculative-draft-model-quantization", "str", "speculative",
          "The quantization method for the draft model."),
    _spec("speculative-skip-dp-mlp-sync", "bool", "speculative",
          "Skip the extra MLP sync before merging a new batch with speculative decoding + DP attention.",
          default=False),
    _spec("enable-multi-layer-eagle", "bool", "speculative",
          "Enable multi-layer Eagle speculative decoding.", default=False),
    _spec("speculative-adaptive", "bool", "speculative",
          "Adaptive speculative decoding: adjusts num_steps at run time from the acceptance rate.", default=False),
    _spec("speculative-adaptive-config", "str", "speculative",
          "A JSON config file for adaptive speculative decoding (its 'strategy': 'ema' or 'throughput_aware')."),
    _spec("speculative-ngram-min-bfs-breadth", "int", "speculative",
          "The minimum breadth for BFS in ngram speculative decoding.", default=1, minimum=1),
    _spec("speculative-ngram-max-bfs-breadth", "int", "speculative",
          "The maximum breadth for BFS in ngram speculative decoding (NGRAM's topk).", default=10, minimum=1),
    _spec("speculative-ngram-match-type", "choice", "speculative", "The match type for the cache tree.",
          default="BFS", choices=("BFS", "PROB")),
    _spec("speculative-ngram-max-trie-depth", "int", "speculative",
          "The max trie depth for ngram speculative decoding.", default=18, minimum=1),
    _spec("speculative-ngram-capacity", "int", "speculative",
          "The cache capacity for ngram speculative decoding.", default=10_000_000, minimum=1),
    _spec("speculative-ngram-external-corpus-path", "str", "speculative",
          "An external JSONL corpus to pre-load into SAM at startup."),
    _spec("speculative-ngram-external-sam-budget", "int", "speculative",
          "Draft nodes reserved for the external SAM subtree in ngram speculative decoding.", default=0, minimum=0),
    _spec("speculative-ngram-external-corpus-max-tokens", "int", "speculative",
          "Fail startup if the tokenized external ngram corpus exceeds this many tokens.",
          default=10_000_000, minimum=1),
]

_CAPACITY = [
    _spec("mem-fraction-static", "float", "capacity",
          "The fraction of GPU memory for static allocation (weights and KV cache pool). Lower it on OOM.",
          minimum=0.0, maximum=1.0, exclusive_min=True, exclusive_max=True),
    _spec("max-running-requests", "int", "capacity",
          "The maximum number of running requests (SGLang derives it from the KV pool when unset).", minimum=1),
    _spec("max-total-tokens", "int", "capacity",
          "The maximum number of tokens in the memory pool (computed from the memory fraction when unset).",
          minimum=1),
    _spec("max-prefill-tokens", "int", "capacity", "The maximum number of tokens in a prefill batch.",
          default=16384, minimum=1),
    _spec("chunked-prefill-size", "int", "capacity",
          "The maximum number of tokens in a chunk for chunked prefill; -1 disables chunked prefill.",
          minimum=1, special=("-1",)),
    _spec("context-length", "int", "capacity",
          "The model's maximum context length (defaults to the model's config.json).", minimum=1),
    _spec("cuda-graph-config", "json", "capacity",
          "Per-phase CUDA graph settings as JSON, e.g. "
          '{"decode":{"backend":"full","max_bs":256},"prefill":{"backend":"tc_piecewise"}}; wins over the '
          "per-phase --cuda-graph-* flags."),
    _spec("cuda-graph-backend-decode", "choice", "capacity", "CUDA graph backend for the decode phase.",
          choices=CUDA_GRAPH_BACKENDS),
    _spec("cuda-graph-backend-prefill", "choice", "capacity",
          "CUDA graph backend for the prefill phase (full is opt-in there; older releases refuse it).",
          choices=CUDA_GRAPH_BACKENDS),
    _spec("cuda-graph-max-bs-decode", "int", "capacity",
          "Maximum batch size captured for the decode CUDA graph.", minimum=1),
    _spec("cuda-graph-max-bs-prefill", "int", "capacity",
          "Maximum batch size captured for the prefill CUDA graph.", minimum=1),
    _spec("cuda-graph-bs-decode", "int_list", "capacity",
          "Explicit list of batch sizes to capture for the decode CUDA graph."),
    _spec("cuda-graph-bs-prefill", "int_list", "capacity",
          "Explicit list of batch sizes to capture for the prefill CUDA graph."),
    _spec("cuda-graph-tc-compiler", "choice", "capacity", "Compiler used by the tc_piecewise backend.",
          choices=("eager", "inductor")),
    _spec("disable-decode-cuda-graph", "bool", "capacity",
          "Disable the decode-phase CUDA graph (--cuda-graph-backend-decode=disabled).", default=False),
    _spec("disable-prefill-cuda-graph", "bool", "capacity",
          "Disable the prefill-phase CUDA graph (--cuda-graph-backend-prefill=disabled).", default=False),
    _spec("cuda-graph-max-bs", "int", "capacity",
          "Deprecated alias for --cuda-graph-max-bs-decode.", minimum=1, deprecated=True),
    _spec("cuda-graph-bs", "int_list", "capacity", "Deprecated alias for --cuda-graph-bs-decode.",
          deprecated=True),
    _spec("disable-cuda-graph", "bool", "capacity",
          "Deprecated. Use --cuda-graph-backend-{decode,prefill}=disabled instead.", default=False,
          deprecated=True),
    _spec("page-size", "int", "capacity", "The number of tokens in a KV cache page.", minimum=1),
    _spec("attention-backend", "str", "capacity", "The attention kernel backend (chosen by SGLang when unset)."),
    _spec("prefill-attention-backend", "str", "capacity", "The attention backend for prefill (overrides "
          "--attention-backend)."),
    _spec("decode-attention-backend", "str", "capacity", "The attention backend for decode (overrides "
          "--attention-backend)."),
    _spec("tp-size", "int", "capacity", "The tensor parallelism size.", default=1, minimum=1,
          aliases=("tp", "tensor-parallel-size")),
    _spec("dp-size", "int", "capacity", "The data parallelism size.", default=1, minimum=1,
          aliases=("dp", "data-parallel-size")),
    _spec("enable-dp-attention", "bool", "capacity", "Data parallelism for attention.", default=False),
    _spec("disable-overlap-schedule", "bool", "capacity",
          "Disable the overlap scheduler (CPU scheduling overlapped with the GPU worker).", default=False),
    _spec("enable-mixed-chunk", "bool", "capacity", "Mix prefill and decode in a batch.", default=False),
    _spec("enable-deterministic-inference", "bool", "capacity", "Batch-invariant, deterministic inference.",
          default=False),
]

_SERVER = [
    _spec("model-path", "str", "server",
          "The path of the model weights: a local folder or a Hugging Face repo ID.", aliases=("model",)),
    _spec("served-model-name", "str", "server", "The model name returned by /v1/models."),
    _spec("host", "str", "server", "The host of the HTTP server.", default="127.0.0.1"),
    _spec("port", "int", "server", "The port of the HTTP server.", default=30000, minimum=1, maximum=65535),
    _spec("enable-metrics", "bool", "server", "Enable Prometheus metrics.", default=False),
    _spec("decode-log-interval", "int", "server",
          "The log and metrics interval (in decode iterations) for decode batches.", default=40, minimum=1),
    _spec("log-level", "str", "server", "The logging level of all loggers.", default="info"),
    _spec("trust-remote-code", "bool", "server", "Allow custom model code from the Hub.", default=False),
]

_TABLE = [*_SPECULATIVE, *_CAPACITY, *_SERVER]

FLAGS: dict[str, FlagSpec] = {spec.name: spec for spec in _TABLE}
_ALIASES: dict[str, str] = {alias: spec.name for spec in _TABLE for alias in spec.aliases}


def bare(name: str) -> str:
    """`--name` without its dashes."""
    return name[2:] if name.startswith("--") else name


def canonical_name(name: str) -> str:
    """The table's name for a flag written as an alias (tp -> tp-size); unknown names come back bare."""
    name = bare(name)
    return _ALIASES.get(name, name)


def spec_for(name: str) -> FlagSpec | None:
    """The FlagSpec for a name, alias or `--name`; None when the table does not know it."""
    return FLAGS.get(canonical_name(name))


def groups() -> dict[str, list[FlagSpec]]:
    """The table by group, in table order (for forms and `unit show`)."""
    result: dict[str, list[FlagSpec]] = {}
    for spec in _TABLE:
        result.setdefault(spec.group, []).append(spec)
    return result
