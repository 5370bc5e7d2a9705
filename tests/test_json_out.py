"""Issue 36, point 3: `--json` outputs carry outside text (journal lines, labels, unit text) as data, never as
terminal commands: orjson escapes C0 controls but wrote DEL and the 8-bit C1 controls (CSI 0x9b, OSC 0x9d) raw."""

from __future__ import annotations

import json
import subprocess
import sys

from specdec_tui.core.json_out import json_bytes, json_text

HOSTILE = "steps\x9b2J\x9d0;pwned\x07 \x1b]52;c;aGk=\x07 del\x7f é ✓"


def test_every_control_character_is_escaped_and_the_data_is_unchanged() -> None:
    out = json_bytes({"label": HOSTILE, 3: [HOSTILE]}, non_str_keys=True, indent=True)
    assert not any(0x80 <= ord(c) <= 0x9f for c in out.decode()) and b"\x7f" not in out and b"\x1b" not in out
    assert b"\x07" not in out
    assert json.loads(out) == {"label": HOSTILE, "3": [HOSTILE]}  # the same data for a JSON reader
    assert "é ✓" in json_text(HOSTILE)  # printable text beyond ASCII stays as it is


def test_journal_parse_json_of_a_hostile_line_prints_no_raw_control(tmp_path) -> None:
    log = tmp_path / "journal.txt"
    log.write_text(f"[2026-12-04 10:00:00] Decode batch. #running-req: 1 {HOSTILE}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "specdec_tui", "journal", "parse", str(log), "--json"],
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    text = done.stdout.decode()
    assert text.strip() and not any(0x7f <= ord(c) <= 0x9f or c in "\x1b\x07" for c in text), ascii(text)
    assert "\\u009b" in text  # the character is still there, as data


def test_no_command_writes_json_past_the_escaping() -> None:
    """One owner: every JSON a command prints goes through core.json_out (a new verb that calls orjson or
    json.dumps for its output directly would bring raw C1 controls back)."""
    from pathlib import Path

    import specdec_tui.cli

    offenders = [p.name for p in Path(specdec_tui.cli.__file__).parent.glob("*.py")
                 if any(call in p.read_text(encoding="utf-8") for call in ("orjson.dumps(", "json.dumps("))]
    assert offenders == [], offenders
