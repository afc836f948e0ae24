"""`maskscope export SUITE --out DIR`: run the suite (cached samples read back) and write the
bundle a team ships: schema, tested grammar (in every engine's syntax), suite, reports,
README, snippets, hashes (engine/suite/bundle/export.py). Its exit code is the test's: 0 passed, 1 a
threshold failed (the bundle is still written, and its README says FAILED), 2 bad input, a
harness error or a cancel (no bundle is written)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cli.suite import positive_int
from engine.model.options import add_model_arguments


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="test a suite and write its bundle for production (schema, grammar, snippets)",
        description="Run a suite like `maskscope test` (samples already in the cache are "
        "read back, not decoded again) and write DIR/: schema.json, the tested grammar in "
        "each engine's syntax (GBNF, Lark, XGrammar EBNF; each read back by its engine and "
        "checked on the suite's instances and outputs), the suite, report.json and "
        "report.html, README.md, snippets (a request per server: llama-server, "
        "llama-cpp-python, vLLM, SGLang, OpenAI-compatible; post.py sends one and fails "
        "loudly), promptfooconfig.yaml and hashes.json. Exit "
        "0: every threshold holds; 1: one failed (the bundle says so); 2: bad input, a "
        "harness error or a cancel (nothing written).",
    )
    p.add_argument("suite", metavar="SUITE", help="a suite file (.suite.json)")
    p.add_argument("--out", metavar="DIR", required=True, help="the bundle's folder")
    p.add_argument("--samples", type=positive_int, help="samples per case (default: the suite's)")
    p.add_argument("--no-cache", action="store_true", help="decode every sample again")
    add_model_arguments(p)
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from engine.cli.suite import ctrl_c_cancels, load_model, progress_printer
    from engine.suite.bundle.export import export_suite
    from engine.suite.cache import RunCache
    from engine.suite.load import load_suite
    from engine.suite.summary import EXIT_ERROR

    suite = load_suite(args.suite)
    out = Path(args.out).expanduser()
    model = load_model(args)
    with ctrl_c_cancels() as should_stop:
        done = export_suite(
            model,
            suite,
            out,
            samples=args.samples,
            cache=None if args.no_cache else RunCache(),
            should_stop=should_stop,
            on_progress=progress_printer(),
        )
    if done.tested is None:
        print(
            f"maskscope export: cancelled after {len(done.run.samples)} sample(s); no bundle "
            "written (the finished samples are cached)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    code = done.tested.exit_code
    word = {0: "PASSED", 1: "FAILED", 2: "NO RESULT"}[code]
    print(f"maskscope export: {suite.name}: {word} (exit {code}); {len(done.hashes)} files:")
    for path, sha in done.hashes.items():
        print(f"  {sha[:16]}  {out / path}")
    return code
