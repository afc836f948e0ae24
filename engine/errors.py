"""Errors the engine raises for bad input. Each carries a one-line, readable reason."""

from __future__ import annotations


class MaskscopeError(Exception):
    """Base for every error caused by the user's input rather than a bug."""

    kind = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SchemaSyntaxError(MaskscopeError):
    """The schema text is not valid JSON."""

    kind = "JSON syntax"

    def __init__(self, message: str, line: int, column: int, offset: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.reason = message
        self.line = line
        self.column = column
        self.offset = offset


class SchemaInvalidError(MaskscopeError):
    """The JSON parses but is not a valid JSON Schema for its draft."""

    kind = "invalid schema"

    def __init__(self, message: str, path: str = "$", line: int | None = None) -> None:
        where = f" at {path}" if path and path != "$" else ""
        super().__init__(f"{message}{where}")
        self.reason = message
        self.path = path
        self.line = line


class GrammarError(MaskscopeError):
    """The schema could not become a grammar, or llama.cpp rejected the grammar."""

    kind = "grammar"

    def __init__(self, message: str, detail: str = "") -> None:
        first = next((ln.strip() for ln in detail.splitlines() if ln.strip()), "")
        super().__init__(f"{message}: {first}" if first and first not in message else message)
        self.detail = detail  # the library's own words (llama.cpp's stderr, llguidance's error)


class ModelLoadError(MaskscopeError):
    """The GGUF file is missing, unreadable, truncated or not a GGUF."""

    kind = "model"


class PromptError(MaskscopeError):
    """The prompt does not fit the model's context."""

    kind = "prompt"


class SuiteError(MaskscopeError):
    """A suite file (or its cases file) is missing, malformed or inconsistent."""

    kind = "suite"

    def __init__(self, message: str, file: str = "", where: str = "") -> None:
        place = ", ".join(part for part in (file, where) if part)
        super().__init__(f"{place}: {message}" if place else message)
        self.reason = message
        self.file = file
        self.where = where  # a JSON path ($.cases[2].vars) or a line ("line 4")


class PatternTimeoutError(MaskscopeError):
    """A `pattern` only a backtracking matcher can run took too long on one string."""

    kind = "pattern"
