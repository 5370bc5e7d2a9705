"""`specdec-tui bench` as a user runs it: a real process against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.bench_servers import RunningServer, ServerSpec

pytestmark = pytest.mark.timeout(60)


async def run_cli(*argv: str) -> tuple[int, str, str]:
    env = {**os.environ, "COLUMNS": "200"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "specdec_tui", "bench", *argv,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_json_lines_one_per_level_then_summary() -> None:
    async with RunningServer(ServerSpec(pattern=(1, 3), delay_s=0.003)) as srv:
        code, out, err = await run_cli(
            "--url", srv.base_url, "--json", "--concurrency", "1,2", "--requests", "3",
            "--max-tokens", "12", "--temperature", "0", "--ignore-eos", "--endpoint", "chat",
        )
    assert code == 0, err
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    assert [x.get("concurrency") for x in lines[:2]] == [1, 2]
    lv = lines[0]
    for key in ("per_request_tok_s", "ttft_ms", "tpot_ms", "itl_ms"):
        assert set(lv[key]) == {"mean", "p50", "p90", "p99"}
    assert lv["requests"] == 3 and lv["errors"] == 0 and lv["output_tokens"] == 36
    # the server's counters say 12 tokens in 3 verify steps per request; the chunks carry 1 or 3
    # beside it, labelled, /server_info's lifetime mean (the test server's 9.5): what bench_serving would print
    assert lv["accept_length"] == {"server": 4.0, "client": pytest.approx(11 / 5), "source": "server counters",
                                   "server_info_avg_spec_accept_length": 9.5}
    assert lv["estimated"] is False
    assert any("inflated" in w for w in lv["warnings"])
    summary = lines[-1]
    assert summary["summary"] is True and summary["levels"] == 2 and summary["cancelled"] is False


async def test_live_table_shows_the_levels() -> None:
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        code, out, err = await run_cli("--url", srv.base_url, "--concurrency", "1", "--requests", "2", "--max-tokens", "8")
    assert code == 0, err
    assert "out tok/s" in out and "TTFT" in out
    row = next(line for line in out.splitlines() if line.strip("│ ").startswith("1 "))
    assert "4.00/2.33 ctr" in row  # the server counters' figure, marked so, next to the stream's
    assert "accept: ctr = server counters" in out
    assert row.split("│")[-3].strip() == "9.50" and "srv avg" in out  # /server_info's lifetime mean, labelled


async def test_missing_target_and_unknown_host_are_explained() -> None:
    code, _, err = await run_cli("--json")
    assert code == 1 and "--url URL or --host NAME" in err
    code, _, err = await run_cli("--host", "nope", "--json")
    assert code == 1 and "nope" in err and "Traceback" not in err
    code, _, err = await run_cli("--url", "127.0.0.1:1", "--json")
    assert code == 1 and "http://" in err


async def test_live_table_prints_each_warning_once_naming_its_levels() -> None:
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        code, out, err = await run_cli(
            "--url", srv.base_url, "--concurrency", "1,2", "--requests", "2", "--max-tokens", "8",
            "--temperature", "0", "--ignore-eos",
        )
    assert code == 0, err
    lines = [line for line in out.splitlines() if "greedy output runs past" in line]
    assert len(lines) == 1, out
    assert lines[0].startswith("c=1,2: temperature 0 with ignore_eos")


def test_distinct_warnings_keep_order_and_name_levels() -> None:
    from specdec_tui.cli.bench_output import distinct_warnings
    from specdec_tui.core.results import LevelResult

    rows = [
        LevelResult(concurrency=1, warnings=["a", "b"]),
        LevelResult(concurrency=4, warnings=["b"]),
        LevelResult(concurrency=16, warnings=["c", "a"]),
    ]
    assert distinct_warnings(rows) == [([1, 16], "a"), ([1, 4], "b"), ([16], "c")]


async def test_a_broken_workload_file_is_one_sentence_before_any_request(tmp_path: Path) -> None:
    """A JSONL line that is not an object (or not UTF-8, or no request at all) is named with its line before the
    run starts: no empty table, no `--json` summary of a run that never ran, the error said once."""
    broken = Path(str(tmp_path)) / "broken.jsonl"
    broken.write_text('{"prompt": "hi"}\nnull\n')
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        for extra in ((), ("--json",)):
            code, out, err = await run_cli("--url", srv.base_url, "--workload", str(broken), "--concurrency", "1",
                                           "--requests", "2", *extra)
            assert code == 1 and out == "", out
            assert err.count("broken.jsonl line 2: expected a JSON object") == 1, err
        assert srv.stats.requests == 0


async def test_a_run_the_server_answered_with_errors_is_not_called_unanswered() -> None:
    """`--url http://host:port/v1` (an OpenAI client's base URL) gets 404 for every request: the words say the
    server answered 404 and that --url is the server's root, not "did not answer ... check that it is up"; a
    server answering 500 is said to have answered 500."""
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        code, _, err = await run_cli("--url", srv.base_url + "/v1", "--concurrency", "1", "--requests", "2")
    assert code == 1 and "Traceback" not in err
    assert "answered HTTP 404" in err and "without /v1" in err and "did not answer" not in err, err
    async with RunningServer(ServerSpec(mode="http500", delay_s=0.002)) as srv:
        code, _, err = await run_cli("--url", srv.base_url, "--concurrency", "1", "--requests", "2")
    assert code == 1 and "answered HTTP 500" in err and "did not answer" not in err, err


async def test_numbers_that_cannot_run_are_refused_before_any_request() -> None:
    """--requests -3 ran one request, --duration 0 or -1 ran anyway, --duration nan ended in 'cannot convert
    float NaN to integer', --temperature nan was sent: the command line is judged by the config's own rules."""
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        for flag, value in (("--requests", "-3"), ("--requests", "0"), ("--duration", "0"), ("--duration", "nan"),
                            ("--max-tokens", "0"), ("--temperature", "nan"), ("--warmup", "-1")):
            code, out, err = await run_cli("--url", srv.base_url, "--concurrency", "1", flag, value)
            assert code == 1 and out == "" and f"{flag}: must be" in err and "Traceback" not in err, (flag, value, err)
        assert srv.stats.requests == 0


@pytest.mark.parametrize("as_json", [False, True])
async def test_a_url_where_nothing_listens_is_said_once_before_any_table(as_json: bool) -> None:
    """It drew a table of 32 refused requests, then said the reason in its caption, in a summary line and again
    on exit (a new user's typo'd port)."""
    import socket

    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = await run_cli("--url", f"http://127.0.0.1:{port}", "--concurrency", "1",
                                   *(["--json"] if as_json else []))
    assert code == 1 and out == "", out
    assert err.count("nothing accepts connections at") == 1 and "nothing was sent" in err and "Traceback" not in err
