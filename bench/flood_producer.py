"""A service that floods its stdout with SGLang-format lines at a given rate (the journal-flood bench runs it as the
unit of a local host, so the lines reach the panel through the host's own journal reader).

    python bench/flood_producer.py --rate 5000 --seconds 30 [--quiet 5]
Stays silent for `--quiet` seconds (the bench times keys on a quiet journal then: its anchor), prints
`FLOOD-START`, floods, prints `FLOOD-DONE <n>` as its last line (n = lines sent between the two), then stays up
until stopped."""

from __future__ import annotations

import argparse
import sys
import time

from journal_flood import sglang_lines  # bench/: the same line pool as the bench itself


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--quiet", type=float, default=0.0, help="seconds of silence before the flood")
    args = parser.parse_args()
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
