"""`maskscope lint`: what the window's problems list shows, for one schema file."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from shlex import quote
from typing import TYPE_CHECKING, Any

from engine.cli.base import EXIT_BAD_INPUT, EXIT_INVALID, EXIT_VALID
from engine.cli.schema_file import add_root_argument
from engine.schema.nesting import read_limited
from engine.settings import (
    BACKENDS,
    COMPILERS,
    DEFAULT_BACKEND,
    DEFAULT_COMPILER,
    MAX_TOKENS,
    pairings_text,
)

if TYPE_CHECKING:
    from engine.engines.openai_profile import ProfileLint
    from engine.engines.report import EngineResult
    from engine.engines.wrong import WrongInstances
    from engine.grammar.report import Unenforced
    from engine.suite.format import Suite
    from engine.workbench.entries import Fix, Problem
    from engine.workbench.problems import Report

_WARNING_KINDS = ("unenforced", "overconstrained", "lint")
_INVALID_KINDS = ("syntax", "schema")  # no engine can read the schema: no engines block


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lint",
        help="list a schema's problems: errors, unenforced keywords, over-constraint, lints",
        description="Check a schema as the window's problems list does: JSON syntax, every "
        "meta-schema error, whether the compiler's grammar runs on the backend, the keywords "
        "it does not enforce (or over-enforces), and the lints; then what each production engine "
        "(llama.cpp, vLLM/SGLang with XGrammar or llguidance, Outlines, OpenAI strict mode, "
        "Maskscope) does with the schema. Exit 0 when the schema is "
        "valid, 1 with --strict when anything is reported, 2 when it is invalid or unreadable.",
    )
    p.add_argument(
        "schema", metavar="SCHEMA", help="a JSON Schema file (a suite's goes with --suite)"
    )
    add_root_argument(p)
    p.add_argument(
        "--compiler",
        choices=COMPILERS,
        default=DEFAULT_COMPILER,
        help=f"default {DEFAULT_COMPILER}; each runs on: {pairings_text()}",
    )
    p.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND)
    p.add_argument(
        "--max-tokens",
        type=MAX_TOKENS,
        metavar="N",
        help="warn when N is below the longest valid output (counted with the model's tokenizer)",
    )
    p.add_argument("--prompt-file", metavar="FILE", help="the prompt, for description-unseen")
    p.add_argument(
        "--model", metavar="GGUF", help="whose tokenizer counts the bound (and feeds --suite)"
    )
    p.add_argument(
        "--suite",
        metavar="FILE.suite.json",
        help="feed the suite's known-good and known-bad instances through each engine, as "
        "check does; the ones it gets wrong are under each engine's `wrong`",
    )
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on lints, unenforced or over-enforced keywords",
    )
    p.set_defaults(func=cmd_lint)


def cmd_lint(args: argparse.Namespace) -> int:
    from engine.workbench.problems import collect  # compilers and llguidance: only when used

    text = read_limited(args.schema, "schema")
    _refuse_suite(args.schema, text)
    suite = _suite(args.suite)  # a bad suite file is one line before the slow part
    prompt = read_limited(args.prompt_file, "prompt") if args.prompt_file else ""
    # The bound is printed, or compared with --max-tokens; --json alone has no use for it.
    wanted = args.max_tokens is not None or not args.json
    tokenize = _LazyVocab(args.model) if wanted else None
    report = collect(
        text, args.compiler, args.backend, max_tokens=args.max_tokens, prompt=prompt,
        tokenize=tokenize, file=args.schema, root=args.root,
    )  # fmt: skip
    engines = _engines(report.bundled_text or text, report)
    wrong = _wrong(report.bundled_text or text, suite, engines, args.model)
    if args.json:
        print(json.dumps(report_json(report, engines, wrong), ensure_ascii=False))
    else:
        print(_human(args.schema, args, report, engines, wrong))
    if report.errors() or report.compiled is None:
        return EXIT_BAD_INPUT
    if args.strict and any(p.kind in _WARNING_KINDS for p in report.problems):
        return EXIT_INVALID
    return EXIT_VALID


def _refuse_suite(path: str, text: str) -> None:
    """A suite file given where the schema goes: one line saying how to lint its schema
    (MaskscopeError: exit 2), not the suite's own JSON linted as if it were a schema. A suite
    is told apart as `maskscope check` tells it (`.suite.json`), or by its "format"."""
    from engine.errors import MaskscopeError
    from engine.suite.format import FORMAT

    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or too deep: the schema lint says where
        data = None
    data = data if isinstance(data, dict) else {}
    if not path.endswith(".suite.json") and data.get("format") != FORMAT:
        return
    schema_file = data.get("schema_file")
    if isinstance(schema_file, str) and schema_file:
        schema = os.path.join(os.path.dirname(path), schema_file)
        how = f"lint its schema with `maskscope lint --suite {quote(path)} {quote(schema)}`"
    elif "schema" in data:
        how = (
            "its schema is inline: write its `schema` to a file and run `maskscope lint "
            f"--suite {quote(path)} FILE` (`maskscope check {quote(path)}` checks the inline "
            "schema against the suite's instances as it is)"
        )
    else:
        how = f"run `maskscope lint --suite {quote(path)} SCHEMA` with the schema it tests"
    raise MaskscopeError(f"{path} is a suite file, not a schema: {how}")


class _LazyVocab:
    """The model's tokenizer, its vocabulary read (a second or two) on the first call only:
    the bound asks for tokens only where the grammar has a longest output."""

    def __init__(self, model: str | None) -> None:
        self.model = model
        self._tokenize: Callable[[str], list[int]] | None = None

    def __call__(self, text: str) -> list[int]:
        if self._tokenize is None:
            from engine.workbench.vocab import vocab_tokenizer

            self._tokenize = vocab_tokenizer(self.model)
        return self._tokenize(text)


def _engines(text: str, report: Report) -> tuple[EngineResult, ...]:
    """Every production engine's take on a schema that parsed and passed its meta-schema."""
    if any(p.kind in _INVALID_KINDS for p in report.problems):
        return ()
    from engine.engines.report import engines_report  # every compiler: only when used

    return engines_report(text)


def _suite(path: str | None) -> Suite | None:
    if path is None:
        return None
    from engine.suite.load import load_suite

    return load_suite(path)


def _wrong(
    text: str, suite: Suite | None, engines: tuple[EngineResult, ...], model: str | None
) -> dict[str, WrongInstances]:
    """With --suite: per engine, the suite's instances it gets wrong (engine/engines/wrong.py)."""
    if suite is None or not engines:
        return {}
    from engine.engines.wrong import wrong_instances

    return wrong_instances(text, suite.instances, engines, model=model)


def report_json(
    report: Report,
    engines: tuple[EngineResult, ...] = (),
    wrong: dict[str, WrongInstances] | None = None,
) -> dict[str, Any]:
    """The issue's shape: problems, unenforced, overconstrained, lints; and engines, keyed
    by target id (empty for a schema no engine can read), each with `wrong` with --suite."""
    return {
        "problems": [
            _place(p, {"severity": p.severity, "message": p.message})
            for p in report.problems
            if p.kind not in _WARNING_KINDS
        ],
        "unenforced": [_gap(p) for p in report.unenforced()],
        "overconstrained": [_gap(p) for p in report.overconstrained()],
        "lints": [_lint(p) for p in report.lints()],
        "engines": {e.target: _engine(e, (wrong or {}).get(e.target)) for e in engines},
    }


def _engine(result: EngineResult, wrong: WrongInstances | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "label": result.label,
        "engine": result.engine,
        "version": result.version,
        "compiles": result.compiles,
    }
    if result.message is not None:
        out["message"] = result.message
    out["unenforced"] = [_skipped(u) for u in result.unenforced]
    if result.lints is not None:
        out["lints"] = [
            {**_skipped(lint), **({"fix": _fix(lint.fix)} if lint.fix is not None else {})}
            for lint in result.lints
        ]
    if wrong is not None:
        from engine.engines.wrong import wrong_json

        out["wrong"] = wrong_json(wrong)
    return out


def _skipped(item: Unenforced | ProfileLint) -> dict[str, Any]:
    return {"path": item.path, "keyword": item.keyword, "note": item.note}


def _place(problem: Problem, head: dict[str, Any]) -> dict[str, Any]:
    return {**head, "path": problem.path, "line": problem.line, "column": problem.column}


def _gap(problem: Problem) -> dict[str, Any]:
    return {**_place(problem, {"keyword": problem.keyword}), "reason": problem.reason}


def _lint(problem: Problem) -> dict[str, Any]:
    out = _place(problem, {"id": problem.id, "message": problem.message})
    if problem.fix is not None:
        out["fix"] = _fix(problem.fix)
    return out


def _fix(fix: Fix) -> dict[str, Any]:
    edits = [{"start": e.start, "end": e.end, "text": e.text} for e in fix.edits]
    return {"label": fix.label, "target": fix.target, "edits": edits}


def _human(
    name: str,
    args: argparse.Namespace,
    report: Report,
    engines: tuple[EngineResult, ...],
    wrong: dict[str, WrongInstances],
) -> str:
    lines = []
    for p in report.problems:
        where = f"{name}:{p.line}:{p.column}" if p.line is not None else name
        tag = f" [{p.id}]" if p.id else (f" [{p.kind}]" if p.kind != "lint" else "")
        lines.append(f"{where}: {p.severity}: {p.message}{tag}")
    if engines:  # before the verdict, which stays the last line
        lines.append("Engines:")
        for e in engines:
            lines.append(f"  {_engine_line(e)}")
            if e.target in wrong:
                lines.append(f"    suite instances: {_wrong_line(wrong[e.target])}")
    pair = f"{args.compiler} on {args.backend}"
    if report.runs:
        took = f" in {report.compile_ms:.0f} ms" if report.compile_ms is not None else ""
        bound = (
            f"; longest valid output {report.output_bound} tokens"
            if report.output_bound is not None
            else "; the output has no length bound"
        )
        lines.append(f"✓ the grammar runs ({pair}), compiled{took}{bound}")
    else:
        lines.append(f"✗ the schema cannot run ({pair})")
    return "\n".join(lines)


def _wrong_line(wrong: WrongInstances) -> str:
    from engine.engines.wrong import wrong_line

    return wrong_line(wrong)


def _engine_line(result: EngineResult) -> str:
    version = result.version or "not installed"
    if result.lints is not None:  # a documented profile: its version is the docs' date
        version = f"docs of {version}"
    head = f"{result.target}: {result.label}, {version}: "
    if not result.compiles:
        return f"{head}✗ {result.message}"
    gaps = len(result.unenforced)
    return head + (f"✓ compiles, {gaps} keyword(s) not enforced" if gaps else "✓ compiles")
