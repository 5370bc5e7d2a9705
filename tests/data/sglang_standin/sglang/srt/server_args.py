"""The stand-in release's `ServerArgs.add_cli_args`: a few options, one of them (--cuda-graph-max-bs) one that
0.5.23 no longer has, so a test sees the host's release, not the bundled one, judge a unit."""

import argparse


class ServerArgs:
    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--model-path", "--model", dest="model_path", type=str, required=True)
        parser.add_argument("--tp-size", type=int, default=1)
        parser.add_argument("--port", type=int, default=30000)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "NEXTN"])
        parser.add_argument("--speculative-num-steps", type=int)
        parser.add_argument("--cuda-graph-max-bs", type=int)
        parser.add_argument("--enable-metrics", action="store_true")
