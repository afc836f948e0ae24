"""Saved runs: a versioned JSON file of step records, settings and result.

A saved run replays in every view without a model, so a demonstration or a bug
report does not depend on the machine that produced it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engine.errors import MaskscopeError
from engine.records import (
    Candidate,
    Disagreement,
    FinishReason,
    RunResult,
    StepRecord,
    ValidationIssue,
)
from engine.settings import GenerationSettings

FORMAT = "maskscope-run"
VERSION = 1
# What runs saved before a setting existed ran with: every one was compiled by llama.cpp's
# converter, whatever the default compiler is now.
_SETTINGS_BEFORE = {"compiler": "llamacpp"}


@dataclass(frozen=True, slots=True)
class SavedRun:
    schema_text: str
    prompt: str
    model: str  # the GGUF's file name
    records: tuple[StepRecord, ...]
    result: RunResult


def run_settings(run: SavedRun) -> GenerationSettings:
    """The settings the run was made with, as far as its file says."""
    known = {f.name for f in dataclasses.fields(GenerationSettings)}
    saved = {k: v for k, v in run.result.settings.items() if k in known}
    return GenerationSettings(**{**_SETTINGS_BEFORE, **saved})


def run_to_json(run: SavedRun) -> dict[str, Any]:
    result = asdict(run.result)
    result["finish_reason"] = run.result.finish_reason.value
    return {
        "format": FORMAT,
        "version": VERSION,
        "schema_text": run.schema_text,
        "prompt": run.prompt,
        "model": run.model,
        "steps": [r.to_json() for r in run.records],
        "result": result,
    }


def save_run(path: str | Path, run: SavedRun) -> None:
    text = json.dumps(run_to_json(run), ensure_ascii=False, indent=1)
    try:
        Path(path).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise MaskscopeError(f"cannot write run file {path}: {exc.strerror}") from None


def load_run(path: str | Path) -> SavedRun:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MaskscopeError(f"run file not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MaskscopeError(f"cannot read run file {path}: {exc}") from None
    return run_from_json(data, str(path))


def run_from_json(data: Any, source: str = "run") -> SavedRun:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MaskscopeError(f"{source} is not a Maskscope run file")
    if data.get("version") != VERSION:
        raise MaskscopeError(
            f"{source} is a version {data.get('version')} run file; this Maskscope reads "
            f"version {VERSION}"
        )
    try:
        records = tuple(step_from_json(s) for s in data["steps"])
        result = _result(data["result"])
        return SavedRun(data["schema_text"], data["prompt"], data["model"], records, result)
    except (KeyError, TypeError, ValueError) as exc:
        raise MaskscopeError(f"{source} is damaged: {type(exc).__name__}: {exc}") from None


def _candidates(items: list[dict[str, Any]]) -> tuple[Candidate, ...]:
    return tuple(Candidate(**c) for c in items)


def step_from_json(data: dict[str, Any]) -> StepRecord:
    """A StepRecord back from StepRecord.to_json()."""
    fields = dict(data)
    fields["top_raw"] = _candidates(fields["top_raw"])
    fields["top_masked"] = _candidates(fields["top_masked"])
    d = fields.get("disagreement")
    if d is not None:
        fields["disagreement"] = Disagreement(
            **{
                **d,
                "only_primary": _candidates(d["only_primary"]),
                "only_secondary": _candidates(d["only_secondary"]),
            }
        )
    return StepRecord(**fields)


def _result(data: dict[str, Any]) -> RunResult:
    fields = dict(data)
    fields["finish_reason"] = FinishReason(fields["finish_reason"])
    fields["errors"] = tuple(ValidationIssue(**e) for e in fields["errors"])
    fields["unchecked_formats"] = tuple(fields.get("unchecked_formats", ()))
    return RunResult(**fields)
