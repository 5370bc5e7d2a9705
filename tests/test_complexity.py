"""No function of radon's cyclomatic grade E or F (complexity above 30) in the package (issue 34), but the
benchmark's hot reader, `bench/client.py` `_read_events`, which stays one function on purpose: every branch of it
runs per chunk (up to ~20,000 chunks a second), and a call per branch would add its cost to each one, on the
client whose own added ITL the benchmark must keep small (bench/bench_engine.py measures it)."""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank, cc_visit

import specdec_tui

PACKAGE = Path(specdec_tui.__file__).parent
ALLOWED = {("bench/client.py", "_read_events")}  # the hot reader: a call per branch would cost every chunk


def test_no_function_of_grade_e_or_f() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        for block in cc_visit(path.read_text()):
            if cc_rank(block.complexity) in "EF" and (where, block.name) not in ALLOWED:
                found.append(f"{where}:{block.lineno} {block.fullname} {cc_rank(block.complexity)} ({block.complexity})")
    assert found == [], "split these (radon cc -s -n E src): " + "; ".join(found)


def test_no_module_over_400_lines() -> None:
    """Issue 34: small modules with one job each; a module past 400 lines is split, not grown (ui/app.py reached
    404 with one more start-up step, and nothing said so)."""
    long = [f"{path.relative_to(PACKAGE)} ({n} lines)" for path in sorted(PACKAGE.rglob("*.py"))
            if (n := len(path.read_text().splitlines())) > 400]
    assert long == [], "split these: " + "; ".join(long)
