"""The fidelity table: `check --json` lines summed up, compiler by compiler and backend by
backend, one table per corpus, and `--compare`'s list of schemas where verdicts differ."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.check.pool import CRASHED, HUNG
from engine.settings import BACKENDS, COMPILERS

Line = Mapping[str, Any]
SUITE = "JSON-Schema-Test-Suite"
OTHER = "MaskBench and other files"


@dataclass(frozen=True, slots=True)
class SummaryRow:
    compiler: str
    backend: str
    schemas: int
    compiled: int
    passed: int
    valid_ok: int
    valid_n: int
    invalid_rej: int
    invalid_n: int
    unexplained: int
    crashes: int
    median_ms: float | None
    categories: tuple[int, int] | None  # suite categories fully covered, of all


def passed(line: Line) -> bool:
    return (
        bool(line["compiled"])
        and "error" not in line
        and line["valid_ok"] == line["valid_n"]
        and line["invalid_rej"] == line["invalid_n"]
    )


def crashed(line: Line) -> bool:
    return str(line.get("error") or "").startswith((CRASHED, HUNG))


def corpus(line: Line) -> str:
    return SUITE if "group" in line else OTHER


def rows(lines: Iterable[Line]) -> dict[str, list[SummaryRow]]:
    """Per corpus, one row per compiler and backend, in COMPILERS order."""
    groups: dict[tuple[str, str, str], list[Line]] = defaultdict(list)
    for line in lines:
        groups[corpus(line), line["compiler"], line["backend"]].append(line)
    tables: dict[str, list[SummaryRow]] = {}
    for key in sorted(
        groups, key=lambda k: (k[0] != OTHER, _rank(COMPILERS, k[1]), _rank(BACKENDS, k[2]))
    ):
        tables.setdefault(key[0], []).append(_row(key[1], key[2], groups[key], key[0] == SUITE))
    return tables


def _rank(names: tuple[str, ...], name: str) -> int:
    return names.index(name) if name in names else len(names)


def _row(compiler: str, backend: str, lines: Sequence[Line], suite: bool) -> SummaryRow:
    made = [ln for ln in lines if ln["compiled"]]
    times = [ln["ms"] for ln in made if ln.get("ms") is not None]
    return SummaryRow(
        compiler=compiler,
        backend=backend,
        schemas=len(lines),
        compiled=len(made),
        passed=sum(passed(ln) for ln in lines),
        valid_ok=sum(ln["valid_ok"] for ln in made),
        valid_n=sum(ln["valid_n"] for ln in made),
        invalid_rej=sum(ln["invalid_rej"] for ln in made),
        invalid_n=sum(ln["invalid_n"] for ln in made),
        unexplained=sum(ln["unexplained"] for ln in lines),
        crashes=sum(crashed(ln) for ln in lines),
        median_ms=statistics.median(times) if times else None,
        categories=_categories(lines) if suite else None,
    )


def _categories(lines: Sequence[Line]) -> tuple[int, int]:
    """A category is one suite file; it is covered when every group in it passes."""
    by_file: dict[str, bool] = {}
    for line in lines:
        name = Path(line["file"]).stem
        by_file[name] = by_file.get(name, True) and passed(line)
    return sum(by_file.values()), len(by_file)


def table(lines: Iterable[Line]) -> str:
    """Markdown tables, ready for the docs. Valid accepted and invalid rejected count the
    instances of the schemas that compiled."""
    out = []
    for name, found in rows(lines).items():
        suite = name == SUITE
        head = ["compiler", "backend", "schemas", "compiled", "pass", "valid accepted"]
        head += ["invalid rejected", "unexplained", "crashes", "median compile ms"]
        head += ["categories fully covered"] if suite else []
        out += [f"{name}:", "", _md(head), _md(["---"] * len(head))]
        for r in found:
            cells = [r.compiler, r.backend, str(r.schemas), _pct(r.compiled, r.schemas)]
            cells += [_pct(r.passed, r.schemas), _pct(r.valid_ok, r.valid_n)]
            cells += [_pct(r.invalid_rej, r.invalid_n), str(r.unexplained), str(r.crashes)]
            cells.append("-" if r.median_ms is None else f"{r.median_ms:.1f}")
            if r.categories is not None:
                cells.append(f"{r.categories[0]} of {r.categories[1]}")
            out.append(_md(cells))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _md(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _pct(part: int, whole: int) -> str:
    return "-" if whole == 0 else f"{100 * part / whole:.1f}% ({part}/{whole})"
