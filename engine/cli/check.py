"""`maskscope check`: known instances fed through a compiler's grammar, judged beside
jsonschema, without generating anything."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.check.inputs import SchemaCase, load_cases
from engine.check.run import SchemaResult
from engine.cli.base import EXIT_INVALID, EXIT_VALID, load_suite_warned
from engine.cli.schema_file import add_root_argument, read_bundle
from engine.errors import MaskscopeError
from engine.llama_build.verdict import ensure_build_runs
from engine.schema.nesting import check_size, read_limited
from engine.settings import (
    BACKENDS,
    COMPILERS,
    DEFAULT_BACKEND,
    DEFAULT_COMPILER,
    Range,
    pairing_problem,
    pairings_text,
    runs_on,
)

if TYPE_CHECKING:
    from engine.schema.siblings import Bundled

JOBS = Range(int, 1, 64)
TIMEOUT = Range(float, 1.0, 3600.0)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="feed known instances through a schema's grammar and compare with jsonschema",
        description="Each instance is written on one line (', ' and ': ', keys in the order "
        "the compiler's grammar wants), fed token by token through the backend's grammar, "
        "and judged by jsonschema. Exit 1 when a valid instance is rejected, an invalid one "
        "is accepted with no unenforced keyword to explain it, or a schema does not compile.",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="MaskBench files, JSON-Schema-Test-Suite files, a bare schema (with --instances); "
        "with --summary also saved --json output (.jsonl)",
    )
    p.add_argument(
        "--instances",
        metavar="FILE.jsonl",
        help="instances of a bare schema, JSON lines: one instance a line, or "
        '{"data": ..., "valid": true|false, "description": "..."}; jsonschema judges each. '
        'The format, with an example: docs/workbench.md, "Reading maskscope check"',
    )
    add_root_argument(p)
    p.add_argument(
        "--compiler",
        choices=COMPILERS,
        help=f"default {DEFAULT_COMPILER}; each runs on: {pairings_text()}",
    )
    p.add_argument("--backend", choices=BACKENDS, help=f"default {DEFAULT_BACKEND}")
    p.add_argument("--json", action="store_true", help="one JSON line per schema")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--summary",
        action="store_true",
        help="run every compiler and backend that run together (or those given) and print "
        "the fidelity table",
    )
    what.add_argument(
        "--compare", action="store_true", help="per schema, where the compilers' verdicts differ"
    )
    p.add_argument(
        "--jobs",
        type=JOBS,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default: 2, or 1 on one core)",
    )
    p.add_argument(
        "--timeout", type=TIMEOUT, default=60.0, help="seconds per schema before it is a hang"
    )
    p.add_argument("--model", metavar="GGUF", help="a GGUF file (default: Gemma 3 270M)")
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    if args.instances and len(args.files) != 1:
        raise MaskscopeError("--instances goes with one bare schema file")
    saved, inputs = _split_saved(args.files) if args.summary else ([], args.files)
    results = itertools.chain.from_iterable(
        _results(args, cases, pairs) for cases, pairs in _runs(args, inputs) if cases
    )
    if args.summary:
        return _summary(args, saved, results)
    if args.compare:
        from engine.check.compare import differences

        print(differences(list(results)), end="")
        return EXIT_VALID
    failed = False
    for result in results:
        failed |= result.failed
        print(json.dumps(result.to_json(), ensure_ascii=False) if args.json else _human(result))
        sys.stdout.flush()
    return EXIT_INVALID if failed else EXIT_VALID


Pair = tuple[str, str]  # (compiler, backend)


def _pairs(args: argparse.Namespace) -> list[Pair]:
    """The compiler/backend pairs to run; for a table, all of those given that can run
    together (engine.settings.runs_on), with a note on stderr naming those left out."""
    if not (args.summary or args.compare):
        compiler = args.compiler or DEFAULT_COMPILER
        backend = args.backend or DEFAULT_BACKEND
        if (problem := pairing_problem(compiler, backend)) is not None:
            raise MaskscopeError(problem)
        return [(compiler, backend)]
    compilers = [args.compiler] if args.compiler else list(COMPILERS)
    backends = [args.backend] if args.backend else list(BACKENDS)
    every = [(c, b) for c in compilers for b in backends]
    pairs = [(c, b) for c, b in every if runs_on(c, b)]
    if not pairs:
        raise MaskscopeError(pairing_problem(*every[0]) or "no compiler runs on that backend")
    skipped = [f"{c} on {b}" for c, b in every if not runs_on(c, b)]
    if skipped:  # asked once per command for a table: one line
        n = len(skipped)
        print(
            f"maskscope: skipped {n} pairing{'s' * (n > 1)} that cannot run together: "
            + ", ".join(skipped),
            file=sys.stderr,
        )
    return pairs


def _runs(args: argparse.Namespace, inputs: list[str]) -> list[tuple[list[SchemaCase], list[Pair]]]:
    """The files' cases in input order, each with the pairs to run them under: the options'
    (or the defaults'), except that a suite brings its own compiler and backend, which
    --compiler and --backend override. Neighbours under the same pairs run together."""
    default = _pairs(args)
    runs: list[tuple[list[SchemaCase], list[Pair]]] = []
    for path in inputs:
        cases, own = _cases(path, args.instances, args.root)
        pairs = default
        if own is not None and not (args.summary or args.compare):
            pairs = _pairs(
                argparse.Namespace(**{
                    **vars(args),
                    "compiler": args.compiler or own[0],
                    "backend": args.backend or own[1],
                })
            )  # fmt: skip
        if runs and runs[-1][1] == pairs:
            runs[-1][0].extend(cases)
        else:
            runs.append((cases, pairs))
    return runs


def _cases(
    path: str, instances: str | None, root: str | None = None
) -> tuple[list[SchemaCase], Pair | None]:
    """A file's cases, and for a suite (.suite.json) its compiler and backend: a suite gives
    its schema with its known instances. A schema that refers to other files is checked as
    one bundle, proven to judge the instances as its files do."""
    if not path.endswith(".suite.json"):
        check_size(path, "schema")  # engine/check reads it whole
        if not instances:
            return load_cases(path), None
        check_size(instances, "instances")
        [case] = load_cases(path, instances)
        return [_proven(case, read_bundle(path, root))], None
    from engine.suite.bundle.schema_files import suite_bundle
    from engine.suite.instances import check_case

    suite = load_suite_warned(path)
    return [_proven(check_case(suite), suite_bundle(suite))], (suite.compiler, suite.backend)


def _proven(case: SchemaCase, bundled: Bundled | None) -> SchemaCase:
    """The case with the bundle as its schema, once jsonschema judges each of its instances
    against the bundle as against the files (a line on stderr says so)."""
    if bundled is None or not bundled.files:
        return case
    from engine.suite.bundle.schema_files import proof_line, proven

    data = [i.data for i in case.instances if i.text is None]
    proof = proven(bundled, data, "instance")
    print(f"maskscope: {case.file}: {proof_line(bundled, proof)}", file=sys.stderr)
    return dataclasses.replace(case, schema=json.loads(bundled.text))


def _results(
    args: argparse.Namespace, cases: list[SchemaCase], pairs: list[tuple[str, str]]
) -> Iterator[SchemaResult]:
    """Every case under every pair, in input order, as workers finish them."""
    from functools import partial

    from engine.check.pool import run_pool
    from engine.check.run import check_task, load_model, lost_task

    # A build that crashes would take every worker with it, and say nothing: prove it first.
    ensure_build_runs(Path(args.model).expanduser() if args.model else None)
    tasks = [(case, c, b) for c, b in pairs for case in cases]
    init = partial(load_model, args.model)
    done: dict[int, SchemaResult] = {}
    following = 0
    for index, result in run_pool(tasks, init, check_task, lost_task, args.jobs, args.timeout):
        done[index] = result
        while following in done:
            yield done.pop(following)
            following += 1


def _summary(args: argparse.Namespace, saved: list[str], results: Iterator[SchemaResult]) -> int:
    from engine.check.summary import table

    lines: list[dict[str, Any]] = [line for path in saved for line in _read_lines(path)]
    for result in results:
        line = result.to_json()
        if args.json:
            print(json.dumps(line, ensure_ascii=False), flush=True)
        lines.append(line)
    if not lines:
        raise MaskscopeError("nothing to summarise")
    print(table(lines), end="", file=sys.stderr if args.json else sys.stdout)
    return EXIT_VALID


def _split_saved(paths: list[str]) -> tuple[list[str], list[str]]:
    """Saved `check --json` output (.jsonl) apart from schema files to run."""
    saved = [p for p in paths if p.endswith(".jsonl")]
    return saved, [p for p in paths if not p.endswith(".jsonl")]


def _read_lines(path: str) -> Iterator[dict[str, Any]]:
    text = read_limited(path, "check result")
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            raise MaskscopeError(f"{path}, line {number}: not a `check --json` line") from None
        if not isinstance(line, dict) or not {"compiler", "backend", "valid_n"} <= set(line):
            raise MaskscopeError(f"{path}, line {number}: not a `check --json` line")
        yield line


def _human(result: SchemaResult) -> str:
    name = result.file if result.group is None else f"{result.file}: {result.group}"
    pair = f"[{result.compiler} on {result.backend}]"
    if not result.compiled or result.error:
        status = "CRASH" if result.crashed else "ERROR"
        return f"{status} {name} {pair}: {result.error}"
    status = "FAIL" if result.failed else ("PASS" if result.passed else "GAPS")
    counts = (
        f"{result.valid_ok}/{result.valid_n} valid accepted, "
        f"{result.invalid_rej}/{result.invalid_n} invalid rejected, {result.ms:.0f} ms"
    )
    if result.unexplained:
        counts += f", {result.unexplained} unexplained"
    out = [f"{status:5} {name} {pair}: {counts}"]
    for v in result.verdicts:
        if v.agrees:
            continue
        if v.over_constrained:
            out.append(f"      #{v.index + 1} valid, but {v.where}: {v.excerpt()}")
        elif v.unexplained:
            why = v.errors[0] if v.errors else "?"
            out.append(f"      #{v.index + 1} invalid, accepted, unexplained: {why}")
        else:
            gaps = "; ".join(str(g) for g in v.explained_by)
            out.append(f"      #{v.index + 1} invalid, accepted: {gaps}")
    return "\n".join(out)
