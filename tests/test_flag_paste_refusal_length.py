"""A paste refused by a flag's field is quoted short: a 100 KB line of 200-character words pasted into a field (in
tmux, the demo) was quoted whole, and its notification covered the panel's whole height."""

from __future__ import annotations

from specdec_tui.ui.widgets.flag_input import pasted_value

LINE = ("m-$HOME %Z " + "x" * 200 + " ") * 480  # ~100 KB, one line, every word shorter than a cut word's limit


def test_a_refused_paste_of_many_words_is_quoted_in_a_line() -> None:
    for text in (LINE, "--served-model-name " + LINE, "--" + "y" * 100_000 + " 1"):
        refused = pasted_value("served-model-name", text).refused
        assert refused.endswith("Nothing was written."), refused[:200]
        assert len(refused) < 200, len(refused)
        assert "…" in refused
