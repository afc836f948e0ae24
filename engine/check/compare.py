"""`check --compare`: per schema, where the compilers' (and backends') verdicts differ."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from engine.check.run import SchemaResult


def differences(results: Iterable[SchemaResult]) -> str:
    """One block per schema whose verdicts differ between compiler/backend pairs."""
    by_case: dict[tuple[str, str | None], list[SchemaResult]] = defaultdict(list)
    for result in results:
        by_case[result.file, result.group].append(result)
    blocks = [_block(found) for found in by_case.values()]
    shown = [b for b in blocks if b]
    if not shown:
        return f"Every compiler and backend gave the same verdicts on {len(blocks)} schemas.\n"
    return "\n".join(shown) + f"\nVerdicts differ on {len(shown)} of {len(blocks)} schemas.\n"


def _block(found: list[SchemaResult]) -> str:
    first = found[0]
    name = first.file if first.group is None else f"{first.file}: {first.group}"
    lines = []
    made = {_pair(r): r.compiled for r in found}
    if len(set(made.values())) > 1:
        lines.append(f"  compiled: {_split(made, 'yes', 'no')}")
    compiled = [r for r in found if r.compiled and r.verdicts]
    for i in range(min((len(r.verdicts) for r in compiled), default=0)):
        accepted = {_pair(r): r.verdicts[i].accepted for r in compiled}
        if len(set(accepted.values())) > 1:
            v = compiled[0].verdicts[i]
            what = "valid" if v.valid else "invalid"
            about = f" ({v.description})" if v.description else ""
            lines.append(f"  #{i + 1} {what}{about}: {_split(accepted, 'accepted', 'rejected')}")
    return "\n".join([name, *lines]) if lines else ""


def _pair(result: SchemaResult) -> str:
    return f"{result.compiler}/{result.backend}"


def _split(verdicts: dict[str, bool], yes: str, no: str) -> str:
    said = [f"{yes} by " + ", ".join(p for p, v in verdicts.items() if v)]
    said.append(f"{no} by " + ", ".join(p for p, v in verdicts.items() if not v))
    return "; ".join(said)
