"""Objects: declared properties in order, each optional one may be absent, then the rest.

Key order is the grammar's: the merged node's `properties` in document order (own first,
then those its allOf and $ref bring), then required names it does not declare, then any
additional or pattern properties. `arrange` writes instances in the same order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import PatternTimeoutError
from engine.grammar.compilers.maskscope.arrays import repeat
from engine.grammar.compilers.maskscope.keys import KeysTooLarge, key_classes
from engine.grammar.compilers.maskscope.normalize import (
    ASSERTIONS,
    Context,
    Unsatisfiable,
    as_count,
    flatten,
    merge,
)
from engine.grammar.compilers.maskscope.resolve import Part
from engine.grammar.compilers.maskscope.rules import alternatives, literal
from engine.grammar.compilers.maskscope.strings import regex_rule, string_rule
from engine.grammar.compilers.maskscope.values import json_text, string_except
from engine.schema import patterns
from engine.schema.pointer import child_path

if TYPE_CHECKING:
    from engine.grammar.compilers.maskscope.compiler import GrammarWriter

OBJECT_KEYWORDS = (
    "properties", "required", "additionalProperties", "patternProperties", "propertyNames",
    "minProperties", "maxProperties",
)  # fmt: skip
# Past this many (property, count) states, minProperties/maxProperties are not counted.
_MAX_STATES = 2000


@dataclass
class Owner:
    """The object keywords of one part."""

    part: Part
    properties: dict[str, Any]
    patterns: list[tuple[str, Part]]
    additional: Part | None


@dataclass
class Shape:
    """What the merged object keywords of a conjunction say."""

    owners: list[Owner]
    names: list[str]  # the key order: declared, then required but undeclared
    required: set[str]
    names_allowed: list[Part]  # propertyNames
    min_props: int = 0
    max_props: int | None = None
    finite_names: list[str] | None = field(default=None)  # propertyNames' enum

    def parts_for(self, ctx: Context, name: str) -> list[Part]:
        """Every subschema the value of key `name` must satisfy."""
        out: list[Part] = []
        for owner in self.owners:
            if name in owner.properties:
                at = child_path(child_path(owner.part.path, "properties"), name)
                out.append(Part(owner.properties[name], at, owner.part.base))
            matched = [p for regex, p in owner.patterns if _search(regex, name) is not False]
            out += matched
            if name not in owner.properties and not matched and owner.additional is not None:
                out.append(owner.additional)
        if not all(ctx.valid(p.schema, name) for p in self.names_allowed):
            out.append(Part(False, self.names_allowed[0].path, self.names_allowed[0].base))
        return out


def shape_of(ctx: Context, flat: list[Part]) -> Shape:
    owners, names, required, allowed = [], [], set(), []
    lows, highs = [0], []
    for part in flat:
        schema, path, base = part.schema, part.path, part.base
        if not isinstance(schema, dict):
            continue
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        pats = schema.get("patternProperties")
        patterns = [
            (regex, Part(sub, child_path(child_path(path, "patternProperties"), regex), base))
            for regex, sub in (pats.items() if isinstance(pats, dict) else ())
        ]
        extra = schema.get("additionalProperties")
        additional = (
            None if extra is None else Part(extra, child_path(path, "additionalProperties"), base)
        )
        owners.append(Owner(part, props, patterns, additional))
        names += [n for n in props if n not in names]
        if isinstance(schema.get("required"), list):
            required.update(n for n in schema["required"] if isinstance(n, str))
        if "propertyNames" in schema:
            allowed.append(Part(schema["propertyNames"], child_path(path, "propertyNames"), base))
        lows += [n for n in [as_count(schema.get("minProperties"))] if n is not None]
        highs += [n for n in [as_count(schema.get("maxProperties"))] if n is not None]
    for owner in owners:
        listed = owner.part.schema.get("required")
        names += [
            n
            for n in (listed if isinstance(listed, list) else [])
            if isinstance(n, str) and n not in names
        ]
    shape = Shape(owners, names, required, allowed, max(lows), min(highs) if highs else None)
    shape.finite_names = _finite_names(ctx, allowed)
    return shape


def object_rule(comp: GrammarWriter, flat: list[Part], path: str) -> str:
    ctx = comp.ctx
    if not any(k in p.schema for p in flat for k in OBJECT_KEYWORDS):
        return "json-object"
    shape = shape_of(ctx, flat)
    if shape.max_props is not None and shape.min_props > shape.max_props:
        raise Unsatisfiable(
            path, f"minProperties {shape.min_props} is above maxProperties {shape.max_props}"
        )
    entries, declared = [], {}
    for name in shape.names:
        try:
            value = comp.compile(shape.parts_for(ctx, name))
        except Unsatisfiable as exc:
            if name in shape.required:
                raise Unsatisfiable(exc.path, f"required property {name!r}: {exc.reason}") from None
            continue
        entries.append(
            (name, _member(comp, literal(json_text(name)), value), name in shape.required)
        )
        declared[name] = value
    extra = _extra_members(comp, shape, declared, path)
    body = _sequence(comp, shape, entries, extra, path)
    return comp.rules.add("object", f'"{{" ws {body} "}}"')


def _member(comp: GrammarWriter, key: str, value: str) -> str:
    return comp.rules.add("kv", f'{key} ws ":" ws {value} ws')


def _extra_members(
    comp: GrammarWriter, shape: Shape, declared: dict[str, str], path: str
) -> str | None:
    """One additional key and its value, as any of the ways it may be written; None: none."""
    ctx = comp.ctx
    if shape.finite_names is not None:
        options = []
        for name in shape.finite_names:
            if name in shape.names:
                continue
            try:
                options.append(
                    _member(
                        comp, literal(json_text(name)), comp.compile(shape.parts_for(ctx, name))
                    )
                )
            except Unsatisfiable:
                continue
        return alternatives(options) if options else None
    names_pattern = _names_pattern(ctx, shape)
    classifiable = not shape.names_allowed or names_pattern is not None
    if classifiable and (names_pattern or any(o.patterns for o in shape.owners)):
        exact = _classified_members(comp, shape, names_pattern)
        if exact is not None:
            return exact or None
    options, covered, opaque = _pattern_members(comp, shape, declared, path)
    if ("all", "") in covered:  # every key matches a pattern: none is additional
        return alternatives(options) if options else None
    other = [o.additional for o in shape.owners if o.additional is not None]
    try:
        value = comp.compile(other)
    except Unsatisfiable:
        return alternatives(options) if options else None
    if any(value != v for v in opaque) or (shape.names_allowed and covered):
        ctx.report(
            path,
            "patternProperties",
            "a key matching a pattern may also take the additionalProperties value",
        )
    key = _names_key(comp, shape, declared, value, path, covered)
    options.append(_member(comp, key, value))
    return alternatives(options)


def _names_pattern(ctx: Context, shape: Shape) -> str | None:
    """propertyNames' pattern, when that is all propertyNames asks of a key."""
    if not shape.names_allowed:
        return None
    flat, choices = flatten(ctx.quiet(), shape.names_allowed, set())
    try:
        merged = merge(ctx.quiet(), flat)
    except Unsatisfiable:
        return None
    keywords = {k for p in flat if isinstance(p.schema, dict) for k in p.schema if k in ASSERTIONS}
    if choices or merged.values is not None or keywords - {"pattern", "type"}:
        return None
    if "string" not in merged.types or list(merged.string) != ["pattern"]:
        return None
    return merged.string["pattern"]


def _classified_members(comp: GrammarWriter, shape: Shape, names_pattern: str | None) -> str | None:
    """Additional members by the exact set of patterns their key matches (keys.py); ""
    when no additional key is allowed, None when the patterns are beyond the automaton.
    With propertyNames' pattern, only keys matching it too."""
    patterns = [(regex, part, o) for o in shape.owners for regex, part in o.patterns]
    regexes = [regex for regex, _, _ in patterns] + ([names_pattern] if names_pattern else [])
    keys = _class_keys(comp, regexes, shape.names)
    if keys is None:
        return None
    options = []
    for signature, key in keys.items():
        if names_pattern is not None:
            if len(patterns) not in signature:
                continue
            signature = signature - {len(patterns)}
        owners = {id(patterns[i][2]) for i in signature}
        parts = [patterns[i][1] for i in sorted(signature)]
        parts += [o.additional for o in shape.owners if o.additional and id(o) not in owners]
        try:
            options.append(_member(comp, key, comp.compile(parts)))
        except Unsatisfiable:
            continue
    return alternatives(options) if options else ""


def _class_keys(
    comp: GrammarWriter, patterns: list[str], names: list[str]
) -> dict[frozenset[int], str] | None:
    """Each key class's key rule, once per set of patterns and names in a compilation
    (objects of one schema share them, and a failed automaton is costly to retry)."""
    memo_key = ("key classes", tuple(patterns), tuple(names))
    if memo_key not in comp.memo:
        classes = key_classes(patterns, names)
        found: dict[frozenset[int], str] | None = {}
        try:
            for signature in classes.signatures if classes else ():
                key = classes.key_rule(comp.rules, signature)  # type: ignore[union-attr]
                if key is not None:
                    found[signature] = key  # type: ignore[index]
        except KeysTooLarge:
            found = None
        comp.memo[memo_key] = None if classes is None else found
    return comp.memo[memo_key]


def _pattern_members(
    comp: GrammarWriter, shape: Shape, declared: dict[str, str], path: str
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """Members for the keys patternProperties allow; with the patterns a key trie can
    exclude from other keys (covered) and the values of those it cannot (opaque)."""
    ctx = comp.ctx
    options: list[str] = []
    covered: list[tuple[str, str]] = []
    opaque: list[str] = []
    with_patterns = [o for o in shape.owners if o.patterns]
    for owner in with_patterns:
        if not _apart([regex for regex, _ in owner.patterns]):
            ctx.report(
                owner.part.path,
                "patternProperties",
                "a key matching several patterns is checked against one",
            )
        others = [
            o.additional for o in shape.owners if o is not owner and not o.patterns and o.additional
        ]
        if len(with_patterns) > 1:
            ctx.report(
                owner.part.path,
                "patternProperties",
                "patterns of several allOf parts are not combined",
            )
        for regex, part in owner.patterns:
            simple = simple_pattern(regex)
            try:
                value = comp.compile([part, *others])
            except Unsatisfiable:
                value = None
            if simple is not None:
                covered.append(simple)
                key = _simple_key(comp, shape, simple)
            else:
                opaque.append(value or "")
                key = _regex_key(comp, regex, part, declared, value)
            if value is not None and key is not None:
                if shape.names_allowed:
                    ctx.report(part.path, "propertyNames", "not checked on pattern keys")
                options.append(_member(comp, key, value))
    return options, covered, opaque


def _simple_key(comp: GrammarWriter, shape: Shape, simple: tuple[str, str]) -> str | None:
    """Keys a simple pattern matches, but not the declared names (their place is earlier)."""
    kind, text = simple
    if kind == "exact":
        return None if text in shape.names else literal(json_text(text))
    tails = [n[len(text) :] for n in shape.names if n.startswith(text)]
    return string_except(comp.rules, tails, lead=text)


def _regex_key(
    comp: GrammarWriter, regex: str, part: Part, declared: dict[str, str], value: str | None
) -> str:
    ctx = comp.ctx
    text = regex_rule(comp.rules, regex, part.path, ctx.gaps)
    if text is None:
        ctx.report(
            part.path,
            "patternProperties",
            f"the key pattern {regex!r} cannot be translated: any key",
        )
        text = "json-char*"
    clash = [n for n in declared if _search(regex, n) is not False and declared[n] != value]
    if clash:
        ctx.report(
            part.path,
            "patternProperties",
            f"declared property {clash[0]!r} may also be written as a pattern key",
        )
    return comp.rules.add("key", f'"\\"" {text} "\\""')  # one lexeme, quotes included


def _names_key(
    comp: GrammarWriter,
    shape: Shape,
    declared: dict[str, str],
    value: str,
    path: str,
    covered: list[tuple[str, str]],
) -> str:
    """Keys other than the declared names (and than simple patterns' keys); within
    propertyNames when it has one."""
    ctx = comp.ctx
    if not shape.names_allowed:
        names = shape.names + [t for kind, t in covered if kind == "exact"]
        prefixes = [t for kind, t in covered if kind == "prefix"]
        return string_except(comp.rules, names, prefixes)
    flat, choices = flatten(ctx.quiet(), shape.names_allowed, set())
    merged = merge(ctx, flat)
    if choices:
        ctx.report(
            shape.names_allowed[0].path, "propertyNames", "only its string keywords are enforced"
        )
    clash = [n for n in declared if ctx.valid_all(shape.names_allowed, n) and declared[n] != value]
    if clash:
        ctx.report(
            path,
            "additionalProperties",
            f"declared property {clash[0]!r} may also be written as an additional key",
        )
    path = shape.names_allowed[0].path
    return string_rule(comp.rules, merged.string, path, ctx.gaps, formats=comp.formats)


_UNIVERSAL = frozenset({"", ".*", "^.*", ".*$", "^.*$", "(.*)", "^(.*)$", "^(.*)"})
_META = frozenset(".^$*+?()[]{}|\\/")


def simple_pattern(regex: str) -> tuple[str, str] | None:
    """("all", ""), ("prefix", text) for `^text`, ("exact", text) for `^text$`: the
    patterns whose keys a trie can exclude; None for the others."""
    if regex in _UNIVERSAL:
        return ("all", "")
    if not regex.startswith("^"):
        return None
    body, kind = regex[1:], "prefix"
    if body.endswith("$") and not body.endswith("\\$"):
        body, kind = body[:-1], "exact"
    elif body.endswith(".*") and not body.endswith("\\.*"):
        body = body[:-2]
    text = _literal_text(body)
    return None if text is None else (kind, text)


def _literal_text(body: str) -> str | None:
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            if i + 1 >= len(body) or body[i + 1].isalnum():
                return None  # \d, \w, \b ... are classes, not characters
            out.append(body[i + 1])
            i += 2
            continue
        if ch in _META:
            return None
        out.append(ch)
        i += 1
    return "".join(out)


def _apart(regexes: list[str]) -> bool:
    """Whether no key can match two of the patterns (told only for simple ones)."""
    simple = [simple_pattern(r) for r in regexes]
    if len(regexes) < 2:
        return True
    if any(s is None or s[0] == "all" for s in simple):
        return False
    return all(_disjoint(a, b) for i, a in enumerate(simple) for b in simple[i + 1 :])  # type: ignore[arg-type]


def _disjoint(a: tuple[str, str], b: tuple[str, str]) -> bool:
    if a[0] == b[0] == "exact":
        return a[1] != b[1]
    if a[0] == "exact":
        return not a[1].startswith(b[1])
    if b[0] == "exact":
        return not b[1].startswith(a[1])
    return not (a[1].startswith(b[1]) or b[1].startswith(a[1]))


def _sequence(
    comp: GrammarWriter,
    shape: Shape,
    entries: list[tuple[str, str, bool]],
    extra: str | None,
    path: str,
) -> str:
    """Members in order, each optional one skippable, with the count within bounds."""
    low, high = shape.min_props, shape.max_props
    cap = max(1, high if high is not None else low)
    if len(entries) * (cap + 1) > _MAX_STATES or cap > 1000:
        comp.ctx.report(
            path,
            "maxProperties" if high is not None else "minProperties",
            "too many properties to count",
        )
        low, high, cap = 0, None, 1
    memo: dict[tuple[int, int], str | None] = {}

    def state(i: int, count: int) -> str | None:
        if (i, count) in memo:
            return memo[(i, count)]
        options = []
        if i == len(entries):
            options = [_tail(comp, extra, count, low, high)]
        else:
            _, member, required = entries[i]
            nxt = min(count + 1, cap) if high is None else count + 1
            if high is None or count + 1 <= high:
                after = state(i + 1, nxt)
                if after is not None:
                    options.append(
                        f"{'' if count == 0 else chr(34) + ',' + chr(34) + ' ws '}{member} {after}"
                    )
            if not required:
                options.append(state(i + 1, count))
        found = [o for o in options if o is not None]
        memo[(i, count)] = comp.rules.add("props", alternatives(found)) if found else None
        return memo[(i, count)]

    start = state(0, 0)
    if start is None:
        raise Unsatisfiable(path, "its required properties and property counts cannot all hold")
    return start


def _tail(
    comp: GrammarWriter, extra: str | None, count: int, low: int, high: int | None
) -> str | None:
    lo = max(0, low - count)
    hi = None if high is None else high - count
    if extra is None or hi == 0:
        return '""' if lo == 0 else None
    if count > 0:
        return repeat(f'"," ws {extra}', lo, hi)
    more = repeat(f'"," ws {extra}', max(0, lo - 1), None if hi is None else hi - 1)
    return f"( {extra} {more} )" + ("" if lo > 0 else "?")


def _finite_names(ctx: Context, allowed: list[Part]) -> list[str] | None:
    if not allowed:
        return None
    try:
        flat, _ = flatten(ctx.quiet(), allowed, set())
        merged = merge(ctx.quiet(), flat)
    except Unsatisfiable:
        return []
    if merged.values is None:
        return None
    return [v for v in merged.values if isinstance(v, str) and ctx.valid_all(allowed, v)]


def _search(regex: str, name: str) -> bool | None:
    """Whether the pattern finds a match in `name`; None when Python cannot read it, or
    cannot tell in time."""
    try:
        return patterns.search(regex, name)  # bounded: `^(a+)+$` against "aaa…!" hung
    except (re.error, PatternTimeoutError):
        return None
