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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engine.errors import MaskscopeError
from engine.files import not_utf8
from engine.records import (
    Candidate,
    Disagreement,
    FinishReason,
    RunResult,
    StepRecord,
    ValidationIssue,
)
from engine.runs.provenance import Provenance
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
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))  # a BOM is no error
    except FileNotFoundError:
        raise MaskscopeError(f"run file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise MaskscopeError(f"cannot read run file {path}: {not_utf8(exc)}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise MaskscopeError(f"cannot read run file {path}: {exc}") from None
    return run_from_json(data, str(path))


def run_from_json(data: Any, source: str = "run") -> SavedRun:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MaskscopeError(f"{source} is not a Maskscope run file")
    if data.get("version") not in READS:
        raise MaskscopeError(
            f"{source} is a version {data.get('version')} run file; this Maskscope reads "
            f"versions {' and '.join(map(str, READS))}"
        )
    try:
        records = tuple(step_from_json(s) for s in data["steps"])
        result = _result(data["result"])
        made = data.get("provenance")
        provenance = Provenance.from_json(made) if made is not None else None
        grammar = data.get("grammar_sha256", "")
        if not isinstance(grammar, str):
            raise TypeError(f"grammar_sha256 is {type(grammar).__name__}, not text")
        return SavedRun(
            data["schema_text"], data["prompt"], data["model"], records, result, provenance,
            grammar,
        )  # fmt: skip
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
