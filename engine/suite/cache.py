"""Finished samples kept on disk, so an unchanged case is not decoded again.

A sample is the same when everything that decides its tokens is the same: the model file
(by its sha256), the grammar (by the exact text of the schema and the compiler that turned
it into one), the rendered prompt, the generation settings and the seed. Its key is the
sha256 of those, and its value the saved run (engine/runs/saved.py), which a drill-down
opens in the window like any other run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.errors import MaskscopeError
from engine.model.paths import cache_dir
from engine.runs.saved import SavedRun, load_run, run_to_json, write_atomically
from engine.settings import GenerationSettings

# Bumped when what a cached run holds, or how its key is made, changes.
KEY_VERSION = 1


def default_folder() -> Path:
    return cache_dir() / "suite-runs"


def sample_key(
    model_sha256: str, schema_text: str, prompt: str, settings: GenerationSettings
) -> str:
    """The sample's key; the seed and the compiler are among the settings."""
    parts = {
        "v": KEY_VERSION,
        "model": model_sha256,
        "schema": hashlib.sha256(schema_text.encode("utf-8")).hexdigest(),
        "prompt": prompt,
        "settings": settings.to_json(),
    }
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


class RunCache:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_folder()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> SavedRun | None:
        """The cached run, or None; a damaged entry is dropped, never trusted."""
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return load_run(path)
        except MaskscopeError:
            path.unlink(missing_ok=True)
            return None

    def put(self, key: str, run: SavedRun) -> None:
        """Keep a finished run; a cache that cannot be written only costs a rerun later."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(run_to_json(run), ensure_ascii=False)
            write_atomically(path, text + "\n")
        except OSError:
            pass
