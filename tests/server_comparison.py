"""Each bundled suite three ways (issue 24): decoded here by Maskscope, on llama.cpp's own
llama-server with the tested GBNF (`--server-mode grammar`), and on llama-server with the
schema in `response_format` (`--server-mode response_format`: llama.cpp's own converter).

`make server-comparison` starts the cached llama-server (tests/llama_server.py) and runs
`maskscope test` as a user would, one child process per suite and way. It prints a Markdown
table, then where the ways part: each sample that is valid one way and not another with the
validator's message, each server answer the fail-open check caught, and each answer whose keys
come in another order than Maskscope's own answer to the same sample.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.llama_server import LlamaServer, ServerNotUp

ROOT = Path(__file__).resolve().parents[1]
SUITES = sorted((ROOT / "resources" / "suites").glob("*.suite.json"))
WAYS = {
    "Maskscope (local)": (),
    "llama-server, tested GBNF": ("--server-mode", "grammar"),
    "llama-server, json_schema": ("--server-mode", "response_format"),
}


def run_way(suite: Path, url: str, way: tuple[str, ...], samples: int | None) -> dict[str, Any]:
    argv = [sys.executable, "-m", "engine.cli.main", "test", str(suite), "--json", "--no-cache"]
    if way:
        # One request at a time: llama-server batches concurrent requests into one forward
        # pass, whose kernels then sum in another order, and two runs of the table differed.
        argv += ["--server", url, "--concurrency", "1", *way]
    if samples:
        argv += ["--samples", str(samples)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"exit_code": done.returncode, "problems": [done.stderr.strip()[-300:]]}


def _rate(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def table_row(suite: str, way: str, result: dict[str, Any]) -> str:
    m = result.get("metrics", {})
    verdict = {0: "passed", 1: "failed"}.get(result.get("exit_code"), "error")
    valid = f"{sum(s['valid'] for s in result.get('samples', []))}/{m.get('n_samples', 0)}"
    cells = [suite, way, verdict, valid, _rate(m.get("validity_rate")),
             _rate(m.get("field_accuracy")), _rate(m.get("truncation_rate")),
             str(m.get("n_failed_open", 0))]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def partings(results: dict[str, dict[str, Any]]) -> list[str]:
    """Where the ways part, sample by sample, against Maskscope's own answer."""
    local = {(s["case"], s["index"]): s for s in results["Maskscope (local)"].get("samples", [])}
    lines = []
    for way, result in results.items():
        for s in result.get("samples", []):
            mine = local.get((s["case"], s["index"]))
            where = f"{way}, {s['case']} #{s['index'] + 1}"
            if s.get("server", {}).get("failed_open"):
                lines.append(f"- {where}: failed open: {s['server']['failed_open']}")
            elif not s["valid"]:
                said = "; ".join(s.get("failures") or [s.get("message", "")])
                text, n = json.dumps(s["text"][:60]), s["metrics"]["n_tokens"]
                lines.append(f"- {where}: invalid: {said[:200]}: {text} in {n} tokens")
            if mine and _reordered(s.get("json"), mine.get("json")):
                lines.append(f"- {where}: keys {list(s['json'])}, local {list(mine['json'])}")
    return lines


def _reordered(theirs: Any, mine: Any) -> bool:
    """The same keys as Maskscope's answer, in another order."""
    both = isinstance(theirs, dict) and isinstance(mine, dict)
    return both and set(theirs) == set(mine) and list(theirs) != list(mine)


def compare(url: str, samples: int | None) -> tuple[list[str], list[str]]:
    """The table's rows and the notes on where the ways part, every bundled suite."""
    rows, notes = [], []
    for suite in SUITES:
        name = suite.name.removesuffix(".suite.json")
        results = {way: run_way(suite, url, argv, samples) for way, argv in WAYS.items()}
        rows += [table_row(name, way, r) for way, r in results.items()]
        notes += [f"{name}: {n}" for n in partings(results)]
        notes += [f"{name}, {way}: {p}" for way, r in results.items() for p in r["problems"]]
        notes += [f"{name}, {way}: {t['text']}" for way, r in results.items()
                  for t in r.get("thresholds", []) if not t["passed"]]  # fmt: skip
        notes += [f"{name}: Maskscope's llamacpp report: {skipped}" for skipped in _skipped(suite)]
    return rows, notes


def _skipped(suite: Path) -> list[str]:
    """The keywords of the suite's schema that `maskscope lint` reports llama.cpp's converter
    skips. That report reads llama-cpp-python's Python port of the converter; llama-server runs
    the C++ one, which also reads an integer's minimum and maximum (common/json-schema.cpp,
    build_integer), so those lines do not hold for llama-server (docs/suites-and-export.md)."""
    from engine.engines.report import engines_report
    from engine.suite.load import load_suite, schema_text_of

    schema = schema_text_of(load_suite(str(suite)).schema)
    found = [e for e in engines_report(schema) if e.target == "llamacpp"]
    return [f"{u.keyword} at {u.path}" for e in found for u in e.unenforced]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.server_comparison", description=__doc__)
    p.add_argument("--samples", type=int, help="samples per case (default: each suite's)")
    args = p.parse_args(argv)
    header = ["suite", "way", "verdict", "valid", "validity", "field acc.", "trunc.", "fail-open"]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with LlamaServer(Path(tmp) / "server.log") as url:
                rows, notes = compare(url, args.samples)
        except ServerNotUp as e:
            print(e, file=sys.stderr)
            return 2
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    print("\n".join(rows))
    print("\nWhere they part:\n" + ("\n".join(notes) or "nowhere"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
