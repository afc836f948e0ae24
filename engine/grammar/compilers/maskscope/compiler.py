"""Maskscope's JSON Schema -> GBNF compiler: the entry point and the walk over subschemas.

Each subschema becomes one rule, named once before its body is written so that recursive
`$ref`s can name it. A subschema is the conjunction of every part that applies to the same
value (normalize.py); its alternatives expand into one branch each (combinators.py); each
branch is written per type (objects.py, arrays.py, strings.py, numbers.py, values.py).
What the grammar cannot hold is reported as `Unenforced`, never silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.errors import GrammarError
from engine.grammar.compilers.maskscope import arrays, objects
from engine.grammar.compilers.maskscope.combinators import choices_of, leaves
from engine.grammar.compilers.maskscope.formats import asserted_formats
from engine.grammar.compilers.maskscope.keys import KeysTooLarge, key_classes
from engine.grammar.compilers.maskscope.normalize import (
    ASSERTIONS,
    Choice,
    Context,
    Merged,
    Unsatisfiable,
    flatten,
    merge,
)
from engine.grammar.compilers.maskscope.numbers import fraction_rule, integer_rule, number_rule
from engine.grammar.compilers.maskscope.resolve import Part, Resolver
from engine.grammar.compilers.maskscope.rules import MORE_DIGITS, Rules, alternatives, literal
from engine.grammar.compilers.maskscope.strings import string_rule
from engine.grammar.compilers.maskscope.values import (
    json_text,
    number_except,
    string_except,
    values_rule,
)
from engine.grammar.report import Unenforced

_DEFINED = re.compile(r"^([a-z0-9-]+) ::= ", re.MULTILINE)
# Deeper than this (recursive schemas that never repeat the same conjunction), any value.
MAX_DEPTH = 40


@dataclass(frozen=True, slots=True)
class OwnGrammar:
    """A schema compiled by Maskscope: the GBNF and what it does not enforce."""

    gbnf: str
    unenforced: tuple[Unenforced, ...]
    # (JSON path of a subschema, the rule holding its values), for the grammar view.
    rule_paths: tuple[tuple[str, str], ...] = ()


def compile_to_gbnf(schema: Any) -> OwnGrammar:
    """GBNF for the schema; GrammarError when nothing satisfies it or a ref is remote."""
    if schema is False:
        raise GrammarError("the schema `false` allows no value")
    compiler = GrammarWriter(schema)
    try:
        root = compiler.compile([compiler.ctx.resolver.root_part])
    except Unsatisfiable as exc:
        raise GrammarError(f"the schema allows no value: {exc.reason} (at {exc.path})") from None
    except RecursionError:
        raise GrammarError("the schema nests too deeply to compile") from None
    gbnf = compiler.rules.gbnf(root)
    defined = set(_DEFINED.findall(gbnf))  # rules written but unreachable are left out
    paths = tuple((path, rule) for path, rule in compiler.paths.items() if rule in defined)
    return OwnGrammar(gbnf, tuple(dict.fromkeys(compiler.ctx.gaps)), paths)


class GrammarWriter:
    """One compilation: the rules written so far and the subschemas already named."""

    def __init__(self, schema: Any) -> None:
        self.ctx = Context(Resolver(schema), choices_of=choices_of)
        self.rules = Rules()
        # jsonschema checks only the formats the schema's draft asserts: the rest are notes.
        self.formats = asserted_formats(schema)
        self._named: dict[tuple[int, ...], str] = {}
        self._unsatisfiable: dict[tuple[int, ...], Unsatisfiable] = {}
        self._pinned: list[list[Part]] = []  # keeps the ids in the keys above alive
        self._depth = 0
        self.paths: dict[str, str] = {}  # JSON path -> the first rule written for it
        self.memo: dict[Any, Any] = {}  # what the type modules may reuse within this compilation

    def compile(self, parts: list[Part]) -> str:
        """A GBNF expression for values satisfying every part; Unsatisfiable if none does."""
        flat, choices = flatten(self.ctx, parts, set())
        if not flat:
            return "json-value"
        key = tuple(id(p.schema) for p in flat)
        if key in self._unsatisfiable:
            raise self._unsatisfiable[key]
        if key in self._named:
            return self._name_paths([*parts, *flat], self._named[key])
        if self._depth >= MAX_DEPTH:
            self.ctx.report(flat[0].path, "$ref", "nested too deeply: any value is allowed here")
            return "json-value"
        name = self.rules.reserve(_hint(flat[0].path))
        self._named[key] = name
        self._pinned.append(flat)
        self._depth += 1
        try:
            body = self._choose(flat, choices)
        except Unsatisfiable as exc:
            del self._named[key]
            self._unsatisfiable[key] = exc
            raise
        finally:
            self._depth -= 1
        self.rules.define(name, body)
        return self._name_paths([*parts, *flat], name)

    def _name_paths(self, parts: list[Part], name: str) -> str:
        """Remember `name` as the rule of each part's path (a `$ref` site and its target)."""
        for part in parts:
            self.paths.setdefault(part.path, name)
        return name

    def _choose(self, flat: list[Part], choices: list[Choice]) -> str:
        options: list[str] = []
        first: Unsatisfiable | None = None
        for leaf in leaves(self.ctx, flat, choices):
            try:
                options.append(self._leaf(leaf))
            except Unsatisfiable as exc:
                first = first or exc
        if not options:
            raise first or Unsatisfiable(flat[0].path, "none of its alternatives can hold")
        return alternatives(options)

    def _leaf(self, leaf: list[Part]) -> str:
        merged = merge(self.ctx, leaf)
        if merged.values is not None:
            allowed = [v for v in merged.values if self.ctx.valid_all(leaf, v)]
            if not allowed:
                raise Unsatisfiable(
                    merged.path, "none of its enum/const values meets its other keywords"
                )
            return values_rule(self.rules, allowed)
        if not any(k in ASSERTIONS for p in leaf for k in p.schema):
            return "json-value"
        options: list[str] = []
        first: Unsatisfiable | None = None
        for kind in ("null", "boolean", "number", "string", "array", "object"):
            try:
                found = self._typed(kind, leaf, merged)
            except Unsatisfiable as exc:
                first = first or exc
                continue
            if found is not None:
                options.append(found)
        if not options:
            raise first or Unsatisfiable(merged.path, "no value of its types is left")
        return alternatives(options)

    def _typed(self, kind: str, leaf: list[Part], merged: Merged) -> str | None:
        """Values of one JSON type satisfying the leaf; None when the type is excluded."""
        types, path = merged.types, merged.path
        excluded = [v for v in merged.excluded if _kind_of(v) == kind]
        if kind == "null":
            return None if "null" not in types or excluded else "json-null"
        if kind == "boolean":
            kept = [v for v in (True, False) if v not in excluded and "boolean" in types]
            return alternatives(literal(json_text(v)) for v in kept) if kept else None
        if kind == "number":
            return self._number(merged, excluded)
        if excluded and (kind != "string" or merged.string):
            self.ctx.report(path, "not", f"excluded {kind} values are still allowed")
        if kind not in types:
            return None
        if kind == "string":
            return self._string(merged, excluded)
        if kind == "array":
            return arrays.array_rule(self, leaf, path)
        return objects.object_rule(self, leaf, path)

    def _string(self, merged: Merged, excluded: list[Any]) -> str:
        """Strings; those `not` excludes (values, patterns) only where nothing else
        constrains them: a grammar cannot intersect two string languages here."""
        path, gaps = merged.path, self.ctx.gaps
        if merged.more_patterns:
            found = self._every_pattern(merged, excluded)
            if found is not None:
                return found
            for where, _ in merged.more_patterns:
                self.ctx.report(where, "pattern", "only one pattern per string is enforced")
        if merged.unmatched and not merged.string:
            classes = key_classes(merged.unmatched, excluded)
            try:
                found = classes.key_rule(self.rules, frozenset()) if classes else None
            except KeysTooLarge:
                found = None
            if found is not None:
                return found
        if merged.unmatched:
            self.ctx.report(path, "not", "a pattern strings must not match is not enforced")
        if excluded and not merged.string and not merged.unmatched:
            return string_except(self.rules, excluded)
        return string_rule(self.rules, merged.string, path, gaps, formats=self.formats)

    def _every_pattern(self, merged: Merged, excluded: list[Any]) -> str | None:
        """Strings matching every pattern (and none that `not` excludes), from the key
        automaton, which intersects patterns exactly; None when it cannot, or when lengths
        or a format constrain the strings too (its expressions carry no length bound)."""
        if set(merged.string) != {"pattern"}:
            return None
        patterns = [merged.string["pattern"]] + [p for _, p in merged.more_patterns]
        classes = key_classes(patterns + merged.unmatched, excluded)
        if classes is None:
            return None
        try:
            found = classes.key_rule(self.rules, frozenset(range(len(patterns))))
        except KeysTooLarge:
            return None
        if found is None:
            raise Unsatisfiable(merged.path, "no string matches all of its patterns")
        return found

    def _number(self, merged: Merged, excluded: list[Any]) -> str | None:
        """Integers, or all numbers, or (from `not` integer) numbers with a fraction."""
        types, path, gaps = merged.types, merged.path, self.ctx.gaps
        whole, fraction = "integer" in types, "fraction" in types
        if not whole and not fraction:
            return None
        if (excluded or not whole) and not merged.number:
            if not whole:
                return self.rules.add("fraction", f'json-int "." {MORE_DIGITS} [1-9]')
            found = number_except(self.rules, excluded, fraction)
            if found is not None:
                return found
        if excluded:
            self.ctx.report(path, "not", "excluded number values are still allowed")
        if not whole:
            found = fraction_rule(self.rules, merged.number, path, gaps)
            if found is not None and not excluded:
                return found
            self.ctx.report(path, "type", "non-integer numbers only: integers are allowed too")
        if fraction:
            return number_rule(self.rules, merged.number, path, gaps)
        return integer_rule(self.rules, merged.number, path, gaps)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "object")


def _hint(path: str) -> str:
    tail = path.replace("[", ".").replace("]", "").rsplit(".", 1)[-1].strip("'\"")
    return tail if tail and tail != "$" else "value"
