"""No text from outside commands the user's terminal (issue 36, Security 3): unit text from a host (comments,
`Description=`, flag values after systemd unescaping) and session data (trial labels, model names) reach the
panel and `unit show/check`, `session show/list/compare` as words; `journal parse` also drops C1 controls, BEL,
BS, SO/SI and NUL. Outputs are captured from real processes (and, for the panel, what Textual writes to the
terminal for a full frame) and checked for every escape and control byte."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import LevelResult, ServerFacts
from specdec_tui.core.session import Session, Trial, save_session
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.ui.app import make_app
from specdec_tui.ui.textual_compat import full_frame_text
from tests.tmux_session import program

from .ui_helpers import OFFLINE_UNIT, started, wait_for

TITLE = "\x1b]0;PWNED\x07"  # OSC 0: the window title
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: write the clipboard
CLEAR = "\x1b[2J\x1b[H"  # CSI 2J: clear the screen
C1 = "\x9b2J\x9d0;PWNED\x9c"  # the same, as 8-bit C1 controls
# Everything a terminal takes as a command: C0 but tab and newline, DEL, C1.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# The unit as a host could hold it: the payloads in a comment, Description= and a flag value written with
# systemd's C escapes (\x1b), which the unit parser turns into the bytes themselves.
HOSTILE_UNIT = (OFFLINE_UNIT
                .replace("[Unit]\n", f"[Unit]\n# set by ops {CLIPBOARD}{C1}\n", 1)
                .replace("Description=", f"Description=evil{TITLE}", 1)
                .replace("ExecStart=/usr/bin/python3",
                         r'ExecStart=/usr/bin/python3 --chat-template "m\x1b]0;PWNED\x07\x1b[2Jx\xc2\x9b"', 1))


def hostile_session() -> Session:
    level = LevelResult(concurrency=1, requests=4, output_tok_s=100.0)
    trials = [Trial(id=1, unit_text=HOSTILE_UNIT, status="ok", label=f"base{TITLE}{CLEAR}", levels=[level],
                    facts=ServerFacts(model=f"qwen{CLIPBOARD}{C1}"), profile=BenchProfile(concurrency=(1,))),
              Trial(id=2, unit_text=HOSTILE_UNIT, status="failed", label=f"steps{C1}=4", levels=[level],
                    failure=f"server said {CLEAR}no", facts=ServerFacts(model=f"qwen{TITLE}"),
                    profile=BenchProfile(concurrency=(1,)))]
    return Session(host=f"gpu{TITLE}", unit="sglang.service", trials=trials)


def assert_words_only(output: str, where: str) -> None:
    found = CONTROL.search(output)
    assert found is None, f"{where}: {found[0]!r} reached the terminal at {output[max(0, found.start() - 40):found.end() + 40]!r}"


def run(*argv: str, stdin: bytes | None = None) -> str:
    result = subprocess.run([*program(), *argv], input=stdin, capture_output=True, timeout=60)
    out = result.stdout.decode() + result.stderr.decode()
    assert "Traceback" not in out, out
    return out


def test_the_sanitiser_removes_escapes_and_controls_and_keeps_words() -> None:
    assert terminal_safe(f"a{TITLE}b{CLIPBOARD}c{CLEAR}d{C1}e") == "abcde"
    assert terminal_safe("bell\x07 back\x08 so\x0e si\x0f nul\x00 cr\r del\x7f csi\x9b") == "bell back so si nul cr del csi"
    assert terminal_safe("tab\tand\nnewline, ünïcode ✓") == "tab\tand\nnewline, ünïcode ✓"
    plain = "nothing to remove"
    assert terminal_safe(plain) is plain


def test_unit_show_and_check_print_the_unit_s_text_as_words(tmp_path: Path) -> None:
    unit = tmp_path / "sglang.service"
    unit.write_text(HOSTILE_UNIT)
    shown = run("unit", "show", str(unit))
    assert "--chat-template" in shown
    assert_words_only(shown, "unit show")
    assert_words_only(run("unit", "check", str(unit)), "unit check")


def test_session_show_list_and_compare_print_labels_and_models_as_words(tmp_path: Path) -> None:
    from specdec_tui.core.paths import sessions_dir

    sessions_dir().mkdir(parents=True, exist_ok=True)
    path = sessions_dir() / "hostile.toml"
    save_session(hostile_session(), path)
    shown = run("session", "show", str(path))
    assert "base" in shown and "steps=4" in shown
    assert_words_only(shown, "session show")
    listed = run("session", "list")
    assert "hostile.toml" in listed
    assert_words_only(listed, "session list")
    compared = run("session", "compare", str(path), "1", "2")
    assert_words_only(compared, "session compare")


def test_journal_parse_drops_c1_bel_bs_so_si_and_nul() -> None:
    log = ("[2026-10-02 17:39:00] a remote said\x07\x08\x0e\x0f\x00 \x9b2J\x9d0;PWNED\x9c done\n"
           f"[2026-10-02 17:39:01] {TITLE}{CLIPBOARD}{CLEAR}ready\r\n")
    parsed = run("journal", "parse", stdin=log.encode())
    assert "a remote said" in parsed and "done" in parsed and "ready" in parsed
    assert_words_only(parsed, "journal parse")


async def test_the_panel_draws_outside_text_as_words(tmp_path: Path) -> None:
    """What Textual would write to the terminal for a full frame of the Config and Trials tabs."""
    app = make_app(Config(), None, hostile_session(), session_path=None)
    async with app.run_test(size=(160, 50)) as pilot:
        frames = []
        for tab, visible in (("1", "evil"), ("5", "steps=4")):
            await pilot.press(tab)
            await wait_for(pilot, lambda v=visible: v in full_frame_text(app), f"{visible!r} drawn")
            frames.append(full_frame_text(app))
    for frame in frames:
        for payload in (TITLE, CLIPBOARD, "\x1b]", "\x1b[2J", "\x9b", "\x9d", "\x9c", "\x07"):
            assert payload not in frame, f"{payload!r} reached the terminal"


async def test_a_drawn_line_passes_textual_s_filters_and_the_terminal_safe_one_as_one_filter() -> None:
    """Textual makes a new strip for each filter a line passes: chained, the colour filter and the terminal-safe one
    make one (issue 34), and the same chain object across frames keeps each strip's filter cache answering."""
    from rich.color import ColorType
    from rich.segment import Segment
    from rich.style import Style
    from textual.color import Color
    from textual.strip import Strip

    app = make_app(Config(), None, hostile_session(), session_path=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)  # not closed in the middle of the form's build (Textual's Select raced that)
        filters = app.get_line_filters()
        assert len(filters) == 1 and app.get_line_filters()[0] is filters[0]
        drawn = Strip([Segment(f"a{TITLE}b", Style(color="red"))]).apply_filter(filters[0], Color(0, 0, 0))
        assert "\x1b" not in drawn.text and "\x07" not in drawn.text and drawn.text.startswith("a")
        assert all(segment.style is None or segment.style.color is None
                   or segment.style.color.type is ColorType.TRUECOLOR for segment in drawn)  # Textual's filter ran
