"""The HTML report of a session whose text is hostile (a label, host or unit name is the session file's, and a
session file can come from anyone): the report is written, every text reads as typed, and nothing from the file
is markup, a control character or a bidi override on the page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial, save_session

EVIL = ("\x1b]0;pwned\x07\x1b[31mRED\u202eevil[bold]B[/bold]<script>alert(1)</script></style>"
        "<a href='javascript:alert(2)'>x</a>\x00\r")
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def _session(labels: list[str], host: str = "gpu-a", unit: str = "sglang.service") -> Session:
    trials = [Trial(id=i, unit_text="", flags={"speculative-num-steps": str(i)}, host=host, status="ok", label=label,
                    levels=[LevelResult(concurrency=c, requests=8, output_tok_s=100.0 * i * c,
                                        per_request_tok_s=Dist(p50=100.0 * i), ttft_ms=Dist(p99=100.0))
                            for c in (1, 4)])
              for i, label in enumerate(labels, start=1)]
    return Session(host=host, unit=unit, trials=trials)


def _export_html(tmp_path: Path, session: Session) -> tuple[subprocess.CompletedProcess[str], str]:
    session_file = tmp_path / "s.toml"
    save_session(session, session_file)
    out = tmp_path / "report.html"
    run = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "export", str(session_file), "--format",
                          "html", "-o", str(out)], capture_output=True, text=True, timeout=120)
    return run, out.read_text(encoding="utf-8") if out.exists() else ""


def test_a_label_with_dollar_signs_is_drawn_as_typed_not_as_matplotlib_math(tmp_path: Path) -> None:
    """Two `$` in a label began matplotlib's mathtext: "$x^{$" or an unknown macro raised from savefig and the
    export ended in a traceback; "$5 to $7" lost its dollars."""
    labels = [r"$\undefinedmacro{x}$", "$x^{$", "$5 to $7"]
    run, html = _export_html(tmp_path, _session(labels))
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    for i, label in enumerate(labels, start=1):  # in both charts (legend and point label), as typed
        assert html.count(f"#{i} {label}</text>") == 2, label


def test_hostile_text_in_a_session_is_words_on_the_page(tmp_path: Path) -> None:
    run, html = _export_html(tmp_path, _session([EVIL + "one", "</style><script>alert(3)</script>"],
                                                host=EVIL + "host", unit=EVIL + "unit"))
    assert run.returncode == 0, run.stderr
    assert not RAW.findall(html)  # no escape code, NUL, CR or bidi override from the file
    assert "<script" not in html and html.count("</style>") == html.count("<style") and "<a href" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text
    assert "REDevil[bold]B[/bold]&lt;script&gt;" in html  # the words are kept, the codes gone
    assert "<title>Speculative decoding session: REDevil[bold]B[/bold]&lt;script&gt;" in html
