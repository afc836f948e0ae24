"""Why the grammar forbids a masked candidate, in plain language, from a saved step alone.

No model and no grammar engine are needed: the output before the step says where the JSON
stands (engine.explain.json_position), the schema says what may go there
(engine.explain.schema_at), the step's own valid candidates say how the output may
continue, and the masked token's text, read on from that point, shows the first character
that breaks JSON or the schema. The grammar itself is the judge: where the reason lies in
a rule this explanation does not model (a pattern, a format, the whitespace limit), it
says so rather than invent one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.explain.json_position import (
    WHITESPACE,
    JsonPosition,
    JsonScanner,
    Where,
    path_text,
    scan,
)
from engine.explain.key_order import key_order_reason
from engine.explain.schema_at import (
    describe,
    dump,
    listed,
    load_schema,
    object_keys,
    required_keys,
    schema_at,
)
from engine.explain.violations import syntax_reason, violation
from engine.model.tokens import readable_piece
from engine.records import Candidate, StepRecord

_CHAR_NAMES = {" ": "a space", "\n": "a newline", "\t": "a tab", "\r": "a carriage return"}


@dataclass(frozen=True, slots=True)
class Forbidden:
    """The explanation in parts, so that a view can lay them out; text() joins them."""

    token: str  # the masked token's display form
    where: str  # where the output stands before this step
    schema_says: str  # what the schema allows there; "" when there is no schema to read
    continues_with: str  # the characters the valid tokens start with
    reason: str  # why this token's text does not fit

    def text(self) -> str:
        return " ".join(
            p for p in (self.where, self.schema_says, self.continues_with, self.reason) if p
        )


def output_before(records: Sequence[StepRecord], index: int) -> str:
    """The output text before step `index`: every earlier token's exact piece."""
    return "".join(r.token_piece for r in records[:index])


def why_forbidden(
    record: StepRecord, candidate: Candidate, before: str, schema: object | None = None
) -> str:
    """Why `candidate` was masked at `record`'s step, given the output `before` it and the
    run's schema (parsed, or its text)."""
    return explain_forbidden(record, candidate, before, schema).text()


def explain_forbidden(
    record: StepRecord, candidate: Candidate, before: str, schema: object | None = None
) -> Forbidden:
    root = load_schema(schema)
    scanner = scan(before)
    position = scanner.position()
    return Forbidden(
        token=candidate.text,
        where=where_sentence(position),
        schema_says=schema_sentence(position, root) if root is not None else "",
        continues_with=continues_sentence(record),
        reason=reason_sentence(scanner, piece_of(candidate), root, allowed(record)),
    )


def piece_of(candidate: Candidate) -> str:
    """The exact text a token adds; runs saved without pieces give their display form back."""
    if candidate.piece is not None:
        return candidate.piece
    return candidate.text.replace("␣", " ").replace("\\n", "\n").replace("\\t", "\t")


def where_sentence(p: JsonPosition) -> str:
    at = p.path_text
    so_far = f", which so far reads {dump(p.partial)}" if p.partial else ", just opened"
    return {
        Where.VALUE: f"The output is about to start the value at {at}."
        if p.path or p.frame
        else "The output has not started its JSON value yet.",
        Where.STRING: f"The output is inside the string at {at}{so_far}.",
        Where.NUMBER: f"The output is in the middle of the number at {at} (so far {p.partial}).",
        Where.LITERAL: f"The output is in the middle of {p.partial}… at {at}.",
        Where.KEY: f"The output is about to write a key of the object at {at}.",
        Where.KEY_STRING: f"The output is inside a key of the object at {at}{so_far}.",
        Where.COLON: f"The output has written a key of the object at {at}; a : comes next.",
        Where.AFTER: f"The output has just finished the value at {at}.",
        Where.DONE: "The output's JSON value is complete.",
        Where.BROKEN: "The output so far is not JSON this explanation can follow.",
    }[p.where]


def schema_sentence(p: JsonPosition, root: Any) -> str:
    if p.where in (Where.DONE, Where.BROKEN):
        return ""
    if p.where in (Where.KEY, Where.KEY_STRING, Where.COLON, Where.AFTER):
        return _container_sentence(p, root)
    node = schema_at(root, p.path)
    return "" if node is None else f"The schema says {p.path_text} is {describe(node, root)}."


def _container_sentence(p: JsonPosition, root: Any) -> str:
    if p.frame is None:
        return ""
    container = p.path if p.where is not Where.AFTER else p.path[:-1]
    node = schema_at(root, container)
    if node is None:
        return ""
    at = path_text(container)
    if p.frame.kind == "array":
        return f"The schema says {at} is {describe(node, root)}."
    names, closed = object_keys(node, root, p.frame.keys)
    missing = [k for k in required_keys(node, root, p.frame.keys) if k not in p.frame.keys]
    optional = [n for n in names if n not in p.frame.keys and n not in missing]
    if not missing and not optional:
        return f"The object at {at} takes no more keys." if closed else ""
    parts = [f"still needs {_quoted(missing, 'and')}"] if missing else []
    if optional:
        parts.append(f"may {'also ' if missing else ''}take {_quoted(optional, 'or')}")
    others = ", and takes no other keys" if closed else ""
    return f"The object at {at} {', and '.join(parts)}{others}."


def _quoted(names: list[str], last: str) -> str:
    return listed([dump(n) for n in names], last)


def continues_sentence(record: StepRecord) -> str:
    """What the valid tokens the step lists start with, likeliest first."""
    valid = {c.id: c for c in (*record.top_masked, *record.top_raw) if c.valid}
    ranked = sorted(valid.values(), key=lambda c: -c.p_raw)
    starts: list[str] = []
    for c in ranked:
        piece = piece_of(c)
        shown = char_name(piece[0]) if piece else "the end of the output"
        if shown not in starts:
            starts.append(shown)
    if not starts:
        return "The grammar allowed no token here."
    count = f"{record.n_valid:,} valid token{'s' if record.n_valid != 1 else ''}"
    if not record.n_valid_exact:
        count = f"at least {count}"
    if record.n_valid_exact and len(valid) >= record.n_valid:
        return f"The grammar lets the output continue only with {listed(starts, 'or')} ({count})."
    return (
        f"The grammar lets the output continue with {count}; the likeliest start with "
        f"{listed(starts, 'or')}."
    )


def char_name(c: str) -> str:
    return _CHAR_NAMES.get(c, c if c.isprintable() else f"U+{ord(c):04X}")


@dataclass(frozen=True, slots=True)
class Allowed:
    """The step's listed valid tokens' texts, and whether they are all of the valid set."""

    pieces: tuple[str, ...]
    complete: bool

    @property
    def starts(self) -> set[str]:
        return {p[:1] for p in self.pieces}


def allowed(record: StepRecord) -> Allowed:
    valid = {c.id: piece_of(c) for c in (*record.top_masked, *record.top_raw) if c.valid}
    complete = record.n_valid_exact and len(valid) >= record.n_valid
    return Allowed(tuple(valid.values()), complete)


def shown(text: str) -> str:
    """A token's text as the views show it, in backticks: `␣"`, `\\n`."""
    return f"`{readable_piece(text.encode('utf-8'))}`"


def reason_sentence(scanner: JsonScanner, piece: str, root: Any, valid: Allowed) -> str:
    """The first character of `piece` that cannot come where the output stands, and why."""
    token = shown(piece)
    if not piece:
        return f"{token} would end the output here, before the JSON is complete."
    state = scanner.copy()
    for i, c in enumerate(piece):
        prev = state.copy()
        if i == 0:
            lead = f"{token} starts with {char_name(c)}"
        else:
            lead = f"{token} fits as far as {shown(piece[:i])}, then comes {char_name(c)}"
        if i == 0 and c in WHITESPACE and not valid.starts & WHITESPACE and prev.between_tokens:
            return f"{lead}, and the grammar allows no whitespace here."
        if not state.step(c):
            return f"{lead}: {syntax_reason(prev, c)}."
        if root is not None and (why := violation(prev, state, c, root)):
            return f"{lead}: {why}."
    return _beyond_the_schema(scanner, piece, root, valid)


def _beyond_the_schema(scanner: JsonScanner, piece: str, root: Any, valid: Allowed) -> str:
    """The token's text is JSON that fits the schema as far as read here: the reason lies in
    how the grammar holds it (key order, whitespace, a pattern or format character by
    character), which the valid tokens show."""
    token = shown(piece)
    if root is not None and (why := key_order_reason(scanner, piece, root, valid.pieces)):
        return f"{token} would write another key: {why}."
    if any(c in WHITESPACE for c in piece) and scanner.between_tokens:
        return (
            f"{token} holds more whitespace than the grammar allows: it keeps the layout "
            "between JSON tokens short, so that a model cannot spend a run on it."
        )
    rule = _rule(scanner, root)
    if piece[0] not in valid.starts:
        lead = f"{token} starts with {char_name(piece[0])}"
        if valid.complete:
            return f"{lead}, which the grammar does not allow here{rule}."
        return f"{lead}, and none of the likeliest valid tokens starts so{rule}."
    longer = next((v for v in valid.pieces if v.startswith(piece)), None)
    if longer is not None:
        # Its text fits; only the token does not. Where the text ahead is forced, llguidance
        # allows only the longest token that writes it (guidance-ai/llguidance#263).
        return (
            f"{token} is the start of the valid {shown(longer)}: where the text ahead is "
            "forced, the backend allows only the longest token that writes it (llguidance "
            f"does), so the shorter {token} is refused although its text fits."
        )
    fit = max((_common(piece, v) for v in valid.pieces), key=len, default="")
    return (
        f"{token} fits as far as {shown(fit)}, as a valid token does, but the grammar forbids "
        f"what follows{rule}."
    )


def _common(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _rule(scanner: JsonScanner, root: Any) -> str:
    """`: $.start must be a string in date-time format`, when the schema says."""
    p = scanner.settled().position()
    if root is None or p.where in (Where.DONE, Where.BROKEN):
        return ""
    node = schema_at(root, p.path)
    return f": {p.path_text} must be {describe(node, root)}" if node is not None else ""
