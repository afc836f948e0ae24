"""`maskscope test SUITE`: every case of a suite × N samples on the real model, the metrics a
team gates on, and exit codes for CI (engine/suite/summary.py: 0 passed, 1 a threshold
failed, 2 bad input or a harness error, a cancel included)."""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cli.base import load_suite_warned
from engine.model.options import add_model_arguments, model_settings
from engine.runs.saved import write_atomically

if TYPE_CHECKING:  # the runner loads llama.cpp: building the command line must not
    from engine.model.llama import Model
    from engine.suite.format import Suite
    from engine.suite.metrics import Summary, Verdict
    from engine.suite.run import Progress, SuiteRun

_BAR = 24


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "test",
        help="run a suite's cases on the model and check its thresholds (exit 0/1/2 for CI)",
        description="Run every case of a suite (docs/suite-format.md) N times on the real "
        "model under the suite's grammar, and report validity, truncation, valid mass, "
        "forced and overruled steps, field accuracy, speed and latency against the suite's "
        "thresholds. Exit 0: every threshold holds; 1: one failed; 2: bad input, a harness "
        "error or a cancel (Ctrl+C), never a test failure.",
    )
    p.add_argument("suite", metavar="SUITE", nargs="?", help="a suite file (.suite.json)")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A.json", "B.json"),
        help="compare two --json results instead (schema v1 against v2, one compiler against "
        "another): per case what changed, regressions first; exit 1 on a regression",
    )
    p.add_argument("--samples", type=positive_int, help="samples per case (default: the suite's)")
    p.add_argument(
        "--parallel",
        type=positive_int,
        default=1,
        metavar="P",
        help="decode up to P samples of a case in one llama.cpp batch (default 1: one at a time)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    p.add_argument(
        "--html", metavar="FILE", help="also write a self-contained HTML report (no script)"
    )
    p.add_argument("--no-cache", action="store_true", help="decode every sample again")
    _add_server_arguments(p)
    add_model_arguments(p)
    p.set_defaults(func=cmd_test)


def _add_server_arguments(p: argparse.ArgumentParser) -> None:
    from engine.suite.server.request import MODES

    p.add_argument(
        "--server",
        metavar="URL",
        help="send the cases to an OpenAI-compatible server (llama-server, vLLM) instead of "
        "decoding here; the local model only reads the outputs back (the fail-open check)",
    )
    p.add_argument(
        "--server-mode",
        choices=MODES,
        default=MODES[0],
        help="grammar: /v1/completions with the tested GBNF (default); response_format: "
        "/v1/chat/completions with the schema, testing the server's own converter; "
        "completions+response_format: the schema on /v1/completions",
    )
    p.add_argument(
        "--concurrency",
        type=positive_int,
        default=4,
        metavar="N",
        help="with --server: requests in flight at once (default 4)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=120.0,
        metavar="S",
        help="with --server: seconds one request may take before it is retried (default 120)",
    )
    p.add_argument(
        "--no-logprobs",
        action="store_true",
        help="with --server: do not ask for token logprobs (llama-cpp-python's server spends "
        "about 0.5 s a token on them)",
    )


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def cmd_compare(args: argparse.Namespace) -> int:
    from engine.suite.compare import compare_results, comparison_text, load_result

    first, second = args.compare
    comparison = compare_results(load_result(first), load_result(second), (first, second))
    if args.json:
        import json

        data = dataclasses.asdict(comparison) | {"regressed": comparison.regressed}
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        print(comparison_text(comparison))
    return 1 if comparison.regressed else 0


def cmd_test(args: argparse.Namespace) -> int:
    from engine.errors import SuiteError

    if args.compare:
        if args.suite:
            raise SuiteError("give a SUITE to run, or --compare A.json B.json, not both")
        return cmd_compare(args)
    if not args.suite:
        raise SuiteError("give a SUITE file to run (or --compare A.json B.json)")
    if args.server:
        if args.parallel > 1:
            raise SuiteError("--parallel batches local decoding: with --server use --concurrency")
        return _run_on_server(args)
    return _run(args)


def _run_on_server(args: argparse.Namespace) -> int:
    from engine.suite.metrics import evaluate, summarise
    from engine.suite.server.request import ServerOptions
    from engine.suite.server.run import run_suite_on_server

    suite = load_suite_warned(args.suite)
    model = load_model(args)  # only to read the outputs back through the tested grammar
    options = ServerOptions(
        args.server, args.server_mode, args.concurrency, args.timeout, not args.no_logprobs
    )
    with ctrl_c_cancels() as should_stop:
        made = run_suite_on_server(
            model,
            suite,
            options,
            samples=args.samples,
            should_stop=should_stop,
            on_progress=progress_printer(),
        )
    done = made.run
    # Requests overlap: tokens/s is the server's throughput, every token over the wall time.
    summary = summarise(done.samples, n_planned=done.planned, wall_s=done.wall_s)
    verdict = evaluate(summary, suite.thresholds)
    if made.stopped:  # the server went away: that, not a cancel, is why samples are missing
        rest = tuple(p for p in verdict.problems if not p.startswith("cancelled: "))
        verdict = dataclasses.replace(verdict, problems=(made.stopped, *rest))
    if args.html:
        from engine.suite.server.report import server_report, server_tested
        from engine.suite.summary import EXIT_ERROR, exit_code

        code = EXIT_ERROR if done.cancelled else exit_code(verdict)
        tested = server_tested(model, suite, summary, verdict, code)
        _write(args.html, server_report(tested, made.server.to_json()))
    return _report(args, suite, summary, verdict, done.cancelled, made.server.to_json(),
                   made.stopped)  # fmt: skip


def _run(args: argparse.Namespace) -> int:
    from engine.suite.cache import RunCache
    from engine.suite.metrics import evaluate, summarise
    from engine.suite.run import run_suite

    suite = load_suite_warned(args.suite)
    model = load_model(args)
    with ctrl_c_cancels() as should_stop:
        done = run_suite(
            model,
            suite,
            samples=args.samples,
            parallel=args.parallel,
            cache=None if args.no_cache else RunCache(),
            should_stop=should_stop,
            on_progress=progress_printer(),
        )
    # One after another, tokens/s is over each sample's own decoding time. Samples batched
    # together overlap, so then it is over the time spent decoding, when every sample was
    # decoded (cached ones would count tokens that took no time).
    batched = args.parallel > 1 and done.cached == 0
    summary = summarise(
        done.samples, n_planned=done.planned, wall_s=done.decode_s if batched else None
    )
    verdict = evaluate(summary, suite.thresholds)
    _say_cached(done)
    if args.html:
        from engine.suite.bundle.export import tested_hashes, tested_of
        from engine.suite.bundle.report import bundle_report

        tested = tested_of(model, suite, done)
        _write(args.html, bundle_report(tested, tested_hashes(tested)))
    return _report(args, suite, summary, verdict, done.cancelled)


def _say_cached(done: SuiteRun) -> None:
    """How many samples came from the run cache and when they were decoded: the result is
    of that decoding, not of this run."""
    from engine.suite.bundle.tested import Decoded

    decoded = Decoded.of(done.runs, done.cached)
    if decoded is not None and decoded.n_cached:
        print(
            f"maskscope test: {decoded.cache_text}, decoded {decoded.when} "
            "(--no-cache decodes them again)",
            file=sys.stderr,
        )


def _report(
    args: argparse.Namespace,
    suite: Suite,
    summary: Summary,
    verdict: Verdict,
    cancelled: bool,
    server: dict[str, str] | None = None,
    stopped: str = "",
) -> int:
    """Print the result (and write --junit) of a local or a server run; its exit code.
    `stopped` says why a server run ended early: the server stopped answering."""
    from engine.suite.summary import EXIT_ERROR, exit_code, summary_text, summary_to_json

    code = exit_code(verdict)
    if stopped:
        code = EXIT_ERROR
        print(f"maskscope test: {stopped}; the finished samples are kept", file=sys.stderr)
    elif cancelled:
        code = EXIT_ERROR
        kept = (
            "they are kept in the result" if server else
            "the finished ones are cached, so running it again goes on from there"
        )  # fmt: skip
        print(
            f"maskscope test: cancelled after {summary.n_samples} sample(s); {kept}",
            file=sys.stderr,
        )
    if args.junit:
        from engine.suite.junit import junit_xml

        _write(args.junit, junit_xml(summary, verdict, suite.name, server=server))
    if args.json:
        import json

        result = summary_to_json(summary, verdict, suite.name, server)
        result["exit_code"] = code
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(summary_text(summary, verdict, suite.name, server), end="")
    return code


def load_model(args: argparse.Namespace) -> Model:
    """The model the options name, once its llama.cpp build has proved it runs here."""
    from engine.llama_build.verdict import ensure_build_runs
    from engine.model.llama import Model

    ensure_build_runs(Path(args.model).expanduser() if args.model else None)
    return Model.load(model_settings(args))


@contextmanager
def ctrl_c_cancels() -> Iterator[Callable[[], bool]]:
    """A should_stop that Ctrl+C turns on: the run stops between two steps and keeps what
    it finished. The progress line is ended afterwards."""
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        yield stop.is_set
    finally:
        signal.signal(signal.SIGINT, previous)
        print(file=sys.stderr)


def _write(path: str, text: str) -> None:
    from engine.errors import MaskscopeError

    try:
        write_atomically(Path(path).expanduser(), text)
    except OSError as exc:
        raise MaskscopeError(f"cannot write {path}: {exc.strerror or exc}") from None


def progress_printer() -> Callable[[Progress], None]:
    tty = sys.stderr.isatty()

    def show(p: Progress) -> None:
        filled = round(_BAR * p.done / p.total) if p.total else _BAR
        eta = f" · ETA {_duration(p.eta_s)}" if p.eta_s is not None and p.done < p.total else ""
        cached = f" · {p.cached} cached" if p.cached else ""
        verdict = "valid" if p.sample.valid else "invalid"
        line = (
            f"[{'#' * filled}{'.' * (_BAR - filled)}] {p.done}/{p.total} samples{cached}{eta}"
            f" · {p.sample.case_id} #{p.sample.index + 1}: {verdict}"
        )
        print(f"\r{line}\033[K" if tty else line, end="" if tty else "\n", file=sys.stderr)

    return show


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
