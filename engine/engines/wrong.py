"""With a suite open: the suite's known instances that each engine would get wrong.

A suite holds known-good and known-bad outputs (engine/suite/format.py `Instance`). Each
local target's real engine, its compiler's grammar on the mask backend that production runs
it with (engine/engines/targets.py `Target.backend`), is fed every instance by
`maskscope check`'s own machinery: engine/check/pool.py's worker processes, each with the
model's vocabulary loaded, running engine/check/run.py `check_case` (the instance written in
the key order that compiler's grammar writes, then fed token by token through the masks). A
worker that crashes or hangs costs that engine's cell, as in check.

Wrong means against the suite's label: a known-bad instance the grammar let through
(`accepts`), or a known-good one it refused (`rejects`). Each says how, in check's words:
where the grammar refused it (the written instance with the spot marked ⟦here⟧); or, for
one let through, whether the engine's report explains it (a keyword it says it does not
enforce) or jsonschema too finds the instance valid.

OpenAI has no local engine: its cell is skipped with the reason, as is an engine that does
not take the schema (nothing to feed).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.check.inputs import SchemaCase
from engine.check.verdict import InstanceVerdict
from engine.engines.report import EngineResult
from engine.engines.targets import TARGETS, Target
from engine.suite.format import Instance, Suite

JOBS = min(2, os.cpu_count() or 1)  # check's default: one worker a core, two at most
# Per engine, as check's --timeout: outlines-core's Index over 262,144 tokens is the slow
# part (45 s for the bundled order example on 2 cores; read back from disk after that).
TIMEOUT_S = 120.0
NO_ENGINE = "no local engine: OpenAI compiles the schema on its servers"


@dataclass(frozen=True, slots=True)
class WrongInstance:
    number: int  # 1-based, as the suite lists its instances
    description: str
    note: str  # how, in check's words


@dataclass(frozen=True, slots=True)
class WrongInstances:
    """One engine's mistakes on the suite's instances, or why it was not fed them."""

    accepts: tuple[WrongInstance, ...] = ()  # known-bad, let through
    rejects: tuple[WrongInstance, ...] = ()  # known-good, refused
    checked: int = 0  # instances fed through the engine
    skipped: str | None = None


def wrong_instances(
    text: str,
    instances: Sequence[Instance],
    results: Iterable[EngineResult],
    *,
    model: str | None = None,
    jobs: int = JOBS,
    timeout_s: float = TIMEOUT_S,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, WrongInstances]:
    """Per target of `results` (the engines report of `text`), the instances it gets wrong.
    `model`: the GGUF whose vocabulary the workers load (the default model's by default).
    `should_stop()` is asked between engines: True ends the workers and returns {}."""
    from engine.suite.instances import check_case

    results = tuple(results)
    rows = {t.id: t for t in TARGETS}
    out: dict[str, WrongInstances] = {}
    runs: list[tuple[str, str, str]] = []  # (target, compiler, backend)
    for result in results:
        row = rows.get(result.target)
        reason = _skip_reason(row, result)
        if reason is not None:
            out[result.target] = WrongInstances(skipped=reason)
        elif row is not None and row.compiler is not None and row.backend is not None:
            runs.append((result.target, row.compiler, row.backend))
    if runs and instances:
        suite = Suite(name="suite", schema_text=text, prompt="", instances=tuple(instances))
        case = check_case(suite)
        fed = _feed(case, runs, model, jobs, timeout_s, should_stop)
        if fed is None:
            return {}
        out.update(fed)
    return {r.target: out.get(r.target, WrongInstances()) for r in results}


def _skip_reason(row: Target | None, result: EngineResult) -> str | None:
    if row is None or row.compiler is None or row.backend is None:
        return NO_ENGINE
    if not result.compiles:
        return "the engine does not take the schema: nothing to feed"
    return None


def _feed(
    case: SchemaCase,
    runs: list[tuple[str, str, str]],
    model: str | None,
    jobs: int,
    timeout_s: float,
    should_stop: Callable[[], bool] | None,
) -> dict[str, WrongInstances] | None:
    from functools import partial

    from engine.check.pool import run_pool
    from engine.check.run import check_task, load_model, lost_task

    tasks = [(case, compiler, backend) for _, compiler, backend in runs]
    found: dict[str, WrongInstances] = {}
    results = run_pool(tasks, partial(load_model, model), check_task, lost_task, jobs, timeout_s)
    try:
        for index, result in results:
            target = runs[index][0]
            if not result.compiled or result.error is not None:
                found[target] = WrongInstances(skipped=result.error or "no grammar")
            else:
                found[target] = _judged(result.verdicts)
            if should_stop is not None and should_stop():
                return None
    finally:
        results.close()  # the workers end with the generator
    return found


def _judged(verdicts: Sequence[InstanceVerdict]) -> WrongInstances:
    accepts, rejects = [], []
    for v in verdicts:
        if v.label is False and v.accepted:
            accepts.append(WrongInstance(v.index + 1, v.description, _let_through(v)))
        elif v.label is True and not v.accepted:
            rejects.append(WrongInstance(v.index + 1, v.description, f"{v.where}: {v.excerpt()}"))
    return WrongInstances(tuple(accepts), tuple(rejects), len(verdicts))


def _let_through(verdict: InstanceVerdict) -> str:
    if verdict.valid:
        return "accepted, and jsonschema finds it valid too: the schema allows it"
    if verdict.explained_by:
        gaps = ", ".join(f"`{u.keyword}` at {u.path}" for u in verdict.explained_by)
        return f"accepted: the engine does not enforce {gaps}"
    first = verdict.errors[0] if verdict.errors else "invalid"
    return f"accepted, though invalid ({first}), and the engine's report does not explain it"


def wrong_json(wrong: WrongInstances) -> dict[str, Any]:
    """`maskscope lint --json --suite`'s `"wrong"` under an engine."""
    if wrong.skipped is not None:
        return {"skipped": wrong.skipped}
    return {
        "checked": wrong.checked,
        "accepts": [_instance_json(w) for w in wrong.accepts],
        "rejects": [_instance_json(w) for w in wrong.rejects],
    }


def _instance_json(wrong: WrongInstance) -> dict[str, Any]:
    return {"instance": wrong.number, "description": wrong.description, "note": wrong.note}


def wrong_line(wrong: WrongInstances) -> str:
    """In one line: "2 known-bad accepted (#1, #4), 1 known-good rejected (#6)", "none of 6
    wrong", or why none were fed."""
    if wrong.skipped is not None:
        return f"not fed: {wrong.skipped}"
    parts = [
        f"{len(found)} known-{kind} {verb} ({', '.join(f'#{w.number}' for w in found)})"
        for found, kind, verb in (
            (wrong.accepts, "bad", "accepted"),
            (wrong.rejects, "good", "rejected"),
        )
        if found
    ]
    return ", ".join(parts) if parts else f"none of {wrong.checked} wrong"
