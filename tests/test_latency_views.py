"""Issue 17 points 2 and 3 in the headless views, compare and the exports: queueing levels marked with the
server's own number, each trial's best level within its TTFT limit, and the settings each trial really ran
with (not the session's default profile)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from rich.console import Console

from specdec_tui.cli.bench_output import LiveTable
from specdec_tui.cli.main import main
from specdec_tui.cli.render import comparison_lines, comparison_table, levels_table, session_table
from specdec_tui.core.compare import compare_trials
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.latency import LatencyLimit
from specdec_tui.core.results import ServerFacts
from specdec_tui.core.session import Session, Trial, dumps_session, load_session, save_session
from specdec_tui.core.session_export import to_csv, to_markdown
from tests.test_latency_cost import RUN, level

DEMO = BenchProfile(name="demo", concurrency=(1, 4, 16, 32, 64), max_tokens=128, ignore_eos=True, prompts="repetitive")
BEST = "Best within TTFT p99 ≤ 2 s: 402.1 tok/s at c=16; peak 426.2 at c=64 (queueing, TTFT p99 14.1 s)"


def session() -> Session:
    """The issue's afternoon: a session opened with the default profile, trials run with the demo's."""
    s = Session(host="demo", unit="sglang-demo.service", profile=BenchProfile())
    for i, scale in ((1, 0.9), (2, 1.0)):
        s.add(Trial(id=i, unit_text="", flags={"speculative-num-steps": str(i + 1)}, status="ok", label=f"steps={i + 1}",
                    facts=ServerFacts(model="qwen", max_running_requests=17), profile=DEMO,
                    levels=[level(lv.concurrency, round(lv.output_tok_s * scale, 1), lv.ttft_ms.p99 or 0) for lv in RUN]))
    return s


def text(renderable: object, width: int = 250) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def first(line: str) -> list[str]:
    """A table row's cells as words, the box lines left out."""
    return line.replace("│", " ").replace("┃", " ").split()


def test_levels_table_marks_queueing_levels_and_names_the_best_within_the_limit() -> None:
    out = text(levels_table(RUN, limit=LatencyLimit(17, 2.0)))
    rows = {cells[0]: line for line in out.splitlines() if (cells := first(line)) and cells[0].isdigit()}
    assert "queues: >17 running" in rows["32"] and "queues: >17 running" in rows["64"]
    assert "queues" not in rows["16"]
    assert BEST in " ".join(out.split())


def test_the_live_table_learns_the_servers_capacity_and_marks_queueing_levels() -> None:
    table = LiveTable(DEMO)
    table.set_facts(ServerFacts(max_running_requests=17))
    table.rows = list(RUN)
    rows = [line for line in text(table.render()).splitlines() if "queues: >17 running" in line]
    assert [first(line)[0] for line in rows] == ["32", "64"]


def test_session_table_shows_each_trials_settings_queueing_and_best_within_the_limit() -> None:
    out = text(session_table(session()))
    trial2 = next(line for line in out.splitlines() if "steps=3" in line)
    assert "128 tok · t=0 · ignore_eos · repetitive" in trial2
    assert "415.0 q>17" in trial2 and "426.2 q>17" in trial2 and "402.1 q>17" not in trial2
    assert "402.1 at c=16" in trial2 and "best, TTFT p99 ≤ limit" in " ".join(out.split())
    assert "q>N: more requests in flight than the server runs at once (N), the rest queue" in " ".join(out.split())


def test_session_show_header_names_the_settings_the_trials_ran(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    save_session(session(), path)
    assert main(["session", "show", str(path)]) == 0
    header = " ".join(capsys.readouterr().out.split("┏")[0].split())
    assert "trials ran profile demo: max_tokens 128, temperature 0, ignore_eos, prompts repetitive" in header
    assert "realistic" not in header


def test_compare_carries_queueing_and_each_sides_best_within_the_limit() -> None:
    s = session()
    cmp = compare_trials(s.trials[0], s.trials[1])
    lines = comparison_lines(cmp)
    assert f"B trial 2 (128 tok · t=0 · ignore_eos · repetitive): {BEST}" in lines
    rows = [line for line in text(comparison_table(cmp)).splitlines() if "queues" in line]
    assert [first(line)[0] for line in rows] == ["32", "64"]
    assert "A queues: >17 running, B queues: >17 running" in rows[0]


def test_markdown_and_html_carry_settings_queueing_and_the_best_within_the_limit() -> None:
    from specdec_tui.core.report_html import session_html

    s = session()
    md = to_markdown(s)
    assert "trials ran profile demo: max_tokens 128, temperature 0, ignore_eos, prompts repetitive" in md
    assert "ignore_eos false" not in md and "prompts realistic" not in md
    assert f"- trial 2 `steps=3`: {BEST}" in md
    assert "| 415.0 q>17 | 426.2 q>17 | 402.1 at c=16 |" in md
    assert "  - ran with profile demo: max_tokens 128" in md
    html = session_html(s)
    assert "trials ran profile demo: max_tokens 128, temperature 0, ignore_eos, prompts repetitive" in html
    assert "ignore_eos false" not in html
    assert BEST in html and 'title="queues: &gt;17 running">q&gt;17</span>' in html


def test_csv_says_which_levels_queued_and_which_stay_within_the_limit() -> None:
    rows = [r for r in csv.DictReader(io.StringIO(to_csv(session()))) if r["trial"] == "2"]
    assert [(r["concurrency"], r["queueing"], r["within_ttft_limit"]) for r in rows] == [
        ("1", "", "True"), ("4", "", "True"), ("16", "", "True"),
        ("32", "queues: >17 running", "False"), ("64", "queues: >17 running", "False")]


def test_a_session_file_written_before_the_limit_existed_loads_with_the_default(tmp_path: Path) -> None:
    path = tmp_path / "old.toml"
    path.write_text("\n".join(line for line in dumps_session(session()).splitlines() if "ttft_limit_s" not in line))
    assert [t.profile.ttft_limit_s for t in load_session(path).trials] == [2.0, 2.0]


def test_the_demo_marks_the_levels_above_the_servers_capacity(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The demo server runs 17 requests at once with steps 3 (as the seed's did): c=32 queues, c=1 does not."""
    code = main(["demo", "--workspace", str(tmp_path / "ws"), "--time-scale", "50", "--concurrency", "1,32",
                 "--requests", "4", "--steps", "3"])
    out = capsys.readouterr().out
    assert code == 0
    rows = {first(line)[0]: line for line in out.splitlines() if first(line) and first(line)[0] in ("1", "32")}
    assert "queues: >17 running" in rows["32"] and "queues" not in rows["1"]
    assert "Best within TTFT p99 ≤ 2 s: " in out
    server = next(line for line in out.splitlines() if line.startswith("server: "))
    assert "{" not in server and "speculative NEXTN (SGLang runs it as EAGLE) steps=3 topk=1 draft=4" in server, server  # issue 35 (10)


async def test_the_panels_compare_screen_names_each_sides_best_within_the_limit() -> None:
    from textual.app import App

    from specdec_tui.ui.screens.compare_screen import CompareScreen

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(CompareScreen(session(), 1, 2))

    app = Host()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        shown = " ".join(str(app.screen.query_one("#compare-capacity").render()).split())
        assert f"B trial 2 (128 tok · t=0 · ignore_eos · repetitive): {BEST}" in shown
