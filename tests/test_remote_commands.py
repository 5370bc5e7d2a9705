"""hosts.commands: remote commands only from validated, quoted pieces; bad pieces refused before
anything runs. Quoting is checked by running the command line through a real local /bin/sh."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_tui.hosts import commands as rc
from specdec_tui.hosts.errors import UnitRejected

NASTY = [";", "$(", ")", "`", " ", "\n", "|", "&", ">", "<", "'", '"', "\\n", "*", "?", "~", "\t", "\x00"]


@pytest.mark.parametrize(
    "name", ["sglang.service", "sglang@0.service", "a-b_c:d.service", "x.socket", "sglang@.service"]
)
def test_valid_unit_names_pass(name):
    assert rc.valid_unit_name(name) == name


@pytest.mark.parametrize(
    "name",
    ["", "sglang", "sglang.exe", "x;rm -rf /.service", "$(reboot).service", "a b.service", "a\n.service",
     "a@b@c.service", "`id`.service", "../x.service", "x" * 250 + ".service"],
)
def test_invalid_unit_names_are_refused_in_words(name):
    with pytest.raises(UnitRejected) as err:
        rc.valid_unit_name(name)
    assert "unit name" in str(err.value)


@given(st.text(min_size=1, max_size=40).filter(lambda s: any(c in s for c in NASTY)))
def test_names_with_shell_characters_never_reach_a_command(name):
    with pytest.raises(UnitRejected):
        rc.systemctl("restart", name + ".service")
    with pytest.raises(UnitRejected):
        rc.journal(name, after_cursor=None, lines=5, follow=True)


@pytest.mark.parametrize(
    "path", ["relative/x", "/etc/../etc/passwd", "/a//b", "/a/b/", "/a b", "/x;y", "/$(id)", "/a\nb", ""]
)
def test_bad_paths_are_refused(path):
    with pytest.raises(ValueError, match="path"):
        rc.cat(path)


def test_cursor_alphabet_is_enforced():
    good = "s=0a1b;i=2f;b=c3;m=1e;t=5f;x=9a"
    assert f"--after-cursor={good}" in rc.journal("u.service", after_cursor=good, lines=None, follow=False).argv
    with pytest.raises(ValueError, match="cursor"):
        rc.journal("u.service", after_cursor="x'; reboot; '", lines=None, follow=False)


@settings(max_examples=60, deadline=None)
@given(st.from_regex(r"\A/[A-Za-z0-9._@:+\-]{1,12}(/[A-Za-z0-9_@:+\-]{1,8}){0,3}\Z"))
def test_valid_paths_survive_the_shell_unchanged(path):
    try:
        rc.valid_path(path)
    except ValueError:
        return  # e.g. a "." or ".." segment: refused, which is fine
    line = rc.cmd("printf", "%s", path).line
    out = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True).stdout
    assert out == path


def test_sudo_never_prompts():
    assert rc.systemctl("daemon-reload").with_sudo().argv[:3] == ("sudo", "-n", "--")


def test_follow_wrapper_is_one_quoted_sh_script():
    command = rc.journal("sglang.service", after_cursor=None, lines=10, follow=True)
    assert command.argv[:2] == ("sh", "-c")
    assert shlex.split(command.line) == list(command.argv)
    assert "journalctl -u sglang.service -o json --all --no-pager -n 10 -f" in command.argv[2]


def test_follow_wrapper_kills_the_follower_when_stdin_closes():
    """The real wrapper with `sleep` standing in for journalctl: EOF on stdin ends it at once."""
    script = rc.journal("sglang.service", after_cursor=None, lines=1, follow=True).argv[2]
    follower = "journalctl -u sglang.service -o json --all --no-pager -n 1 -f"
    assert follower in script
    proc = subprocess.Popen(["sh", "-c", script.replace(follower, "sleep 30")], stdin=subprocess.PIPE)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.3)  # stdin still open: the follower keeps running
    proc.stdin.close()
    assert proc.wait(timeout=5) != 0  # killed on EOF, not finished after 30 s
