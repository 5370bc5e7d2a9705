"""Unicode's bidirectional controls (the "Trojan Source" ones: embeddings, overrides, isolates and the Arabic letter
mark) in outside text are removed before a terminal sees it, like escape codes: in a terminal that does bidi,
U+202E turns the rest of a line around, so a unit's flag value or a label could read as something it is not.
A newcomer's pass found them drawn as they are in `unit show` and the Config form."""

from __future__ import annotations

import re
from pathlib import Path

from specdec_tui.core.config import Config
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.ui.app import make_app
from specdec_tui.ui.textual_compat import full_frame_text

from .test_terminal_injection import run
from .ui_helpers import OFFLINE_UNIT, wait_for

BIDI = re.compile("[\u061c\u202a-\u202e\u2066-\u2069]")
# a flag value and the Description written with them: "qwen" shown as "neqw" reversed, a label likewise
HOSTILE_UNIT = (OFFLINE_UNIT.replace("Description=", "Description=\u202eevil\u202c ", 1)
                .replace("ExecStart=/usr/bin/python3",
                         'ExecStart=/usr/bin/python3 --chat-template "\u2067neqw\u2069\u061c"', 1))


def test_the_sanitiser_removes_bidi_controls_and_keeps_the_words_and_right_to_left_text() -> None:
    assert terminal_safe("a\u202eb\u202ac\u202bd\u202ce\u202df\u2066g\u2067h\u2068i\u2069j\u061ck") == "abcdefghijk"
    assert terminal_safe("עברית and العربية ✓") == "עברית and العربية ✓"  # letters stay; only the controls go


def test_unit_show_and_check_print_no_bidi_control(tmp_path: Path) -> None:
    unit = tmp_path / "sglang.service"
    unit.write_text(HOSTILE_UNIT)
    assert "neqw" in run("unit", "show", str(unit))
    for argv in (("unit", "show", str(unit)), ("unit", "check", str(unit))):
        out = run(*argv)
        assert BIDI.search(out) is None, f"{' '.join(argv[:2])}: a bidi control reached the terminal: {out!r}"


async def test_the_panel_draws_no_bidi_control() -> None:
    trial = Trial(id=1, unit_text=HOSTILE_UNIT, status="ok", label="base\u202e4=spets")
    app = make_app(Config(), None, Session(host="gpu", unit="sglang.service", trials=[trial]), session_path=None)
    async with app.run_test(size=(160, 50)) as pilot:
        frames = []
        for tab, visible in (("1", "evil"), ("5", "spets")):
            await pilot.press(tab)
            await wait_for(pilot, lambda v=visible: v in full_frame_text(app), f"{visible!r} drawn")
            frames.append(full_frame_text(app))
    for frame in frames:
        assert BIDI.search(frame) is None, "a bidi control reached the terminal"
