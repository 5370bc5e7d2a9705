"""The Markdown and JSON exports carry a session's labels and names, text from outside (a file someone sent):
the Markdown put a `<script>` or a link in a label raw into the .md (many viewers render both), a backtick in a
label closed its code span early, and the JSON kept U+202E raw (a viewer turns the rest of the line around)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, save_session

LABEL = "fast<script>alert(1)</script>`<img src=x onerror=alert(2)>`"
LEVEL = LevelResult(concurrency=1, requests=4, output_tok_s=100.0)


def exported(tmp_path: Path, fmt: str, session: Session) -> str:
    """What `specdec-tui session export FILE --format FMT -o OUT` writes."""
    path, out = tmp_path / "s.toml", tmp_path / f"out.{fmt}"
    save_session(session, path)
    done = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "export", str(path), "--format", fmt,
                           "-o", str(out)], capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


def test_the_markdown_export_shows_html_in_a_label_and_a_link_in_the_host_as_text(tmp_path: Path) -> None:
    trials = [Trial(id=i, unit_text="[Service]\nExecStart=/bin/true\n", label=LABEL if i == 2 else "base",
                    flags={"speculative-num-steps": str(i)}, levels=[LEVEL]) for i in (1, 2)]
    md = exported(tmp_path, "md", Session(host="<b>box</b>[x](https://evil.example)", unit="u.service", trials=trials))
    code_span = "- trial 2 `` fast<script>alert(1)</script>`<img src=x onerror=alert(2)>` ``: Peak"
    assert code_span in md, md  # a fence longer than the label's backticks: it cannot close early
    assert md.count("<script>") == 1, md  # only there, where it is shown as written
    cell = next(line for line in md.splitlines() if line.startswith("| 2 |"))
    assert "fast\\<script\\>alert(1)\\</script\\>\\`\\<img src=x onerror=alert(2)\\>\\` |" in cell, cell
    assert "# Speculative decoding session: \\<b\\>box\\</b\\>\\[x\\](https://evil.example) / u.service" in md, md[:200]
    assert "max_tokens 256" in md


def test_the_json_export_writes_a_bidi_override_as_an_escape_and_keeps_the_label(tmp_path: Path) -> None:
    label = "steps=3\u202e1=spets"
    trials = [Trial(id=1, unit_text="[Service]\nExecStart=/bin/true\n", label=label, levels=[LEVEL])]
    text = exported(tmp_path, "json", Session(host="h", unit="u.service", trials=trials))
    assert "\u202e" not in text and "\\u202e" in text
    assert json.loads(text)["trials"][0]["label"] == label  # the same data for a program
