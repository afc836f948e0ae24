"""Reading the user's files, with one-line reasons instead of tracebacks."""

from __future__ import annotations

from pathlib import Path

from engine.errors import MaskscopeError


def read_text(path: str, what: str = "") -> str:
    """UTF-8 text of `path`, without the byte-order mark some editors put first; `what`
    names the file in messages ("schema file not found")."""
    named = f"{what} file " if what else ""
    try:
        return Path(path).expanduser().read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise MaskscopeError(f"{named or 'file '}not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise MaskscopeError(f"cannot read {named}{path}: {not_utf8(exc)}") from None
    except OSError as exc:
        raise MaskscopeError(f"cannot read {named}{path}: {exc.strerror or exc}") from None


def not_utf8(exc: UnicodeDecodeError) -> str:
    """Why bytes are not UTF-8 text, for a reader rather than a codec."""
    return f"it is not UTF-8 text (byte 0x{exc.object[exc.start]:02X} at offset {exc.start})"
