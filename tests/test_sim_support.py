"""Helpers for the simulator tests: run `python -m specdec_tui.sim` as a real process and talk to it.

The client here is deliberately minimal (raw aiohttp + SSE line splitting) so the tests do not depend on the
benchmark engine they are meant to support.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import aiohttp
import orjson

SEED_MODEL = "Qwen/Qwen3.5-122B-A10B"
TRAP_PROMPT = "Write the same sentence again and again. " * 12  # repetitive benchmark filler


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seed_flags(steps: int) -> list[str]:
    """The seed's unit: tp 4, NEXTN, topk 1, draft tokens steps+1, mem fraction 0.85."""
    return ["--model-path", SEED_MODEL, "--tp", "4", "--trust-remote-code", "--mem-fraction-static", "0.85",
            "--speculative-algorithm", "NEXTN", "--speculative-num-steps", str(steps),
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(steps + 1)]


@dataclass
class SimProcess:
    """One simulator process with its stdout captured line by line."""

    args: list[str]
    port: int = field(default_factory=free_port)
    lines: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None

    def start(self) -> SimProcess:
        cmd = [sys.executable, "-m", "specdec_tui.sim", *self.args, "--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        threading.Thread(target=self._pump, daemon=True).start()
        return self

    def _pump(self) -> None:
        assert self.proc and self.proc.stdout
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_line(self, needle: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if needle in line:
                    return line
            if self.proc and self.proc.poll() is not None:
                time.sleep(0.1)  # let the pump drain
                for line in list(self.lines):
                    if needle in line:
                        return line
                raise AssertionError(f"process exited ({self.proc.returncode}) before {needle!r}:\n{self.output()}")
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {needle!r}:\n{self.output()}")

    def wait_ready(self, timeout: float = 20.0) -> None:
        self.wait_line("The server is fired up and ready to roll!", timeout)

    def wait_exit(self, timeout: float = 20.0) -> int:
        assert self.proc
        code = self.proc.wait(timeout)
        time.sleep(0.05)
        return code

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@dataclass
class StreamResult:
    chunks: list[dict]
    text: str
    content_tokens_by_usage: int | None
    final_usage: dict | None
    done: bool
    finish_reason: str | None


async def stream_completion(session: aiohttp.ClientSession, url: str, body: dict, chat: bool = False) -> StreamResult:
    """POSTs a streaming request and splits the SSE stream into JSON chunks."""
    path = "/v1/chat/completions" if chat else "/v1/completions"
    chunks: list[dict] = []
    done = False
    async with session.post(url + path, json=body) as resp:
        assert resp.status == 200, await resp.text()
        buf = b""
        async for data in resp.content.iter_any():
            buf += data
            while b"\n\n" in buf:
                event, buf = buf.split(b"\n\n", 1)
                assert event.startswith(b"data: "), event
                payload = event[len(b"data: "):]
                if payload == b"[DONE]":
                    done = True
                else:
                    chunks.append(orjson.loads(payload))
    text_parts: list[str] = []
    finish = None
    final_usage = None
    for c in chunks:
        for ch in c["choices"]:
            piece = ch["delta"].get("content") if chat else ch["text"]
            text_parts.append(piece or "")
            finish = ch.get("finish_reason") or finish
        if not c["choices"] and c.get("usage"):
            final_usage = c["usage"]
    return StreamResult(chunks, "".join(text_parts), None, final_usage, done, finish)


async def get_json(session: aiohttp.ClientSession, url: str) -> dict:
    async with session.get(url) as resp:
        assert resp.status == 200, await resp.text()
        return orjson.loads(await resp.read())


def run_async(coro):  # for sync tests that need one async block
    return asyncio.run(coro)
