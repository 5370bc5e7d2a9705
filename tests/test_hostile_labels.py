"""A trial label as long as a paste (a flag value of 100 KB makes a change label that long) or full of control
characters, read from a session file: `session show` answers in the time it takes for a short one (rich's
highlighter on a 200,000-character line ran for minutes), and the panel's Trials list keeps its numbers on screen
(the label column grew to the label's width and pushed tok/s and status off it). The label is kept whole in the
file; only what is drawn is cut."""

from __future__ import annotations

import subprocess
from pathlib import Path

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, load_session, save_session
from specdec_tui.ui.app import make_app
from specdec_tui.ui.textual_compat import full_frame_text
from tests.tmux_session import program

from .ui_helpers import OFFLINE_UNIT, started, wait_for

PASTE = "\x1b]0;PWNED\x07" + "A" * 200_000  # one word, no space rich could wrap at


def long_label_session() -> Session:
    level = LevelResult(concurrency=1, requests=4, output_tok_s=123.4)
    return Session(host="demo", unit="sglang-demo.service",
                   trials=[Trial(id=1, unit_text=OFFLINE_UNIT, status="ok", label=PASTE, levels=[level],
                                 profile=BenchProfile(concurrency=(1,)))])


def test_session_show_of_a_huge_label_answers_and_keeps_it_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    save_session(long_label_session(), path)
    result = subprocess.run([*program(), "session", "show", str(path)], capture_output=True, timeout=60, text=True)
    assert result.returncode == 0, result.stderr
    assert "123.4" in result.stdout and "Traceback" not in result.stderr
    assert "\x1b" not in result.stdout
    assert load_session(path).trials[0].label == PASTE  # nothing lost


async def test_the_trials_list_keeps_its_numbers_beside_a_huge_label() -> None:
    app = make_app(Config(), None, long_label_session(), session_path=None)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await pilot.press("5")
        await wait_for(pilot, lambda: "123.4" in full_frame_text(app), "the trial's c=1 tok/s on the Trials tab")
        frame = full_frame_text(app)
        row = next(line for line in frame.splitlines() if "123.4" in line)
        assert "AAAA" in row and "…" in row and "ok" in row, row
        assert "PWNED" not in frame


def test_session_list_names_the_best_trial_in_short(tmp_path: Path) -> None:
    """The sessions list (`session list`, the `o` screen) named the best c=1 trial by its whole label: the row of
    a session with a pasted label was drawn empty, its file name pushed off the screen."""
    from specdec_tui.loop.sessions import list_sessions

    save_session(long_label_session(), tmp_path / "s.toml")
    (row,) = list_sessions(tmp_path)
    assert row.best_c1_tok_s == 123.4
    assert row.best_c1_trial.startswith("AAAA") and row.best_c1_trial.endswith("…")
    assert len(row.best_c1_trial) <= 60


def test_the_html_and_markdown_reports_show_the_label_cut_and_as_words(tmp_path: Path) -> None:
    """The HTML report drew a 200,000-character label into its charts' legends (matplotlib: 'Glyph 27 missing',
    'axes sizes collapsed to zero', printed raw on stderr; 39 s) and wrote its escape codes into the page and the
    Markdown; `cat report.md` ran them. The reports show the label as the tables do; csv and json keep it whole."""
    import json

    path = tmp_path / "s.toml"
    save_session(long_label_session(), path)
    for fmt in ("html", "md", "json"):
        out = tmp_path / f"r.{fmt}"
        result = subprocess.run([*program(), "session", "export", str(path), "--format", fmt, "-o", str(out)],
                                capture_output=True, timeout=120, text=True)
        assert result.returncode == 0, result.stderr
        assert "Glyph" not in result.stderr and "collapsed" not in result.stderr, result.stderr
        text = out.read_text(encoding="utf-8")
        if fmt == "json":
            assert PASTE in json.loads(text)["trials"][0]["label"]  # the data keeps the label whole
            continue
        assert "\x1b" not in text and "\x07" not in text and "PWNED" not in text
        assert "123.4" in text and "AAAA…" in text and "A" * 100 not in text


def test_a_csv_export_to_the_terminal_runs_no_escape_code_and_one_to_a_pipe_keeps_the_label_whole(tmp_path: Path) -> None:
    """`session export --format csv` with no -o printed the label's OSC sequence to the terminal as it was (the
    terminal ran it: a title, a clipboard write); on a terminal the export is words, through a pipe or to a file
    the data stays whole."""
    import os
    import pty

    path = tmp_path / "s.toml"
    save_session(long_label_session(), path)
    command = [*program(), "session", "export", str(path), "--format", "csv"]
    piped = subprocess.run(command, capture_output=True, timeout=60, text=True)
    assert piped.returncode == 0 and PASTE in piped.stdout  # the data whole where a program reads it
    leader, follower = pty.openpty()
    out = b""
    try:
        shown = subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL)
        os.close(follower)
        while True:  # read as it writes: a terminal's buffer holds less than the 200 KB label
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO once the writer is gone and the buffer read
                break
            if not chunk:
                break
            out += chunk
        shown.wait(timeout=60)
    finally:
        os.close(leader)
    assert shown.returncode == 0
    assert b"123.4" in out and b"AAAA" in out
    assert b"\x1b" not in out and b"\x07" not in out, out[:200]


def test_a_csv_export_does_not_hand_a_spreadsheet_a_formula_from_a_label() -> None:
    """A session file from someone else whose label is `=HYPERLINK(...)`: its csv export, opened in a spreadsheet,
    ran the label as a formula. The cell starts with `'` (shown as text); numbers and flags are unchanged."""
    import csv
    import io

    from specdec_tui.core.session_export import to_csv

    session = long_label_session()
    for label in ('=HYPERLINK("http://127.0.0.1/x","click")', "@SUM(1+1)", "+1+cmd|' /C calc'!A0", "-2+3"):
        session.trials[0].label = label
        (row,) = list(csv.DictReader(io.StringIO(to_csv(session))))
        assert row["label"] == "'" + label, row["label"]
        assert row["output_tok_s"] == "123.4"
    session.trials[0].label = "steps=3"
    (row,) = list(csv.DictReader(io.StringIO(to_csv(session))))
    assert row["label"] == "steps=3"
