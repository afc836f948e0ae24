"""outlines-core Indexes kept on disk, under the user cache folder, keyed like the grammar
judge's verdicts (engine/grammar/judge/verdicts.py): a sha256 of what makes the Index what it is,
here outlines-core's version, the regex and the vocabulary's digest.

An Index takes seconds to minutes to build over Gemma's 262,144 tokens (45 s for the bundled
order example on 2 cores) and reads back in a fraction of a second, so a schema built once
is not built again in the next window or CLI run.

A file is a sha256 of its payload, then the payload: outlines-core's own serialisation of
the Index (the bytes its `__reduce__` hands to pickle, read back with `Index.from_binary`),
so nothing in the cache is unpickled. A file that is truncated or corrupt fails the digest
and is ignored (the Index is built again and the file replaced); a read-only or full disk
costs only the cache. Files are written aside and renamed into place, so a reader never
sees half of one, and the least recently used are deleted past KEPT_FILES or KEPT_BYTES. An
Index over 262,144 tokens is large: the bundled currency example's 1 KB, person's 139 MB,
invoice's 726 MB (built in 0.4, 8 and 30 s on 2 busy cores; read back in 0.003, 1.2 and
3.3 s). zlib at level 1 shrank person's only to 81 MB for 2 s more
per write, so the bytes are stored as they are.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import threading
import time
from pathlib import Path

import outlines_core

from engine.model.paths import cache_dir

_FORMAT = "1"  # in the key: a file of another layout is never read as this one
_FOLDER = "outlines-indexes"
_SUFFIX = ".index"
KEPT_FILES = 64
KEPT_BYTES = 1 << 30  # 1 GiB
_STALE_S = 3600.0  # a partial file this old was left by a process that died
_DIGEST = hashlib.sha256().digest_size


class IndexDisk:
    """The Index files in one folder (the user cache's by default)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder
        self._version = importlib.metadata.version("outlines-core")

    @property
    def folder(self) -> Path:
        return self._folder or cache_dir() / _FOLDER

    def key(self, regex: str, vocabulary_digest: str) -> str:
        text = "\0".join([_FORMAT, self._version, vocabulary_digest, regex])
        return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{_SUFFIX}"

    def read(self, key: str) -> outlines_core.Index | None:
        """The Index stored under `key`; None when there is none or it does not read back
        whole."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        payload = data[_DIGEST:]
        if len(data) <= _DIGEST or hashlib.sha256(payload).digest() != data[:_DIGEST]:
            return None  # cut short or corrupt: built again, and the file replaced
        try:
            index = outlines_core.Index.from_binary(payload)
        except ValueError:  # written by an outlines-core that lays it out differently
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: the last to be deleted
        return index

    def write(self, key: str, index: outlines_core.Index) -> None:
        """Store `index` under `key`, then delete the oldest files past the bounds."""
        payload = _binary(index)
        if len(payload) > KEPT_BYTES:
            return  # it would only push the others out and then go itself
        path = self.path(key)
        partial = path.with_name(f"{key}.{os.getpid()}.{threading.get_ident()}.partial")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with partial.open("wb") as out:
                out.write(hashlib.sha256(payload).digest())
                out.write(payload)
            os.replace(partial, path)
        except OSError:  # a read-only or full cache: the Index still serves this process
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            return
        prune(path.parent)


def _binary(index: outlines_core.Index) -> bytes:
    """outlines-core's own bytes for the Index: what it gives pickle, `(from_binary, (bytes,))`."""
    _, (payload,) = index.__reduce__()
    return payload


def prune(folder: Path, kept_files: int = KEPT_FILES, kept_bytes: int = KEPT_BYTES) -> None:
    """Delete the least recently used Index files past `kept_files` or `kept_bytes`, and
    partial files that a process which died while writing left behind."""
    found: list[tuple[float, int, str]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        with contextlib.suppress(OSError):
            stat = entry.stat()
            if entry.name.endswith(_SUFFIX):
                found.append((stat.st_mtime, stat.st_size, entry.path))
            elif entry.name.endswith(".partial") and time.time() - stat.st_mtime > _STALE_S:
                os.unlink(entry.path)  # its writer died: a write takes seconds
    found.sort(reverse=True)  # newest first: they are kept
    total = 0
    for number, (_, size, path) in enumerate(found):
        total += size
        if number >= kept_files or total > kept_bytes:
            with contextlib.suppress(OSError):
                os.unlink(path)
