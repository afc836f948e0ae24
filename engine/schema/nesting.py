"""How deep a JSON text nests, measured before anything parses or walks it, and how large a
file Maskscope reads at all.

Python's json parser and every walker over a schema (meta-validation, the compilers, the
lints) recurse once or more per level, so a file nested a few hundred levels deep ended in
RecursionError and a traceback. The depth is counted here without recursion, on the text, so
that such a file is bad input with its place named, whichever reader meets it first.

A file past MAX_FILE_BYTES is refused before it is read: a multi-gigabyte file given by
mistake (a model, a disk image) was read whole into memory, then decoded, then parsed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from engine.errors import MaskscopeError
from engine.files import not_utf8

# The largest file Maskscope makes is a saved run at the settings' limits: 8192 steps with
# the top 50 candidates before and after the mask, about 20 KB a step indented, 160 MiB. The
# files the tests make are far smaller (a saved run of the currency suite: 37 KB; the
# biggest MaskBench schema: 89 KB), and so is any schema, suite, cases file or result a person
# writes. Twice the largest saved run still refuses a model or a disk image given by mistake.
MAX_FILE_BYTES = 320 << 20

# The deepest file in the MaskBench dev set nests 20 levels and the JSON Schema Test Suite
# less; a schema of 128 (64 levels of `properties`) still leaves every recursive walker well
# inside Python's default limit of 1000 frames, in the worker threads and processes too.
MAX_DEPTH = 64

# A string (skipped whole: brackets inside it do not count) or one bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class TooDeepError(MaskscopeError):
    """The JSON text nests deeper than MAX_DEPTH."""

    kind = "too deep"

    def __init__(self, line: int, column: int, offset: int, limit: int, file: str = "") -> None:
        reason = f"the JSON nests deeper than {limit} levels, the most Maskscope reads"
        place = f"line {line}, column {column}"
        super().__init__(f"{file}, {place}: {reason}" if file else f"{place}: {reason}")
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
        self.file = file


def too_deep(text: str, limit: int = MAX_DEPTH, file: str = "") -> TooDeepError | None:
    """The error for the first bracket that opens level `limit + 1`, or None."""
    if text.count("{") + text.count("[") <= limit:
        return None  # an upper bound on the depth (brackets in strings count too): most files
    depth = 0
    for match in _TOKEN.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return _at(text, match.start(), limit, file)
        elif bracket in "]}":
            depth -= 1
    return None


def check_depth(text: str, file: str = "", limit: int = MAX_DEPTH) -> None:
    """Raise TooDeepError where the text nests deeper than `limit`; `file` names it."""
    error = too_deep(text, limit, file)
    if error is not None:
        raise error


def check_line_depth(line: str, file: str, number: int, limit: int = MAX_DEPTH) -> None:
    """check_depth for one line of a JSON-lines file: the place is the file's line `number`."""
    error = too_deep(line, limit)
    if error is not None:
        raise TooDeepError(number, error.column, error.offset, limit, file)


def _at(text: str, offset: int, limit: int, file: str) -> TooDeepError:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return TooDeepError(line, column, offset, limit, file)


class TooLargeError(MaskscopeError):
    """The file is larger than MAX_FILE_BYTES."""

    kind = "too large"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def read_limited(path: str | Path, what: str = "", limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of `path` (without a byte-order mark), refused with one line naming the
    file when it is missing, unreadable, larger than `limit` or not UTF-8; `what` names the
    kind of file ("result file not found: r.json")."""
    named = f"{what} file " if what else ""
    try:
        with Path(path).expanduser().open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            # Read one byte past the limit: a pipe or a device states no size.
            data = b"" if size > limit else f.read(limit + 1)
    except FileNotFoundError:
        raise MaskscopeError(f"{named or 'file '}not found: {path}") from None
    except OSError as exc:
        raise MaskscopeError(f"cannot read {named}{path}: {exc.strerror or exc}") from None
    if size > limit or len(data) > limit:
        raise _too_large(path, named, _mib(size) if size > limit else f"over {_mib(limit)}", limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MaskscopeError(f"cannot read {named}{path}: {not_utf8(exc)}") from None


def _too_large(path: str | Path, named: str, how: str, limit: int) -> TooLargeError:
    return TooLargeError(f"{path}: the {named or 'file '}is {how}, more than the {_mib(limit)} "
                         "Maskscope reads")  # fmt: skip


def check_size(path: str | Path, what: str = "", limit: int = MAX_FILE_BYTES) -> None:
    """TooLargeError for a file past `limit`, before a reader that takes a path reads it
    whole; a missing file is left to that reader to name."""
    try:
        size = Path(path).expanduser().stat().st_size
    except OSError:
        return
    if size > limit:
        raise _too_large(path, f"{what} file " if what else "", _mib(size), limit)


def load_file(path: str | Path, what: str = "") -> Any:
    """The JSON value in the file at `path`, read by read_limited and loads."""
    return loads(read_limited(path, what), str(path))


def loads(text: str, file: str) -> Any:
    """json.loads for the text of `file`: too deep a nesting or a syntax error is one
    MaskscopeError naming the file, line and column."""
    check_depth(text, file)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        reason = exc.msg.removesuffix(" at")
        where = f"line {exc.lineno}, column {exc.colno}"
        raise MaskscopeError(f"{file}: not JSON ({reason}, {where})") from None
