"""Values no server can run with that the release lets through: the panel's own refusals, not start-up checks.

SGLang 0.5.23's parser takes any integer for the draft tree's sizes, the running-request cap and the CUDA-graph batch
size, and any float for the memory fraction; no start-up hook bounds them (read in `srt/server_args.py` and
`srt/arg_groups/`: only UNO's steps and the DeepSeek-V4 replay budget are checked). A unit with
`--speculative-num-steps -1` or `--mem-fraction-static 8` therefore starts, loads the model for minutes and only
then fails or misbehaves. Refused here as errors, so no push, sweep or tune spends a launch on one (a tune's space
`steps=-1` included).
"""

from __future__ import annotations

from specdec_tui.core.flag_issue import Issue
from specdec_tui.core.flag_rules import CHECKED_RELEASES, checks_of
from specdec_tui.core.flag_rules_values import Flags, float_flag, int_flag

COUNTS = {  # a flag whose value counts something → what it counts (none is below 0)
    "speculative-num-steps": "draft steps",
    "speculative-eagle-topk": "branches a draft step keeps",
    "speculative-num-draft-tokens": "draft tokens",
    "max-running-requests": "requests running at once",
    "cuda-graph-max-bs-decode": "requests in a decode CUDA-graph batch",
}
FRACTION = "mem-fraction-static"


def range_rules(flags: Flags, release: str = CHECKED_RELEASES[-1]) -> list[Issue]:
    """Errors for values out of their range (names canonical, without "--"); a value that is not a number was
    refused by the parser already and is left alone."""
    unchecked = (f"SGLang {checks_of(release)} takes it without a check and fails, or runs wrongly, only after the "
                 "model has loaded: the panel refuses it")
    issues: list[Issue] = []
    for flag, what in COUNTS.items():
        number = int_flag(flags, flag)
        if number is not None and number < 0:
            issues.append(Issue("error", flag, f"--{flag} {number}: a count of {what} cannot be below 0; "
                                f"{unchecked}."))
    fraction = float_flag(flags, FRACTION, None)
    if fraction is not None and not 0 < fraction <= 1:
        issues.append(Issue("error", FRACTION, f"--{FRACTION} {fraction:g} is not a share of the GPU's memory; "
                            f"{unchecked} (write a fraction above 0 and at most 1, e.g. 0.85)."))
    return issues
