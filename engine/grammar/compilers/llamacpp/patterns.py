"""Which `pattern`s llama.cpp's C++ converter cannot turn into a grammar, and why.

A mirror of `_pattern_to_rule` in common/json-schema-to-grammar.cpp (llama-cpp-python
0.3.36's sdist). It throws one of two errors as it scans the pattern:
- `unsupported_pattern`: a valid regex the grammar has no equivalent for (no `^`/`$`
  anchors, `(?=`, `\\d`, `\\w`, a stray `}`): the converter warns on stderr and lets any
  string through, so the `pattern` keyword goes unenforced;
- `invalid_pattern`: not a regex at all (unbalanced parentheses, `*` with nothing before
  it): the converter refuses the whole schema.

Only the scan's branches that throw are kept; tests/engine/test_llamacpp_converter.py holds
this mirror to the real converter's warnings on every pattern of the test corpora.
"""

from __future__ import annotations

_MAX_DEPTH = 100  # MAX_PATTERN_DEPTH
_NON_LITERAL = frozenset("|.()[]{}*+?^$")
_ESCAPED_IN_REGEXPS_BUT_NOT_IN_LITERALS = frozenset("^$.[](){}*+?|")
_HEX = frozenset("0123456789abcdefABCDEF")


class UnsupportedPattern(Exception):
    """A regex with no grammar: the converter lets any string through."""


class InvalidPattern(Exception):
    """Not a regex: the converter refuses the schema."""


def _escape_length(p: str, pos: int) -> int:
    """gbnf_escape_length: the length of an escape GBNF reads as is, or 0."""
    if pos + 1 >= len(p) or p[pos] != "\\":
        return 0
    n_hex = {"x": 2, "u": 4, "U": 8}.get(p[pos + 1])
    if n_hex is None:
        return 2 if p[pos + 1] in 'trn\\"[]-' else 0
    if pos + 2 + n_hex > len(p) or not all(h in _HEX for h in p[pos + 2 : pos + 2 + n_hex]):
        return 0
    return 2 + n_hex


def _stoi(text: str) -> int:
    """std::stoi: leading whitespace, a sign, then at least one digit; the rest ignored."""
    digits = text.lstrip(" \t\n\v\f\r")
    sign = digits[:1] if digits[:1] in ("+", "-") else ""
    body = digits[len(sign) :]
    n = len(body) - len(body.lstrip("0123456789"))
    if n == 0 or not (-(2**31) <= int(sign + body[:n]) < 2**31):
        raise ValueError(text)
    return int(sign + body[:n])


class _Scan:
    def __init__(self, sub: str) -> None:
        self.sub, self.i, self.depth = sub, 0, 0

    def transform(self) -> None:
        sub, n = self.sub, len(self.sub)
        seq = 0  # how many items this group holds so far
        while self.i < n:
            c = sub[self.i]
            if c == ".":
                self.i += 1
            elif c == "(":
                self.i += 1
                if self.i < n and sub[self.i] == "?":
                    if self.i + 1 < n and sub[self.i + 1] == ":":
                        self.i += 2
                    else:
                        raise UnsupportedPattern("unsupported group syntax")
                self.depth += 1
                if self.depth > _MAX_DEPTH:
                    raise UnsupportedPattern("pattern nesting too deep")
                self.transform()
            elif c == ")":
                self.i += 1
                if self.depth == 0:
                    raise InvalidPattern("unbalanced parentheses")
                self.depth -= 1
                return
            elif c in "^$":
                raise UnsupportedPattern("anchor inside the pattern")
            elif c == "[":
                self._character_class()
            elif c == "|":
                self.i += 1
            elif c in "*+?":
                if seq == 0:
                    raise InvalidPattern("nothing to repeat")
                self.i += 1
                continue  # applies to the last item: no new one
            elif c == "{":
                self._curly(seq)
                continue
            else:
                self._literal(c)
            seq += 1

    def _character_class(self) -> None:
        sub, n = self.sub, len(self.sub)
        self.i += 1
        while self.i < n and sub[self.i] != "]":
            if sub[self.i] == "\\":
                length = _escape_length(sub, self.i)
                if length == 0:
                    escape = sub[self.i : self.i + 2]
                    raise UnsupportedPattern(f"unsupported escape in character class: {escape}")
                self.i += length
            else:
                self.i += 1
        if self.i >= n:
            raise InvalidPattern("unterminated character class")
        self.i += 1

    def _curly(self, seq: int) -> None:
        sub, n = self.sub, len(self.sub)
        end = self.i + 1
        while end < n and sub[end] != "}":
            end += 1
        if end >= n:
            raise UnsupportedPattern("unterminated curly brackets")
        nums = sub[self.i + 1 : end].split(",")
        self.i = end + 1
        if len(nums) not in (1, 2):
            raise UnsupportedPattern("wrong number of values in curly brackets")
        try:
            for num in nums if len(nums) == 1 else [x for x in nums if x]:
                _stoi(num)
        except ValueError:
            raise UnsupportedPattern("invalid number in curly brackets") from None
        if seq == 0:
            raise InvalidPattern("nothing to repeat")

    def _literal(self, c: str) -> None:
        sub, n = self.sub, len(self.sub)
        literal = False
        while self.i < n:
            ch = sub[self.i]
            if ch == "\\":
                if self.i == n - 1:
                    raise InvalidPattern("trailing backslash")
                if sub[self.i + 1] in _ESCAPED_IN_REGEXPS_BUT_NOT_IN_LITERALS:
                    self.i += 2
                else:
                    length = _escape_length(sub, self.i)
                    if length == 0:
                        escape = sub[self.i : self.i + 2]
                        raise UnsupportedPattern(f"unsupported escape: {escape}")
                    self.i += length
            elif ch == '"' or (
                ch not in _NON_LITERAL
                and (
                    self.i == n - 1
                    or not literal
                    or sub[self.i + 1] == "."
                    or sub[self.i + 1] not in _NON_LITERAL
                )
            ):
                self.i += 1
            else:
                break
            literal = True
        if not literal:  # nothing was consumed, e.g. a stray ']' or '}'
            raise UnsupportedPattern(f"unsupported character: {c}")


def check_pattern(pattern: str) -> None:
    """Raise UnsupportedPattern or InvalidPattern as the converter would; None: it converts."""
    if len(pattern) < 2 or pattern[0] != "^" or pattern[-1] != "$":
        raise UnsupportedPattern("not anchored with '^' and '$'")
    scan = _Scan(pattern[1:-1])
    scan.transform()
    if scan.depth != 0:
        raise InvalidPattern("unbalanced parentheses")


def unsupported_reason(pattern: str) -> str | None:
    """Why the converter lets any string through for `pattern`, or None when it does not
    (it converts it, or refuses the schema over it)."""
    try:
        check_pattern(pattern)
    except UnsupportedPattern as exc:
        return str(exc)
    except InvalidPattern:
        return None
    return None


def lets_quote_through(pattern: str) -> bool:
    """Whether the converter's grammar for a (convertible) pattern lets a raw `"` into the
    string: it writes `.` as `[^\\x0A\\x0D]` and copies `[...]` classes and literals as they
    are, inside the string's quotes. Then the string can close early, or run on past its
    closing quote and swallow the JSON after it."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern[i + 1 : i + 2] == '"':
                return True
            i += 2
        elif c in '."':
            return True
        elif c == "[":
            end = pattern.find("]", i + 1)
            end = n if end < 0 else end
            if _class_has_quote(pattern[i + 1 : end]):
                return True
            i = end + 1
        else:
            i += 1
    return False


def _class_has_quote(body: str) -> bool:
    """A class body as the converter copies it: negated, or holding `"` alone or in a range."""
    if body.startswith("^") or '"' in body or "\\x22" in body.lower() or "\\u0022" in body:
        return True
    return any(
        body[k + 1] == "-" and body[k] != "\\" and body[k] <= '"' <= body[k + 2]
        for k in range(len(body) - 2)
    )
