"""Saved runs: a versioned JSON file of step records, settings and result.

A saved run replays in every view without a model, so a demonstration or a bug
report does not depend on the machine that produced it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import typing
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
from engine.runs.provenance import Provenance
from engine.runs.typed import WrongType, check, check_fields
from engine.schema.nesting import load_file
from engine.settings import GenerationSettings

FORMAT = "maskscope-run"
# 2 added provenance; a version 1 file loads with none.
VERSION = 2
READS = (1, 2)
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
    provenance: Provenance | None = None  # None for runs saved before version 2
    # The sha256 of the grammar the run was decoded under (engine/suite/cache.py
    # grammar_digest); "" where it was not recorded (runs made outside a suite, older files).
    grammar_sha256: str = ""


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
        "provenance": run.provenance.to_json() if run.provenance else None,
        # Only where known, so a run saved from the window is the file it always was.
        **({"grammar_sha256": run.grammar_sha256} if run.grammar_sha256 else {}),
    }


def save_run(path: str | Path, run: SavedRun) -> None:
    text = json.dumps(run_to_json(run), ensure_ascii=False, indent=1) + "\n"
    try:
        write_atomically(Path(path), text)
    except OSError as exc:
        raise MaskscopeError(f"cannot write run file {path}: {exc.strerror}") from None


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write into a new file beside `path`, then rename it over `path`: a save that fails
    halfway (a full disk, a crash) leaves the old file whole. Text is written as UTF-8,
    bytes (an image) as they are.

    The file is flushed to the disk before the rename, and the folder after it: without
    that, a power cut soon after a save can leave the new name pointing at an empty file
    (the rename reaches the disk before the data does, on ext4 and others)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        # os.open's mode goes through the umask, as a plain open's would.
        with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to the disk, where the OS allows: Windows
    cannot open a folder for it, and some file systems refuse; the file itself is synced."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def load_run(path: str | Path) -> SavedRun:
    """The run in the file; a MaskscopeError naming the file, and the place of the first wrong
    field, for one that is missing, too large, not UTF-8, too deep, not JSON or damaged."""
    return run_from_json(load_file(path, "run"), str(path))


# The file's top-level keys besides steps, result and provenance, with their types.
_TOP: dict[str, Any] = {"schema_text": str, "prompt": str, "model": str, "grammar_sha256": str}


def run_from_json(data: Any, source: str = "run") -> SavedRun:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MaskscopeError(f"{source} is not a Maskscope run file")
    if data.get("version") not in READS:
        raise MaskscopeError(
            f"{source} is a version {str(data.get('version'))[:20]} run file; this Maskscope "
            f"reads versions {' and '.join(map(str, READS))}"
        )
    try:
        _check_types(data)
    except WrongType as exc:
        raise MaskscopeError(f"{source} is damaged: {exc.place} {exc.why}") from None
    records = tuple(step_from_json(s) for s in data["steps"])
    made = data.get("provenance")
    return SavedRun(
        data["schema_text"], data["prompt"], data["model"], records, _result(data["result"]),
        Provenance.from_json(made) if made is not None else None,
        data.get("grammar_sha256", ""),
    )  # fmt: skip


def _check_types(data: dict[str, Any]) -> None:
    """Every field the run is built of has its record's type (engine/runs/typed.py), so that
    what loads draws: the records take values of any type."""
    for key, kind in [*_TOP.items(), ("steps", list)]:
        if key in data:
            check(data[key], kind, f"$.{key}")
        elif key != "grammar_sha256":  # runs saved outside a suite have none
            _missing(f"$.{key}")
    for i, step in enumerate(data["steps"]):
        check(step, dict, f"$.steps[{i}]")
        if "full" in step:  # the full-vocabulary arrays are never saved
            raise WrongType(f"$.steps[{i}].full", "is not a field a saved run has")
        check_fields(step, StepRecord, f"$.steps[{i}]", skip=("full",))
    if "result" not in data:
        _missing("$.result")
    check(data["result"], RunResult, "$.result")
    _check_settings(data["result"].get("settings", {}), "$.result.settings")
    if data.get("provenance") is not None:
        check(data["provenance"], Provenance, "$.provenance")
        _check_settings(data["provenance"]["settings"], "$.provenance.settings")


def _missing(place: str) -> None:
    raise WrongType(place, "is missing")


def _check_settings(settings: dict[str, Any], place: str) -> None:
    """The settings run_settings reads back; keys of a later Maskscope are left alone."""
    known = {f.name: f for f in dataclasses.fields(GenerationSettings)}
    hints = typing.get_type_hints(GenerationSettings)
    for key, value in settings.items():
        if key in known:
            check(value, hints[key], f"{place}.{key}")


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
