"""Real-world-looking units judged by the bundled SGLang 0.5.23 (its own parser rebuilt from the schema, and the
start-up checks of its hooks): a unit the release refuses is refused with the release's reason, a unit it starts
is not refused. `unit check` prints the same and exits 1 exactly when the release would not start.

# upstream 0.5.23: ServerArgs.add_cli_args (dumped into core/sglang_schema/schemas/0.5.23.json by
#   tools/sglang_schema.py), srt/arg_groups/speculative_hook.py, parallel_hook.py, argparse_actions.py,
#   srt/model_executor/cuda_graph_config.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.core.flags import validate_unit
from specdec_tui.core.unit import UnitFile

HEAD = """[Unit]
Description=SGLang {name}

[Service]
Environment=CUDA_VISIBLE_DEVICES=0,1,2,3
ExecStart=/opt/sglang/.venv/bin/python -m sglang.launch_server \\
    --model-path {model} \\
"""
TAIL = """    --host 0.0.0.0 \\
    --port 30000
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""


def unit(name: str, model: str, *flags: str) -> str:
    return HEAD.format(name=name, model=model) + "".join(f"    {f} \\\n" for f in flags) + TAIL


# name, flags, the words of the refusal (None: 0.5.23 starts it)
UNITS: list[tuple[str, tuple[str, ...], str | None]] = [
    ("qwen-mtp-tp-prefix", ("--tp 4", "--speculative-algorithm NEXTN", "--speculative-num-steps 3",
                            "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4"), None),
    ("old-graph-max-bs", ("--tp-size 8", "--cuda-graph-max-bs 256"),
     "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"),
    ("graph-max-bs-decode", ("--tp-size 8", "--cuda-graph-max-bs-decode 256"), None),
    ("piecewise-prefill", ("--cuda-graph-backend-prefill tc_piecewise",),
     "argument --cuda-graph-backend-prefill: tc_piecewise was removed; select breakable, full, or disabled"),
    ("breakable-prefill", ("--cuda-graph-backend-prefill breakable",), None),
    ("skip-dp-mlp-sync", ("--speculative-algorithm EAGLE", "--speculative-draft-model-path d",
                          "--speculative-num-steps 2", "--speculative-eagle-topk 1",
                          "--speculative-num-draft-tokens 3", "--speculative-skip-dp-mlp-sync"),
     "unrecognized arguments: --speculative-skip-dp-mlp-sync"),
    ("tc-compiler", ("--cuda-graph-tc-compiler inductor",), "unrecognized arguments: --cuda-graph-tc-compiler inductor"),
    ("attn-dp", ("--tp-size 8", "--attn-dp-size 8", "--enable-dp-lm-head"), None),
    ("dp-attention-deprecated", ("--tp-size 8", "--dp-size 8", "--enable-dp-attention"), None),
    ("draft-quant-choice", ("--speculative-algorithm EAGLE3", "--speculative-draft-model-path d",
                            "--speculative-num-steps 3", "--speculative-eagle-topk 1",
                            "--speculative-num-draft-tokens 4", "--speculative-draft-model-quantization fp8"), None),
    ("draft-quant-refused", ("--speculative-algorithm EAGLE3", "--speculative-draft-model-path d",
                             "--speculative-num-steps 3", "--speculative-eagle-topk 1",
                             "--speculative-num-draft-tokens 4", "--speculative-draft-model-quantization int4"),
     "argument --speculative-draft-model-quantization: invalid choice: 'int4'"),
    ("moe-runner-refused", ("--speculative-algorithm NEXTN", "--speculative-moe-runner-backend cutlass_moe"),
     "argument --speculative-moe-runner-backend: invalid choice: 'cutlass_moe'"),
    ("dflash-window-alias", ("--speculative-algorithm DFLASH", "--speculative-draft-model-path d",
                             "--speculative-dflash-draft-window-size 512"),
     "unrecognized arguments: --speculative-dflash-draft-window-size 512"),
    ("prefill-seq-len", ("--cuda-graph-max-seq-len-prefill 4096",), None),
    ("spec-trace-dir", ("--spec-trace-dir /tmp/t",), None),  # exists in 0.5.23 (the hand table did not know it)
    ("standalone-block-verify", ("--speculative-algorithm STANDALONE", "--speculative-draft-model-path d",
                                 "--speculative-num-steps 3", "--speculative-eagle-topk 1",
                                 "--speculative-num-draft-tokens 4", "--speculative-use-block-verification"),
     "--speculative-use-block-verification only supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK."),
    ("ngram-block-verify", ("--speculative-algorithm NGRAM", "--speculative-use-block-verification"),
     "--speculative-use-block-verification only supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK."),
    ("eagle-block-verify", ("--speculative-algorithm NEXTN", "--speculative-num-steps 3", "--speculative-eagle-topk 1",
                            "--speculative-num-draft-tokens 4", "--speculative-use-block-verification"), None),
    ("rejection-deterministic-cuda", ("--speculative-algorithm NEXTN", "--speculative-num-steps 3",
                                      "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4",
                                      "--speculative-use-rejection-sampling", "--enable-deterministic-inference"), None),
    ("dflash-dp-no-lm-head", ("--speculative-algorithm DFLASH", "--speculative-draft-model-path d", "--attn-dp-size 2"),
     "DFLASH with dp attention requires --enable-dp-lm-head."),
    ("standalone-dp", ("--speculative-algorithm STANDALONE", "--speculative-draft-model-path d",
                       "--speculative-num-steps 3", "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4",
                       "--attn-dp-size 4"),
     "Currently standalone speculative decoding does not support dp attention."),
    ("sink-without-window", ("--speculative-algorithm NEXTN", "--speculative-num-steps 3", "--speculative-eagle-topk 1",
                             "--speculative-num-draft-tokens 4", "--speculative-draft-sink-size 4"),
     "--speculative-draft-sink-size requires --speculative-draft-window-size."),
    ("nextn-window", ("--speculative-algorithm NEXTN", "--speculative-num-steps 3", "--speculative-eagle-topk 1",
                      "--speculative-num-draft-tokens 4", "--speculative-draft-window-size 1024"), None),
    ("monokernel-deprecated", ("--monokernel-backend amd",), None),
]


@pytest.mark.parametrize(("name", "flags", "refusal"), UNITS, ids=[u[0] for u in UNITS])
def test_a_unit_is_refused_exactly_when_0_5_23_refuses_it(name: str, flags: tuple[str, ...], refusal: str | None,
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = unit(name, "Qwen/Qwen3.5-122B-A10B", *flags)
    errors = [i.message for i in validate_unit(UnitFile.parse(text)) if i.level == "error"]
    if refusal is None:
        assert errors == []
    else:
        assert len(errors) == 1 and refusal in errors[0] and errors[0].startswith("SGLang 0.5.23 ")
    path = tmp_path / f"{name}.service"
    path.write_text(text)
    assert main(["unit", "check", str(path)]) == (0 if refusal is None else 1)
    out = capsys.readouterr().out
    assert refusal is None or "error: SGLang 0.5.23 " in out and refusal in out


def test_deprecations_are_warnings_in_sglangs_words() -> None:
    text = unit("dp", "m", "--dp-size 4", "--enable-dp-attention", "--monokernel-backend amd")
    warnings = [i.message for i in validate_unit(UnitFile.parse(text)) if i.level == "warning"]
    assert any("'--enable-dp-attention' is deprecated and will be removed in a future release. Use '--attn-dp-size "
               "<dp-size>' instead." in w for w in warnings)
    assert any("'--monokernel-backend' is deprecated and will be removed in a future release. Use "
               "'--enable-amd-monokernel' instead." in w for w in warnings)
