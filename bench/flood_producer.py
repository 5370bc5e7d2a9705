"""A service that floods its stdout with SGLang-format lines at a given rate (the journal-flood bench runs it as the
unit of a local host, so the lines reach the panel through the host's own journal reader).

    python bench/flood_producer.py --rate 5000 --seconds 30 [--quiet 5] [--port 30123]
Stays silent for `--quiet` seconds (the bench times keys on a quiet journal then: its anchor), prints
`FLOOD-START`, floods, prints `FLOOD-DONE <n>` as its last line (n = lines sent between the two), then stays up
until stopped. With `--port` it also answers SGLang's /health, /v1/models and /server_info on 127.0.0.1, so the
panel sees what the flood is about: a ready server logging hard (probed every few seconds, not every second)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from journal_flood import sglang_lines  # bench/: the same line pool as the bench itself

ANSWERS = {
    "/health": b"",
    "/v1/models": json.dumps({"object": "list", "data": [{"id": "flood", "object": "model",
                                                          "max_model_len": 32768}]}).encode(),
    "/server_info": json.dumps({"model_path": "flood", "max_running_requests": 48,
                                "speculative_algorithm": "NEXTN", "speculative_num_steps": 3}).encode(),
}


class ReadyServer(BaseHTTPRequestHandler):
    """A ready SGLang server's answers to what the panel asks (nothing else)."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = ANSWERS.get(self.path.split("?", 1)[0])
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        pass  # the journal is for the flood


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--quiet", type=float, default=0.0, help="seconds of silence before the flood")
    parser.add_argument("--port", type=int, default=0, help="answer /health etc. on 127.0.0.1:PORT (0: no HTTP)")
    args = parser.parse_args()
    if args.port:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), ReadyServer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    pool = sglang_lines(2000)
    out = sys.stdout
    time.sleep(args.quiet)
    out.write("FLOOD-START\n")
    out.flush()
    start = time.perf_counter()
    sent = 0
    while (elapsed := time.perf_counter() - start) < args.seconds:
        due = int(elapsed * args.rate)
        if due > sent:
            out.write("".join(pool[i % len(pool)] + "\n" for i in range(sent, due)))
            out.flush()
            sent = due
        time.sleep(0.005)
    out.write(f"FLOOD-DONE {sent}\n")
    out.flush()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
