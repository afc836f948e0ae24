"""Arrays: prefix items, then the rest, within minItems/maxItems; contains; uniqueItems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.grammar.compilers.maskscope.normalize import (
    Context,
    Unsatisfiable,
    as_count,
    flatten,
    merge,
)
from engine.grammar.compilers.maskscope.resolve import Part
from engine.grammar.compilers.maskscope.rules import alternatives, literal
from engine.grammar.compilers.maskscope.values import json_text
from engine.schema.pointer import child_path

if TYPE_CHECKING:
    from engine.grammar.compilers.maskscope.compiler import GrammarWriter

ARRAY_KEYWORDS = (
    "items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains", "uniqueItems",
)  # fmt: skip
MAX_REPEAT = 1000  # llama.cpp's grammar engine refuses much longer bounded repeats
_MAX_UNIQUE = 7  # finite item domains up to this size get uniqueItems enforced
_MAX_STATES = 2000  # (hits, length) states for contains


@dataclass
class ArrayShape:
    """The merged array keywords of a conjunction."""

    prefixes: list[tuple[list[Part], Part | None]] = field(default_factory=list)
    min_items: int = 0
    max_items: int | None = None
    contains: list[tuple[Part, int, int | None]] = field(default_factory=list)
    unique: bool = False
    path: str = "$"

    @property
    def prefix_len(self) -> int:
        return max((len(p) for p, _ in self.prefixes), default=0)

    def item_parts(self, index: int) -> list[Part]:
        """Every subschema the item at `index` must satisfy."""
        out = []
        for prefix, rest in self.prefixes:
            if index < len(prefix):
                out.append(prefix[index])
            elif rest is not None:
                out.append(rest)
        return out


def shape_of(ctx: Context, flat: list[Part]) -> ArrayShape:
    shape = ArrayShape(path=flat[0].path if flat else "$")
    lows, highs = [0], []
    for part in flat:
        schema, path, base = part.schema, part.path, part.base
        if not isinstance(schema, dict):
            continue
        shape.prefixes.append(_prefix_and_rest(ctx, schema, path, base))
        lows += [n for n in [as_count(schema.get("minItems"))] if n is not None]
        highs += [n for n in [as_count(schema.get("maxItems"))] if n is not None]
        if "contains" in schema:
            found = as_count(schema.get("minContains"))
            low = 1 if found is None or ctx.draft < 2019 else found
            high = as_count(schema.get("maxContains")) if ctx.draft >= 2019 else None
            at = child_path(path, "contains")
            shape.contains.append((Part(schema["contains"], at, base), low, high))
        shape.unique |= schema.get("uniqueItems") is True
    shape.min_items, shape.max_items = max(lows), min(highs) if highs else None
    return shape


def _prefix_and_rest(
    ctx: Context, schema: dict[str, Any], path: str, base: str
) -> tuple[list[Part], Part | None]:
    items = schema.get("items")
    if ctx.draft >= 2020:
        tuple_key, tuple_items, rest_key, rest = (
            "prefixItems",
            schema.get("prefixItems"),
            "items",
            items,
        )
    elif isinstance(items, list):
        tuple_key, tuple_items, rest_key, rest = (
            "items",
            items,
            "additionalItems",
            schema.get("additionalItems"),
        )
    else:
        tuple_key, tuple_items, rest_key, rest = "items", None, "items", items
    prefix = []
    if isinstance(tuple_items, list):
        prefix = [
            Part(s, child_path(child_path(path, tuple_key), i), base)
            for i, s in enumerate(tuple_items)
        ]
    rest_part = (
        None
        if rest is None or isinstance(rest, list)
        else Part(rest, child_path(path, rest_key), base)
    )
    return prefix, rest_part


def array_rule(comp: GrammarWriter, flat: list[Part], path: str) -> str:
    if not any(k in p.schema for p in flat for k in ARRAY_KEYWORDS):
        return "json-array"
    shape = shape_of(comp.ctx, flat)
    low, high = shape.min_items, shape.max_items
    items = []
    for index in range(shape.prefix_len):
        try:
            items.append(comp.compile(shape.item_parts(index)))
        except Unsatisfiable:
            high = index if high is None else min(high, index)
            break
    rest = _rest(comp, shape)
    if rest is None:
        high = len(items) if high is None else min(high, len(items))
    if high is not None and low > high:
        raise Unsatisfiable(path, f"it needs at least {low} items but can hold at most {high}")
    if high is not None and high > MAX_REPEAT:
        comp.ctx.report(path, "maxItems", "too long for llama.cpp's grammar engine")
        high = None
    if low > MAX_REPEAT:
        comp.ctx.report(path, "minItems", "too long for llama.cpp's grammar engine")
        low = MAX_REPEAT
    body = _special(comp, shape, items, rest, low, high, path)
    if body is None:
        body = _sequence(comp, items, rest, low, high)
    return comp.rules.add("array", f'"[" ws {body} "]"')


def _rest(comp: GrammarWriter, shape: ArrayShape) -> str | None:
    parts = [rest for _, rest in shape.prefixes if rest is not None]
    try:
        return comp.compile(parts)
    except Unsatisfiable:
        return None


def _special(
    comp: GrammarWriter,
    shape: ArrayShape,
    items: list[str],
    rest: str | None,
    low: int,
    high: int | None,
    path: str,
) -> str | None:
    """contains and uniqueItems, where they can be written; None: the plain sequence."""
    ctx = comp.ctx
    for part, _, _ in shape.contains[1:]:
        ctx.report(part.path, "contains", "only one contains per array is enforced")
    body = None
    if shape.contains:
        body = _contains(comp, shape, items, rest, low, high)
    if shape.unique:
        if body is None and not items and not shape.contains:
            body = _unique(comp, shape, low, high)
        if body is None:
            ctx.report(path, "uniqueItems", "enforced only for items with a few possible values")
    return body


def _contains(
    comp: GrammarWriter,
    shape: ArrayShape,
    items: list[str],
    rest: str | None,
    low: int,
    high: int | None,
) -> str | None:
    """Items that match `contains` (hits) counted within minContains/maxContains, and all
    items within minItems/maxItems; None when contains asks nothing."""
    from engine.grammar.compilers.maskscope.combinators import negation

    ctx = comp.ctx
    part, need, most = shape.contains[0]
    rests = [r for _, r in shape.prefixes if r is not None]
    if need == 0 and most is None:
        return None
    try:
        hit: str | None = comp.compile([*rests, part])
    except Unsatisfiable:
        hit = None
    miss = rest
    if most is not None and negation(ctx.quiet(), part) is None:
        ctx.report(part.path, "maxContains", "items that match contains are not counted")
        most = None
    elif most is not None:
        try:
            miss = comp.compile([*rests, Part({"not": part.schema}, part.path, part.base)])
        except Unsatisfiable:
            miss = None
    if items:
        ctx.report(part.path, "contains", "not enforced together with prefix items")
        return None
    body = _counted(comp, hit, miss, (need, most), (low, high), part.path)
    if body is None:
        ctx.report(part.path, "contains", "too many items to count")
    return body


def _counted(
    comp: GrammarWriter,
    hit: str | None,
    miss: str | None,
    hits: tuple[int, int | None],
    length: tuple[int, int | None],
    path: str,
) -> str | None:
    """A list of hit and miss items with the hit count and the length within bounds:
    one rule per (hits, length) state, counts past the last bound that matters merged."""
    (need, most), (low, high) = hits, length
    top_h = most if most is not None else need
    top_n = high if high is not None else max(low, 1)
    if (top_h + 1) * (top_n + 1) > _MAX_STATES:
        return None

    def moves(h: int, n: int) -> list[tuple[str, tuple[int, int]]]:
        if high is not None and n >= high:
            return []
        out = []
        for item, dh in ((hit, 1), (miss, 0)):
            if item is not None and (most is None or h + dh <= most):
                out.append((item, (min(h + dh, top_h), min(n + 1, top_n))))
        return out

    def accepts(h: int, n: int) -> bool:
        return h >= need and n >= low

    states = [(h, n) for h in range(top_h + 1) for n in range(top_n + 1)]
    live = {s for s in states if accepts(*s)}
    grew = True
    while grew:
        grew = False
        for s in states:
            if s not in live and any(t in live for _, t in moves(*s)):
                live.add(s)
                grew = True
    if (0, 0) not in live:
        raise Unsatisfiable(path, "contains and the item counts cannot all hold")
    names = {s: comp.rules.reserve("counted") for s in live}
    for (h, n), name in names.items():
        sep = '"," ws ' if n else ""
        options = ['""'] if accepts(h, n) else []
        options += [f"{sep}{item} ws {names[t]}" for item, t in moves(h, n) if t in live]
        comp.rules.define(name, alternatives(options))
    return names[(0, 0)]


def _unique(comp: GrammarWriter, shape: ArrayShape, low: int, high: int | None) -> str | None:
    domain = finite_domain(comp.ctx, [r for _, r in shape.prefixes if r is not None])
    if domain is None or len(domain) > _MAX_UNIQUE:
        return None
    texts = [literal(json_text(v)) for v in domain]
    limit = len(texts) if high is None else min(high, len(texts))
    if low > limit:
        raise Unsatisfiable(shape.path, f"only {len(texts)} distinct items exist, {low} are needed")
    memo: dict[int, str] = {}

    def state(used: int) -> str:
        if used in memo:
            return memo[used]
        size = bin(used).count("1")
        options = ['""'] if size >= low else []
        if size < limit:
            sep = '"," ws ' if size else ""
            options += [
                f"{sep}{t} ws {state(used | 1 << i)}"
                for i, t in enumerate(texts)
                if not used & 1 << i
            ]
        memo[used] = comp.rules.add("unique", alternatives(options))
        return memo[used]

    return state(0)


def finite_domain(ctx: Context, parts: list[Part]) -> list[Any] | None:
    """The few values these parts allow (enum, const, booleans, null), or None."""
    from engine.grammar.compilers.maskscope.combinators import leaves

    flat, choices = flatten(ctx.quiet(), parts, set())
    out: list[Any] = []
    for leaf in leaves(ctx.quiet(), flat, choices):
        try:
            merged = merge(ctx.quiet(), leaf)
        except Unsatisfiable:
            continue
        values = merged.values
        if values is None and merged.types <= {"null", "boolean"}:
            values = ([None] if "null" in merged.types else []) + (
                [True, False] if "boolean" in merged.types else []
            )
        if values is None:
            return None
        out += [v for v in values if ctx.valid_all(leaf, v) and v not in out]
    return out


def _sequence(
    comp: GrammarWriter, items: list[str], rest: str | None, low: int, high: int | None
) -> str:
    """Items in order, then the rest repeated, with the length in [low, high]."""
    tail = _tail(rest, len(items), low, high)
    for index in range(len(items) - 1, -1, -1):
        if high is not None and index >= high:
            tail = '""'
            continue
        sep = '"," ws ' if index else ""
        step = f"{sep}{items[index]} ws {tail}"
        tail = comp.rules.add("items", step if index < low else f"( {step} )?")
    return tail


def _tail(rest: str | None, count: int, low: int, high: int | None) -> str:
    lo = max(0, low - count)
    hi = None if high is None else high - count
    if rest is None or hi == 0:
        return '""'
    if count > 0:
        return repeat(f'"," ws {rest} ws', lo, hi)
    more = repeat(f'"," ws {rest} ws', max(0, lo - 1), None if hi is None else hi - 1)
    return f"( {rest} ws {more} )" + ("" if lo > 0 else "?")


def repeat(expr: str, lo: int, hi: int | None) -> str:
    """`expr` between lo and hi times (no upper bound: None); `""` for zero times."""
    if hi == 0:
        return '""'
    if hi is None:
        count = "*" if lo == 0 else ("+" if lo == 1 else f"{{{lo},}}")
    else:
        count = "?" if (lo, hi) == (0, 1) else ("" if lo == hi == 1 else f"{{{lo},{hi}}}")
    return f"( {expr} ){count}"
