"""The shareable HTML report: one self-contained file with the trials table, the flag changes and both charts (SVG
drawn by matplotlib), and the trade-off's Pareto front as the seed's story makes it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial, save_session
from specdec_tui.core.trade_off import pareto_front, trade_off_points

# The seed's story: more steps, faster single requests, less capacity (and a fourth trial that buys nothing).
CURVES = {
    1: (123.0, {1: 123.0, 4: 440.0, 16: 1180.0, 32: 1390.0, 64: 1400.0}),
    2: (186.0, {1: 186.0, 4: 610.0, 16: 1290.0, 32: 1330.0, 64: 1335.0}),
    3: (234.0, {1: 234.0, 4: 720.0, 16: 1250.0, 32: 1262.0, 64: 1263.0}),
    4: (230.0, {1: 230.0, 4: 700.0, 16: 1200.0, 32: 1210.0, 64: 1212.0}),
}


# TTFT p99 per level (ms): within the default 2 s up to c=32; c=64 queues (13.4 s, as the seed's peak did).
TTFT_P99_MS = {1: 150.0, 4: 300.0, 16: 900.0, 32: 1800.0, 64: 13400.0}


def seed_session() -> Session:
    trials = []
    for i, (steps, (c1, curve)) in enumerate(CURVES.items(), start=1):
        levels = [LevelResult(concurrency=c, requests=8, output_tok_s=tok, per_request_tok_s=Dist(p50=c1 if c == 1 else tok / c),
                              ttft_ms=Dist(p99=TTFT_P99_MS[c]))
                  for c, tok in curve.items()]
        trials.append(Trial(id=i, unit_text="", flags={"speculative-num-steps": str(steps),
                                                       "speculative-num-draft-tokens": str(steps + 1)},
                            levels=levels, host="gpu-a", status="ok", label=f"steps={steps}"))
    return Session(host="gpu-a", unit="sglang-qwen.service", trials=trials)


def test_the_pareto_front_is_the_trials_nothing_beats_on_both_axes() -> None:
    points = trade_off_points(seed_session())
    assert [(p.trial_id, p.c1_tok_s, p.best_tok_s, p.best_at) for p in points] == [
        (1, 123.0, 1390.0, 32), (2, 186.0, 1330.0, 32), (3, 234.0, 1262.0, 32), (4, 230.0, 1210.0, 32)]
    assert pareto_front(points) == {1, 2, 3}  # trial 4 is slower than 3 at c=1 and at the top


def test_best_is_one_thing_on_every_view_and_an_unfinished_trial_is_no_point() -> None:
    """Issue 35 (8): the bench summary's best was the best within the TTFT limit, the trade-off chart's, the
    report's and the Pareto front's the peak (TTFT p99 13.4 s); cancelled and partial trials were plotted."""
    from specdec_tui.core.latency import trial_pick
    from specdec_tui.core.report_charts import trade_off_chart_svg
    from specdec_tui.core.trade_off import best_axis_name

    session = seed_session()
    session.trials[3].status = "cancelled"
    points = trade_off_points(session)
    assert [p.trial_id for p in points] == [1, 2, 3]
    for p, trial in zip(points, session.trials, strict=False):
        best = trial_pick(trial).best
        assert best is not None and (p.best_tok_s, p.best_at) == (best.output_tok_s, best.concurrency)
        assert f"{best.output_tok_s:,.1f} tok/s at c={best.concurrency}" in trial_pick(trial).summary()
    assert best_axis_name(points) == "best tok/s (TTFT p99 ≤ 2 s)"
    svg = trade_off_chart_svg(session)
    assert "TTFT p99 ≤ 2 s" in svg and "per-request tok/s (p50)" in svg


def test_session_export_html_writes_one_self_contained_report(tmp_path: Path) -> None:
    session_file = tmp_path / "s.toml"
    save_session(seed_session(), session_file)
    out = tmp_path / "report.html"
    run = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "export", str(session_file), "--format", "html",
                          "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    html = out.read_text()
    assert html.count("<svg") == 2 and 'id="chart-tok-s"' in html and 'id="chart-trade-off"' in html
    assert "Output tok/s by concurrency" in html and "Pareto front" in html  # chart text stays text
    assert "#3 steps=3" in html  # a point's label in the trade-off chart
    assert "<td class=num>1,400.0</td>" in html and "<td class=num>234.0</td>" in html
    assert "--speculative-num-steps: 1 → 2" in html
    # Self-contained: no script, no stylesheet or image fetched from anywhere (only SVG's own namespaces).
    assert "<script" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html)
    again = tmp_path / "again.html"
    subprocess.run([sys.executable, "-m", "specdec_tui", "session", "export", str(session_file), "--format", "html",
                    "-o", str(again)], check=True, capture_output=True, timeout=120)
    assert again.read_text() == html  # the same session gives the same file


@pytest.mark.browser
async def test_the_report_opens_in_headless_chromium_with_both_charts_drawn(tmp_path: Path) -> None:
    import asyncio

    from tests.cdp_browser import Chromium
    from tests.conftest import require

    require(Chromium.executable() is not None, "chromium is not installed (apt-get install chromium)")
    from specdec_tui.core.report_html import session_html

    report = tmp_path / "report.html"
    report.write_text(session_html(seed_session()))
    browser = Chromium(tmp_path / "profile")
    try:
        await browser.start()
        await browser.open(report.as_uri())
        measure = """(() => [...document.querySelectorAll('figure svg')].map(svg => {
            const box = svg.getBoundingClientRect();
            return {id: svg.parentElement.id, width: box.width, height: box.height,
                    text: svg.textContent, marks: svg.querySelectorAll('path, use').length};
        }))()"""
        charts = []
        # Poll until the whole document is parsed and laid out: an SVG element exists (with its width) while the
        # parser is still inside it, so reading the charts' text before readyState is "complete" can see half a chart.
        for _ in range(100):
            loaded = await browser.evaluate("document.readyState") == "complete"
            charts = await browser.evaluate(measure) or []
            if loaded and len(charts) == 2 and all(c["width"] > 100 for c in charts):
                break
            await asyncio.sleep(0.1)
        assert [c["id"] for c in charts] == ["chart-tok-s", "chart-trade-off"]
        for chart in charts:
            assert chart["width"] > 300 and chart["height"] > 150 and chart["marks"] > 10, chart  # drawn, not empty
        assert "Output tok/s by concurrency" in charts[0]["text"] and "Pareto front" in charts[1]["text"]
        rows = await browser.evaluate("document.querySelectorAll('#trials tbody tr').length")
        assert rows == 4
        shot = await browser.screenshot(Path(__file__).resolve().parents[1] / "test-artifacts" / "report" / "report.png")
        print(f"screenshot: {shot}")
    finally:
        await browser.close()


def test_no_trade_off_label_runs_past_the_pictures_edge() -> None:
    """Issue 35 (10): the HTML trade-off cut off the label of its right-most point at the picture's edge."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from specdec_tui.core.report_charts import _figure, draw_trade_off

    session = seed_session()  # trial 3 is the right-most point (234 tok/s at c=1)
    with _figure("t") as fig:
        draw_trade_off(fig, session)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        boxes = {t.get_text(): t.get_window_extent(renderer) for t in fig.axes[0].texts}
        inside = fig.bbox
    assert len(boxes) == 4
    # The SVG's text is set in the browser's font, wider than matplotlib's measure: a label that ended a few
    # pixels inside the edge ran past it. Each keeps a tenth of the width clear.
    room = 0.1 * inside.width
    for text, box in boxes.items():
        assert inside.x0 + room <= box.x0 and box.x1 <= inside.x1 - room, (text, box, inside)
