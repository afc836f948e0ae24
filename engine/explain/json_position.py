"""Where a partial JSON text stands: the path being written, and what may come next.

A saved run holds the output's text but no parser state, so "why is this token forbidden"
first needs to know where the output is: inside the string at `$.currency`, expecting a key
of the object at `$`, just after a value. `JsonScanner` reads any prefix character by
character (never raising) and stops, marked BROKEN, at the first character that cannot
continue JSON, so that callers can feed a token's text after it and see where it breaks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from enum import Enum

from engine.schema.pointer import path_text

WHITESPACE = frozenset(" \t\n\r")
LITERALS = ("true", "false", "null")
# Any prefix of a JSON number: optional sign, integer part, then a fraction or an exponent
# that may still be incomplete (`1.`, `1e`, `1e-`).
_NUMBER_PREFIX = re.compile(r"-?((0|[1-9]\d*)(\.\d*)?([eE][+-]?\d*)?)?")
_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_ESCAPES = frozenset('"\\/bfnrtu')


class Where(str, Enum):
    VALUE = "value"  # a value may start here
    STRING = "string"  # inside a string value
    NUMBER = "number"  # inside a number
    LITERAL = "literal"  # inside true, false or null
    KEY = "key"  # a key may start (or, in an empty object, the object end)
    KEY_STRING = "key_string"  # inside a key
    COLON = "colon"  # a key ended: its colon comes next
    AFTER = "after"  # a value ended: a comma or its container's end comes next
    DONE = "done"  # the whole value is complete
    BROKEN = "broken"  # the text is not a prefix of JSON


@dataclass(slots=True)
class Frame:
    kind: str  # "object" or "array"
    keys: list[str] = field(default_factory=list)  # an object's keys so far, in order
    index: int = 0  # an array's current element
    empty: bool = True  # nothing in it yet, so it may close at once

    def copy(self) -> Frame:
        return replace(self, keys=list(self.keys))


@dataclass(frozen=True, slots=True)
class JsonPosition:
    where: Where
    path: tuple[str | int, ...]  # of the value being written; of the object for key states
    partial: str  # a string's or key's text so far (unescaped), a number's or literal's
    frame: Frame | None  # the innermost object or array; None at the top level

    @property
    def path_text(self) -> str:
        return path_text(self.path)


class JsonScanner:
    """Feeds JSON text one character at a time; cheap to copy, so that a caller can try a
    token's text and keep the state before it."""

    def __init__(self) -> None:
        self.stack: list[Frame] = []
        self.where = Where.VALUE
        self.raw = ""  # the current string, key, number or literal as written
        self.escape = ""  # an escape under way in a string: "\\", "\\u", "\\u0"...

    def copy(self) -> JsonScanner:
        other = JsonScanner()
        other.stack = [f.copy() for f in self.stack]
        other.where, other.raw, other.escape = self.where, self.raw, self.escape
        return other

    @property
    def between_tokens(self) -> bool:
        """Whitespace here would be layout, not text: outside strings, literals and unfinished
        numbers."""
        w = self.settled().where
        return w not in (Where.STRING, Where.KEY_STRING, Where.LITERAL, Where.NUMBER)

    def settled(self) -> JsonScanner:
        """A copy with a complete number ended: where the next character stands once it
        cannot go on with the number."""
        other = self.copy()
        if other.where is Where.NUMBER and _NUMBER.fullmatch(other.raw):
            other._end_value()
        return other

    def feed(self, text: str) -> int | None:
        """Feed `text`; the index of the first character that breaks JSON, else None."""
        for i, c in enumerate(text):
            if not self.step(c):
                return i
        return None

    def step(self, c: str) -> bool:
        if self.where is Where.BROKEN:
            return False
        if not self._step(c):
            self.where = Where.BROKEN
            return False
        return True

    def position(self) -> JsonPosition:
        in_key = self.where in (Where.KEY, Where.KEY_STRING, Where.COLON)
        frames = self.stack[:-1] if in_key else self.stack
        path = tuple(_member(f) for f in frames)
        frame = self.stack[-1] if self.stack else None
        return JsonPosition(self.where, path, self._partial(), frame)

    def _partial(self) -> str:
        if self.where in (Where.STRING, Where.KEY_STRING):
            return unescape(self.raw)
        if self.where in (Where.NUMBER, Where.LITERAL):
            return self.raw
        return ""

    def _step(self, c: str) -> bool:
        w = self.where
        if w in (Where.STRING, Where.KEY_STRING):
            return self._in_string(c)
        if w is Where.NUMBER:
            if _NUMBER_PREFIX.fullmatch(self.raw + c):
                self.raw += c
                return True
            return self._end_value() and self._step(c) if _NUMBER.fullmatch(self.raw) else False
        if w is Where.LITERAL:
            return self._in_literal(c)
        if c in WHITESPACE:
            return w is not Where.BROKEN
        return {
            Where.VALUE: self._value,
            Where.KEY: self._key,
            Where.COLON: self._colon,
            Where.AFTER: self._after,
        }.get(w, lambda _: False)(c)

    def _value(self, c: str) -> bool:
        top = self.stack[-1] if self.stack else None
        if c in "{[":
            self.stack.append(Frame("object" if c == "{" else "array"))
            self.where = Where.KEY if c == "{" else Where.VALUE
        elif c == '"':
            self.where, self.raw = Where.STRING, ""
        elif c in "-0123456789":
            self.where, self.raw = Where.NUMBER, c
        elif c in "tfn":
            self.where, self.raw = Where.LITERAL, c
        elif c == "]" and top is not None and top.kind == "array" and top.empty:
            return self._close()
        else:
            return False
        return True

    def _key(self, c: str) -> bool:
        if c == '"':
            self.where, self.raw = Where.KEY_STRING, ""
            return True
        return c == "}" and self.stack[-1].empty and self._close()

    def _colon(self, c: str) -> bool:
        if c != ":":
            return False
        self.where = Where.VALUE
        return True

    def _after(self, c: str) -> bool:
        top = self.stack[-1]
        if c == ",":
            if top.kind == "object":
                self.where = Where.KEY
            else:
                top.index += 1
                self.where = Where.VALUE
            return True
        closes = "}" if top.kind == "object" else "]"
        return c == closes and self._close()

    def _in_string(self, c: str) -> bool:
        if ord(c) < 0x20:
            return False  # a raw control character: JSON wants it escaped
        if self.escape:
            return self._in_escape(c)
        if c == "\\":
            self.escape = "\\"
        elif c == '"':
            return self._end_string()
        self.raw += c
        return True

    def _in_escape(self, c: str) -> bool:
        if self.escape == "\\":
            if c not in _ESCAPES:
                return False
            self.escape = "\\u" if c == "u" else ""
        elif c in "0123456789abcdefABCDEF":
            self.escape = "" if len(self.escape) == 5 else self.escape + c
        else:
            return False
        self.raw += c
        return True

    def _end_string(self) -> bool:
        if self.where is Where.KEY_STRING:
            self.stack[-1].keys.append(unescape(self.raw))
            self.where = Where.COLON
            return True
        return self._end_value()

    def _in_literal(self, c: str) -> bool:
        text = self.raw + c
        if not any(lit.startswith(text) for lit in LITERALS):
            return False
        self.raw = text
        return self._end_value() if text in LITERALS else True

    def _close(self) -> bool:
        self.stack.pop()
        return self._end_value()

    def _end_value(self) -> bool:
        self.raw = ""
        if not self.stack:
            self.where = Where.DONE
        else:
            self.where = Where.AFTER
            self.stack[-1].empty = False
        return True


def _member(frame: Frame) -> str | int:
    return frame.index if frame.kind == "array" else (frame.keys[-1] if frame.keys else "")


def unescape(raw: str) -> str:
    """A string's text as written, unescaped; an escape still under way is left out."""
    for cut in range(len(raw), max(-1, len(raw) - 7), -1):
        try:
            return json.loads(f'"{raw[:cut]}"')
        except json.JSONDecodeError:
            continue
    return raw


def scan(text: str) -> JsonScanner:
    scanner = JsonScanner()
    scanner.feed(text)
    return scanner
