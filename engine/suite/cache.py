"""Finished samples kept on disk, so an unchanged case is not decoded again.

A sample is the same when everything that decides its tokens is the same: the model file
(by its sha256), the grammar (the exact text of the schema, and the sha256 of the grammar it
compiled to), the rendered prompt, the generation settings and the seed (the compiler and
backend among them), and what ran them: Maskscope's, llama-cpp-python's and llguidance's
versions and the llama.cpp build. After an upgrade of any of them a sample is decoded again,
so what `export` ships (a grammar compiled now) is what was tested. Its key is the sha256 of
those, and its value the saved run (engine/runs/saved.py), which a drill-down opens in the
window like any other run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path

from engine.errors import MaskscopeError
from engine.grammar.compile import CompiledSchema
from engine.llama_build.describe import build_description, package_version
from engine.model.paths import cache_dir
from engine.runs.saved import SavedRun, load_run, run_to_json, write_atomically
from engine.settings import GenerationSettings

# Bumped when what a cached run holds, or how its key is made, changes. 2: the grammar's
# hash and the versions that made the sample.
KEY_VERSION = 2
# What sample_key makes, and so the only name the cache ever reads, writes or deletes: a key
# from a file (a result's run_key) is joined to the cache folder, so anything else (an
# absolute path, `..`) would reach outside it.
KEY = re.compile(r"[0-9a-f]{64}")


class BadRunKey(MaskscopeError):
    kind = "run key"


def check_key(key: object, where: str = "run key") -> str:
    """`key` when it is a run key (64 lowercase hex characters); BadRunKey naming `where`
    (the file and field it came from) otherwise."""
    if isinstance(key, str) and KEY.fullmatch(key):
        return key
    shown = json.dumps(key, ensure_ascii=False)[:80] if isinstance(key, str) else repr(key)
    raise BadRunKey(f"{where} is not a run key (64 lowercase hex characters): {shown}")


def default_folder() -> Path:
    return cache_dir() / "suite-runs"


def grammar_digest(compiled: CompiledSchema) -> str:
    """The sha256 of the grammar that was run: the GBNF, or the engine's own grammar for the
    other compilers (what the bundle ships as its grammar file)."""
    return hashlib.sha256(compiled.grammar_text.encode("utf-8")).hexdigest()


@functools.cache
def made_by() -> dict[str, str]:
    """What decodes and masks a sample, besides the model and the grammar: the versions of
    Maskscope, llama-cpp-python and llguidance, and the llama.cpp build. None changes inside
    a process; the build is asked once llama.cpp is proven (a model is loaded)."""
    try:
        build = build_description()
    except (ImportError, OSError, AttributeError):
        build = ""
    return {
        "maskscope": package_version("maskscope"),
        "llama_cpp_python": package_version("llama_cpp_python"),
        "llguidance": package_version("llguidance"),
        "llama_cpp_build": build,
    }


def sample_key(
    model_sha256: str,
    schema_text: str,
    prompt: str,
    settings: GenerationSettings,
    grammar_sha256: str,
    makers: dict[str, str],
) -> str:
    """The sample's key; the seed, the compiler and the backend are among the settings,
    `makers` is made_by()."""
    parts = {
        "v": KEY_VERSION,
        "model": model_sha256,
        "schema": hashlib.sha256(schema_text.encode("utf-8")).hexdigest(),
        "grammar": grammar_sha256,
        "prompt": prompt,
        "settings": settings.to_json(),
        "made_by": makers,
    }
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


class RunCache:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_folder()

    def _path(self, key: str) -> Path:
        """Where the key's run is kept; BadRunKey for anything but a run key."""
        key = check_key(key)
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> SavedRun | None:
        """The cached run, or None; a damaged entry is dropped, never trusted. BadRunKey for
        a key that is not one."""
        path = self._path(key)
        # A symlink is not an entry the cache wrote (put writes plain files): it is neither
        # read nor deleted, whatever it points at.
        if path.is_symlink() or not path.is_file():
            return None
        try:
            return load_run(path)
        except MaskscopeError:
            self._drop(path)
            return None

    def _drop(self, path: Path) -> None:
        """Delete a damaged entry, only when it is a plain file that the cache's own folder
        holds (its parent folder not a link out)."""
        try:
            inside = path.parent.resolve().is_relative_to(self.folder.resolve())
        except OSError:
            return
        if inside and not path.is_symlink():
            path.unlink(missing_ok=True)

    def put(self, key: str, run: SavedRun) -> None:
        """Keep a finished run; a cache that cannot be written only costs a rerun later.
        BadRunKey for a key that is not one."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(run_to_json(run), ensure_ascii=False)
            write_atomically(path, text + "\n")
        except OSError:
            pass
