"""Session exports: CSV (one row per trial × concurrency), JSON (everything), Markdown (a ticket-ready report),
HTML (one self-contained file with both charts: `report_html`)."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from typing import Literal

from specdec_tui.core.compare import (
    best_by_concurrency,
    concurrencies_of,
    flags_text,
    shown_label,
    summary_rows,
    trial_label,
    trial_notes,
)
from specdec_tui.core.export_text import json_inert, md_code, md_text
from specdec_tui.core.json_out import json_text
from specdec_tui.core.latency import BEST_HEADER, QUEUE_LEGEND, trial_limit, trial_pick
from specdec_tui.core.number_format import fmt_fixed
from specdec_tui.core.profile_words import session_settings
from specdec_tui.core.session import Session

ExportFormat = Literal["csv", "json", "md", "html"]

CSV_COLUMNS = [
    "trial", "label", "status", "concurrency", "requests", "errors", "output_tokens", "output_tok_s",
    "per_request_tok_s_p50", "ttft_ms_p50", "ttft_ms_p99", "tpot_ms_p50", "itl_ms_p50", "e2e_ms_p50",
    "accept_length_server", "accept_length_client", "max_running_requests", "queueing", "ttft_limit_s",
    "within_ttft_limit", "estimated", "warnings", "flags",
]


_FORMULA_HEADS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula
_TEXT_COLUMNS = ("label", "status", "queueing", "warnings")


def _inert(row: dict[str, object]) -> dict[str, object]:
    """A row whose text cells a spreadsheet shows as text: a label such as `=HYPERLINK(...)` or `@SUM(...)` (from
    a session file someone sent) ran as a formula when the export was opened; such a cell gets a leading `'` (the
    OWASP CSV-injection advice). Numbers, and the flags (which start with "--"), are untouched."""
    for column in _TEXT_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value.startswith(_FORMULA_HEADS):
            row[column] = "'" + value
    flags = row.get("flags")
    if isinstance(flags, str) and flags.startswith(_FORMULA_HEADS) and not flags.startswith("--"):
        row["flags"] = "'" + flags
    return row


def to_csv(session: Session) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for trial in session.trials:
        mrr = trial.facts.max_running_requests if trial.facts else None
        limit = trial_limit(trial)
        base = {"trial": trial.id, "label": trial_label(trial), "status": trial.status,
                "max_running_requests": mrr, "ttft_limit_s": limit.ttft_limit_s, "flags": flags_text(trial.flags)}
        if not trial.levels:
            writer.writerow(_inert(base))
        for lv in trial.levels:
            writer.writerow(_inert({
                **base,
                "concurrency": lv.concurrency, "requests": lv.requests, "errors": lv.errors,
                "output_tokens": lv.output_tokens, "output_tok_s": lv.output_tok_s,
                "per_request_tok_s_p50": lv.per_request_tok_s.p50, "ttft_ms_p50": lv.ttft_ms.p50,
                "ttft_ms_p99": lv.ttft_ms.p99, "tpot_ms_p50": lv.tpot_ms.p50, "itl_ms_p50": lv.itl_ms.p50,
                "e2e_ms_p50": lv.e2e_ms.p50, "accept_length_server": lv.accept_length_server,
                "accept_length_client": lv.accept_length_client, "estimated": lv.estimated,
                "queueing": limit.note(lv.concurrency) or "", "within_ttft_limit": limit.within(lv),
                "warnings": " | ".join(lv.warnings),
            }))
    return out.getvalue()


def to_json(session: Session) -> str:
    data = asdict(session)
    return json_inert(json_text(data, indent=True, non_str_keys=True)) + "\n"


def to_markdown(session: Session) -> str:
    cs = concurrencies_of(session)
    lines = [f"# Speculative decoding session: {md_text(session.host or 'host')} / {md_text(session.unit or 'unit')}", ""]
    lines.append(f"Started {session.created:%Y-%m-%d %H:%M} UTC, {len(session.trials)} trial(s); "
                 f"{md_text(session_settings(session))}.")
    lines.append("")
    lines.append("## Output tok/s per concurrency")
    lines.append("")
    header = ["#", "trial", "status", "max running req", "accept len", *[f"c={c}" for c in cs],
              BEST_HEADER, "errors"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] * 2 + [":-:"] + ["--:"] * (len(header) - 3)) + "|")
    queued = False
    for row in summary_rows(session):
        limit = trial_limit(row.trial)
        marks = {c: limit.mark(c) if row.tok_s[c] is not None else "" for c in cs}
        queued = queued or any(marks.values())
        cells = [str(row.trial.id), md_text(shown_label(row.trial)), row.trial.status,
                 str(row.max_running_requests or "–"), fmt_fixed(row.accept_length, 2),
                 *[fmt_fixed(row.tok_s[c]) + (f" {marks[c]}" if marks[c] else "") for c in cs],
                 trial_pick(row.trial).best_words(), str(row.errors)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if queued:
        lines.append(f"{QUEUE_LEGEND}.")
        lines.append("")
    if cs:
        best1 = best_by_concurrency(session, cs[0])
        best_max = best_by_concurrency(session, cs[-1])
        lines.append("## Best")
        lines.append("")
        if best1:
            lines.append(f"- single-stream (c={cs[0]}): trial {best1.id} {md_code(shown_label(best1))} "
                         f"at {fmt_fixed(best1.level(cs[0]).output_tok_s)} tok/s")  # type: ignore[union-attr]
        if best_max and len(cs) > 1:
            lines.append(f"- throughput (c={cs[-1]}): trial {best_max.id} {md_code(shown_label(best_max))} "
                         f"at {fmt_fixed(best_max.level(cs[-1]).output_tok_s)} tok/s"  # type: ignore[union-attr]
                         + (f" ({trial_limit(best_max).note(cs[-1])})" if trial_limit(best_max).note(cs[-1]) else ""))
        for trial in session.trials:
            if trial.levels:
                lines.append(f"- trial {trial.id} {md_code(shown_label(trial))}: {trial_pick(trial).summary()}")
        lines.append("")
    lines.append("## Flags per trial")
    lines.append("")
    for note in trial_notes(session):
        change = md_code(note.change) if note.first else md_text(note.change)
        lines.append(f"- trial {note.trial.id}: {change}")
        lines.append(f"  - ran with {md_text(note.settings)}")
        if note.failure:
            lines.append(f"  - failed: {md_text(note.failure)}")
        lines.extend(f"  - ⚠ {md_text(warning)}" for warning in note.warnings)
    lines.append("")
    return "\n".join(lines)


def export_session(session: Session, fmt: ExportFormat) -> str:
    if fmt == "csv":
        return to_csv(session)
    if fmt == "json":
        return to_json(session)
    if fmt == "md":
        return to_markdown(session)
    if fmt == "html":
        from specdec_tui.core.report_html import session_html  # matplotlib loads only for this format

        return session_html(session)
    raise ValueError(f"unknown export format {fmt!r}: use csv, json, md or html")
