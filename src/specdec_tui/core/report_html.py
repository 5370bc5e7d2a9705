"""The session as one self-contained HTML file to share: the trials table, what each trial changed, the warnings,
and both charts inline as SVG. Nothing is fetched when it opens (no scripts, fonts or images from anywhere)."""

from __future__ import annotations

from specdec_tui.core.compare import (
    best_by_concurrency,
    best_confidence,
    concurrencies_of,
    shown_label,
    summary_rows,
    trial_notes,
)
from specdec_tui.core.export_text import html_text
from specdec_tui.core.latency import BEST_HEADER, QUEUE_LEGEND, trial_limit, trial_pick
from specdec_tui.core.number_format import fmt_fixed
from specdec_tui.core.profile_words import session_settings
from specdec_tui.core.provenance import provenance_line
from specdec_tui.core.report_charts import tok_s_chart_svg, trade_off_chart_svg
from specdec_tui.core.session import Session
from specdec_tui.core.status_tone import HTML_COLOUR, Tone, status_tone
from specdec_tui.core.trade_off import pareto_front, trade_off_points

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1d1f24; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; width: 100%; } th, td { padding: .3em .6em; border-bottom: 1px solid #ddd; }
th { text-align: left; background: #f3f4f6; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
""" + "".join(f"tr.tone-{tone.value} td.status {{ color: {colour}; }} " for tone, colour in HTML_COLOUR.items()) + f"""
tr.tone-bad td {{ color: {HTML_COLOUR[Tone.BAD]}; }}""" + """ tr.front td:first-child { font-weight: bold; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; } .charts figure { margin: 0; flex: 1 1 480px; }
.charts svg { width: 100%; height: auto; } .warn { color: #9a6700; } code { background: #f3f4f6; padding: 0 .2em; }
"""


def escape(text: str) -> str:
    """Text for the page: HTML-escaped, and words only. A label, host or unit name is the session's, from outside:
    its escape codes, NUL and CR are no HTML, and a bidi override (U+202E) turned the rest of a cell around in the
    browser, so a value could read as another (core.terminal_codes; one owner: core.export_text)."""
    return html_text(text)


def session_html(session: Session) -> str:
    cs = concurrencies_of(session)
    front = pareto_front(trade_off_points(session))
    title = f"Speculative decoding session: {session.host or 'host'} / {session.unit or 'unit'}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Started {session.created:%Y-%m-%d %H:%M} UTC, {len(session.trials)} trial(s); "
        f"{escape(session_settings(session))}.</p>",
        '<h2>Charts</h2><div class="charts">',
        f'<figure id="chart-tok-s">{tok_s_chart_svg(session)}</figure>',
        f'<figure id="chart-trade-off">{trade_off_chart_svg(session)}</figure>',
        "</div>",
        *_trials_table(session, cs, front),
        *_best_lines(session, cs, front),
    ]
    parts.append('<h2>Latency</h2><ul id="latency">')
    parts.extend(f"<li>trial {t.id} <code>{escape(shown_label(t))}</code>: {escape(trial_pick(t).summary())}</li>"
                 for t in session.trials if t.levels)
    parts.append("</ul>")
    parts.extend(_changes(session))
    parts.append('<h2>What each trial was measured on</h2><ul id="provenance">')
    parts.extend(f"<li>trial {t.id}: {escape(provenance_line(t))}</li>" for t in session.trials)
    parts.append("</ul></body></html>\n")
    return "\n".join(parts)


def _trials_table(session: Session, cs: list[int], front: set[int]) -> list[str]:
    """Output tok/s per concurrency, a row per trial in its status's tone; the queueing legend when a mark needs it."""
    parts = [
        "<h2>Output tok/s per concurrency</h2>",
        '<table id="trials"><thead><tr><th>#</th><th>trial</th><th>host</th><th>status</th><th>max running req</th>'
        "<th>accept len</th>" + "".join(f"<th>c={c}</th>" for c in cs)
        + f"<th>{escape(BEST_HEADER)}</th><th>errors</th></tr></thead><tbody>",
    ]
    queued = False
    for row in summary_rows(session):
        t = row.trial
        limit = trial_limit(t)
        marks = {c: limit.mark(c) if row.tok_s[c] is not None else "" for c in cs}
        queued = queued or any(marks.values())
        best_text = trial_pick(t).best_words()
        classes = " ".join(c for c in (f"tone-{status_tone(t.status).value}", "front" if t.id in front else "") if c)
        parts.append(
            f'<tr class="{classes}"><td>{t.id}</td><td>{escape(shown_label(t))}</td><td>{escape(t.host or session.host)}</td>'
            f"<td class=status>{escape(t.status)}</td><td class=num>{row.max_running_requests or '–'}</td>"
            f"<td class=num>{fmt_fixed(row.accept_length, 2)}</td>"
            + "".join(f"<td class=num>{fmt_fixed(row.tok_s[c])}"
                      + (f' <span class="warn" title="{escape(limit.note(c) or "")}">{escape(marks[c])}</span>' if marks[c] else "")
                      + "</td>" for c in cs)
            + f"<td class=num>{escape(best_text)}</td><td class=num>{row.errors}</td></tr>"
        )
    parts.append("</tbody></table>")
    if queued:
        parts.append(f'<p class="warn">{escape(QUEUE_LEGEND)}.</p>')
    return parts


def _best_lines(session: Session, cs: list[int], front: set[int]) -> list[str]:
    """The Pareto front, the best single stream and, per level, whether the best is a winner by its intervals."""
    parts = []
    if front:
        parts.append(f"<p>Bold ids are on the Pareto front of the trade-off (no other trial is better at both c=1 and "
                     f"best total tok/s within its TTFT p99 limit): {', '.join(f'#{i}' for i in sorted(front))}.</p>")
    if cs:
        best1 = best_by_concurrency(session, cs[0])
        if best1 is not None and (lv := best1.level(cs[0])) is not None:
            parts.append(f"<p>Best single stream (c={cs[0]}): trial {best1.id} "
                         f"<code>{escape(shown_label(best1))}</code> at {fmt_fixed(lv.output_tok_s)} tok/s.</p>")
    confidence = [line for c in cs if (line := best_confidence(session, c))]
    if confidence:  # the best per level against the runner-up: a winner only where the intervals separate
        parts.append('<h2>Confidence</h2><ul id="confidence">')
        parts.extend(f"<li>{escape(line)}</li>" for line in confidence)
        parts.append("</ul>")
    return parts


def _changes(session: Session) -> list[str]:
    parts = ['<h2>What each trial changed</h2><ul id="flags">']
    for note in trial_notes(session):
        change = f"<code>{escape(note.change)}</code>" if note.first else escape(note.change)
        parts.append(f"<li>trial {note.trial.id}: {change}<br>ran with {escape(note.settings)}")
        if note.failure:
            parts.append(f"<br>failed: {escape(note.failure)}")
        parts.extend(f'<br><span class="warn">⚠ {escape(warning)}</span>' for warning in note.warnings)
        parts.append("</li>")
    parts.append("</ul>")
    return parts
