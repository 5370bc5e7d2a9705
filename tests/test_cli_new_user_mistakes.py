"""A new user's mistakes on the command line, as a process sees them (newcomer44's pass): the words printed, the
exit code, and that nothing else starts.

- A typo'd flag of a verb (`bench --concurency 1,4`) was reported by the top parser with the top usage
  ("specdec-tui [-h] [--version] … COMMAND ...") and no hint; now the verb says it, with the flag it was likely
  meant to be (exit 2, as argparse's every usage error).
- `--headless` or `--nodes N` without `--demo` were dropped in silence and the panel opened (on a pipe, a screen of
  escape codes, until killed); now they are refused in words before anything starts (exit 1).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize(("argv", "said"), [
    (("bench", "--host", "demo", "--concurency", "1,4"),
     "specdec-tui bench: error: unrecognized arguments: --concurency 1,4 (did you mean --concurrency?)"),
    (("host", "status", "--hots", "demo"),
     "specdec-tui host status: error: unrecognized arguments: --hots demo (did you mean --host?)"),
    (("--dmeo",), "specdec-tui: error: unrecognized arguments: --dmeo (did you mean --demo?)"),
    (("session", "list", "--xyzzy"),
     "specdec-tui session list: error: unrecognized arguments: --xyzzy (`specdec-tui session list --help` lists its "
     "options)"),
])
def test_a_typo_d_flag_is_named_by_its_verb_with_the_flag_it_was_likely_meant_to_be(
        argv: tuple[str, ...], said: str) -> None:
    done = cli(*argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert said in done.stderr, done.stderr
    verb = said.split(": error:")[0].removeprefix("specdec-tui").strip()
    assert f"usage: specdec-tui {verb}".rstrip() in done.stderr, done.stderr  # the verb's own usage, not the top one
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("argv", "said"), [
    (("--headless",), "specdec-tui: --headless goes with --demo"),
    (("--host", "demo", "--headless"), "specdec-tui: --headless goes with --demo"),
    (("--nodes", "3"), "specdec-tui: --nodes goes with --demo"),
])
def test_a_demo_only_option_without_demo_is_refused_in_words_and_no_panel_opens(
        argv: tuple[str, ...], said: str) -> None:
    done = cli(*argv)
    assert done.returncode == 1, (done.stdout[-300:], done.stderr)
    assert done.stderr.startswith(said), done.stderr
    assert "\x1b[" not in done.stdout, done.stdout[-300:]  # no panel drawn
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("argv", [("host", "status", "--host", "nosuch"), ("fleet", "status", "--host", "nosuch")])
def test_a_host_that_does_not_exist_is_said_with_what_to_do_by_every_verb(argv: tuple[str, ...]) -> None:
    """`fleet status --host nosuch` said only "no host named 'nosuch' in the config (configured: demo)"; the
    other verbs say what to do as well."""
    done = cli(*argv)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.startswith("specdec-tui: no host named 'nosuch' in the config (configured: "), done.stderr
    assert "pick one of those with --host, or add a [hosts.<name>] table to the config" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
