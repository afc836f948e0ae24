"""Two `maskscope test --json` results side by side: schema v1 against v2, one compiler
against another. Per case: validity, field accuracy, valid mass and the outputs that
changed, regressions first.

It reads the result files only (engine/suite/summary.py's stable keys), so results made on
another machine or by another Maskscope version compare alike. A result made on a server
(`--server`) has no valid mass; compared with a local one, it shows per case where the
server's converter and Maskscope's grammar part: validity, outputs, samples failed open.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import jsonschema

from engine.errors import MaskscopeError, SuiteError
from engine.schema.nesting import load_file
from engine.suite.cache import BadRunKey, check_key
from engine.suite.result_schema import RESULT_SCHEMA
from engine.suite.summary import FORMAT


class Change(str, Enum):
    REGRESSED = "regressed"  # fewer valid samples, fewer fields right, or a pass lost
    IMPROVED = "improved"
    CHANGED = "changed"  # the same rates, other outputs
    SAME = "same"
    ADDED = "added"  # in the second result only
    REMOVED = "removed"  # in the first result only


# Regressions first: what a reviewer must look at before anything else.
_ORDER = (Change.REGRESSED, Change.REMOVED, Change.IMPROVED, Change.ADDED, Change.CHANGED)


@dataclass(frozen=True, slots=True)
class OutputChange:
    index: int
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class CaseChange:
    case_id: str
    change: Change
    validity: tuple[float | None, float | None]
    fields: tuple[str, str]  # "ok/checked" in each result
    mean_valid_mass: tuple[float | None, float | None]
    outputs: tuple[OutputChange, ...]
    failed_open: tuple[int, int] = (0, 0)  # samples whose output ignored the schema


@dataclass(frozen=True, slots=True)
class ResultComparison:
    names: tuple[str, str]  # the two files, as given
    metrics: tuple[tuple[str, Any, Any], ...]  # (metric, first, second), every shared metric
    cases: tuple[CaseChange, ...]  # regressions first
    # Where each result was made: "local", or the server, its mode and model (`--server`).
    sources: tuple[str, str] = ("local", "local")

    @property
    def regressed(self) -> bool:
        return any(c.change in (Change.REGRESSED, Change.REMOVED) for c in self.cases)


def load_result(path: str | Path) -> dict[str, Any]:
    """The result in the file, or a SuiteError naming the file and, for a damaged one, the
    place of its first wrong field (too large, not UTF-8, too deep, not JSON, not a result)."""
    try:
        data = load_file(path, "result")
    except SuiteError:
        raise
    except MaskscopeError as exc:  # the window's readers of a result catch SuiteError
        raise SuiteError(exc.message) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SuiteError(f"{path} is not a `maskscope test --json` result")
    _check_run_keys(data, path)  # first: a hostile key is named as such
    wrong = next(_result_validator().iter_errors(data), None)
    if wrong is not None:
        raise SuiteError(f"{path} is damaged: {wrong.json_path} {why_wrong(wrong)}")
    return data


@functools.cache
def _result_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(RESULT_SCHEMA)


_JSON_TYPES = {dict: "an object", list: "a list", str: "text", bool: "true or false",
               int: "a whole number", float: "a number", type(None): "null"}  # fmt: skip


def why_wrong(error: jsonschema.ValidationError) -> str:
    """What is wrong with the value, in a few words: jsonschema's own message quotes the
    value whole, which may be megabytes."""
    got = _JSON_TYPES.get(type(error.instance), "a value")
    if error.validator == "type":
        wanted = error.validator_value
        wanted = [wanted] if isinstance(wanted, str) else wanted
        return f"is {got}, not {' or '.join(wanted)}"
    if error.validator == "required":
        return error.message[:200]  # "'index' is a required property": the names are ours
    value = json.dumps(error.instance)[:40]
    if error.validator in ("minimum", "maximum"):
        return f"is {value}, out of range ({error.validator} {json.dumps(error.validator_value)})"
    if error.validator == "enum":
        return f"is {value}, not one of {json.dumps(error.validator_value)}"
    return f"is {got} that fails {error.validator}"


def _check_run_keys(data: dict[str, Any], path: str | Path) -> None:
    """Every sample's run_key is a run key or absent (a file written before results kept
    them): the window joins it to the run cache's folder to open the sample."""
    samples = data.get("samples")
    if not isinstance(samples, list):
        return
    for i, sample in enumerate(samples):
        key = sample.get("run_key") if isinstance(sample, dict) else None
        if key not in (None, ""):
            try:
                check_key(key, f"{path}: $.samples[{i}].run_key")
            except BadRunKey as exc:  # a result file's fault, as the callers read it
                raise SuiteError(exc.message) from None


def compare_results(a: dict[str, Any], b: dict[str, Any], names=("A", "B")) -> ResultComparison:
    metrics = tuple(
        (key, a["metrics"][key], b["metrics"].get(key))
        for key in a.get("metrics", {})
        if key in b.get("metrics", {})
    )
    cases_a, cases_b = _by_id(a, "cases"), _by_id(b, "cases")
    samples_a, samples_b = _samples(a), _samples(b)
    ids = list(cases_a) + [i for i in cases_b if i not in cases_a]
    changes = [
        _case_change(i, cases_a.get(i), cases_b.get(i), samples_a.get(i, {}), samples_b.get(i, {}))
        for i in ids
    ]
    changes.sort(key=lambda c: _ORDER.index(c.change) if c.change in _ORDER else len(_ORDER))
    return ResultComparison(tuple(names), metrics, tuple(changes), (_source(a), _source(b)))


def _source(result: dict[str, Any]) -> str:
    server = result.get("server")
    if not isinstance(server, dict):
        return "local"
    form = f" ({server['response_format']})" if server.get("response_format") else ""
    model = f", model {server['model']}" if server.get("model") else ""
    return f"server {server.get('url')}, mode {server.get('mode')}{form}{model}"


def _n_failed_open(samples: dict[int, dict[str, Any]]) -> int:
    return sum(bool((s.get("server") or {}).get("failed_open")) for s in samples.values())


def _by_id(result: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in result.get(key, [])}


def _samples(result: dict[str, Any]) -> dict[str, dict[int, dict[str, Any]]]:
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for s in result.get("samples", []):
        out.setdefault(s["case"], {})[s["index"]] = s
    return out


def _mass(samples: dict[int, dict[str, Any]]) -> float | None:
    masses = [s["metrics"]["mean_valid_mass"] for s in samples.values()]
    masses = [m for m in masses if m is not None]
    return sum(masses) / len(masses) if masses else None


def _fields(case: dict[str, Any] | None) -> str:
    return "—" if case is None else f"{case['fields_ok']}/{case['fields_checked']}"


def _case_change(
    case_id: str,
    a: dict[str, Any] | None,
    b: dict[str, Any] | None,
    sa: dict[int, dict[str, Any]],
    sb: dict[int, dict[str, Any]],
) -> CaseChange:
    outputs = tuple(
        OutputChange(i, sa[i]["text"], sb[i]["text"])
        for i in sorted(set(sa) & set(sb))
        if sa[i]["text"] != sb[i]["text"]
    )
    return CaseChange(
        case_id,
        _classify(a, b, bool(outputs)),
        (a["validity_rate"] if a else None, b["validity_rate"] if b else None),
        (_fields(a), _fields(b)),
        (_mass(sa), _mass(sb)),
        outputs,
        (_n_failed_open(sa), _n_failed_open(sb)),
    )


def _classify(a: dict[str, Any] | None, b: dict[str, Any] | None, outputs: bool) -> Change:
    if a is None:
        return Change.ADDED
    if b is None:
        return Change.REMOVED
    score_a = (a["passed"], a["validity_rate"] or 0.0, _share(a))
    score_b = (b["passed"], b["validity_rate"] or 0.0, _share(b))
    worse = any(y < x for x, y in zip(score_a, score_b, strict=True))
    better = any(y > x for x, y in zip(score_a, score_b, strict=True))
    if worse:
        return Change.REGRESSED
    if better:
        return Change.IMPROVED
    return Change.CHANGED if outputs else Change.SAME


def _share(case: dict[str, Any]) -> float:
    return case["fields_ok"] / case["fields_checked"] if case["fields_checked"] else 1.0


def comparison_text(c: ResultComparison) -> str:
    a, b = c.names
    lines = [f"Maskscope test results compared · {a} → {b}"]
    if c.sources != ("local", "local"):
        lines += [f"  {a}: {c.sources[0]}", f"  {b}: {c.sources[1]}"]
    lines.append("")
    for key, x, y in c.metrics:
        if x != y:
            lines.append(f"  {key:<28} {_num(x):>12} → {_num(y):<12}")
    lines.append("")
    for case in c.cases:
        if case.change is Change.SAME:
            continue
        va, vb = (_num(v) for v in case.validity)
        lines.append(
            f"  {case.change.value.upper():<10} {case.case_id}: validity {va} → {vb}, "
            f"fields {case.fields[0]} → {case.fields[1]}, valid mass "
            f"{_num(case.mean_valid_mass[0])} → {_num(case.mean_valid_mass[1])}"
            + (", failed open {} → {}".format(*case.failed_open) if any(case.failed_open) else "")
        )
        for out in case.outputs[:3]:
            lines.append(f"      #{out.index + 1}: {out.before!r}")
            lines.append(f"      {'':>{len(str(out.index + 1)) + 1}}  → {out.after!r}")
    same = sum(1 for x in c.cases if x.change is Change.SAME)
    lines.append(f"  {same} case(s) unchanged")
    lines.append("REGRESSED" if c.regressed else "no regressions")
    return "\n".join(lines)


def _num(value: Any) -> str:
    if value is None:  # not measured (a server run's step counts) or not in that result
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
