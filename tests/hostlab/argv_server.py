"""The small real server the lab's unit runs when the simulated SGLang server is not available.

GET /get_server_info answers with its argv and the speculative flags parsed from it, so a test sees
whether a pushed unit really changed the running process. It prints numbered `tick N` lines so the
journal always has fresh, countable lines (for the resume-without-loss test).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def main() -> None:
    argv = sys.argv[1:]
    port = int(flag(argv, "--port") or 0)
    steps = flag(argv, "--speculative-num-steps")
    info = {"argv": argv, "speculative_num_steps": int(steps) if steps else None}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = json.dumps(info).encode() if self.path in ("/get_server_info", "/health") else b"{}"
            self.send_response(200 if self.path in ("/get_server_info", "/health") else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"argv_server starting with {' '.join(argv)}", flush=True)
    print(f"speculative_num_steps={info['speculative_num_steps']}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    tick = 0
    while True:
        tick += 1
        print(f"tick {tick}", flush=True)
        time.sleep(float(flag(argv, "--tick-interval") or 0.1))


if __name__ == "__main__":
    main()
