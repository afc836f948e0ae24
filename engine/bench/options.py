"""`maskscope bench`'s options and workload sizes, apart from the measuring code, so that
building the command line never loads llama.cpp."""

from __future__ import annotations

import argparse

from engine.model.options import add_model_arguments

DEFAULT_STEPS = 64
QUICK_STEPS, QUICK_SCHEMAS, QUICK_RSS_STEPS = 8, 2, 60
RSS_STEPS = 500
# Samples each row of the batch table makes: 8, so that P = 8 is one batch.
BATCH_SAMPLES, QUICK_BATCH_SAMPLES = 8, 2


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--steps", type=int, default=DEFAULT_STEPS, help="step limit per run (default 64)"
    )
    parser.add_argument(
        "--schemas", type=int, default=20, help="how many of the 20 bundled schemas to run"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a tiny workload for tests: {QUICK_SCHEMAS} schemas × {QUICK_STEPS} steps, "
        f"a {QUICK_RSS_STEPS}-step memory run",
    )
    add_model_arguments(parser)
