"""Reading the user's files, with one-line reasons instead of tracebacks."""

from __future__ import annotations

from pathlib import Path

from engine.errors import MaskscopeError


def read_text(path: str, what: str = "") -> str:
    """UTF-8 text of `path`; `what` names the file in messages ("schema file not found")."""
    named = f"{what} file " if what else ""
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MaskscopeError(f"{named or 'file '}not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MaskscopeError(f"cannot read {named}{path}: {exc}") from None
