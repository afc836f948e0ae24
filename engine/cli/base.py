"""What every subcommand shares: exit codes and reading the user's files."""

from __future__ import annotations

from pathlib import Path

from engine.errors import MaskscopeError

EXIT_VALID, EXIT_INVALID, EXIT_BAD_INPUT, EXIT_BROKEN_BUILD = 0, 1, 2, 3


def read_text(path: str, what: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MaskscopeError(f"{what} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MaskscopeError(f"cannot read {what} file {path}: {exc}") from None
