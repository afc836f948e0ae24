"""Between a schema and its grammar text (engine/masking/grammar_text.py): where each rule
is written, and which subschema (by JSON path, `$.properties.currency`) each rule holds.
Qt-free; the grammar view (app/workbench/grammar_view.py) draws on it, with
engine/workbench/locate.py for where each path is in the schema text.

Only Maskscope's compiler says which rule holds which subschema (`rule_paths`); for the
other compilers the grammar is shown without a map.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.grammar.compile import CompiledSchema
from engine.grammar.rewrite import distinct_lark_names
from engine.schema.pointer import child_path

# Where a definition starts, per language: `name ::= ...` in GBNF, `name: ...` in Lark.
_DEFINITION = {
    "gbnf": re.compile(r"^([A-Za-z0-9_-]+) ::= ", re.MULTILINE),
    "lark": re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): ", re.MULTILINE),
}
_NAME = {"gbnf": re.compile(r"[A-Za-z0-9_-]+"), "lark": re.compile(r"[A-Za-z0-9_]+")}
# Literals, character classes and Lark regexes: names inside them are not references.
_QUOTED = {
    "gbnf": re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]'),
    "lark": re.compile(r'"(?:[^"\\]|\\.)*"|/(?:[^/\\]|\\.)*/'),
}


@dataclass(frozen=True, slots=True)
class RuleMap:
    """Rules of one grammar text by name (as written in that text) and the subschemas they
    hold. `owner` gives a rule that holds no subschema of its own (a key-value pair, an
    object's members) the subschema of the one rule holding it, where that is unique."""

    language: str
    definitions: dict[str, tuple[int, int]]  # rule -> span of its definition in the text
    rule_of_path: dict[str, str] = field(default_factory=dict)
    path_of_rule: dict[str, str] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)

    def rule_at(self, text: str, offset: int) -> str | None:
        """The rule named under `offset` (outside literals), else the one defined there."""
        for name, (start, end) in self.definitions.items():
            if start <= offset <= end:
                body = _blank_quoted(text[start:end], self.language)
                for m in _NAME[self.language].finditer(body):
                    if m.start() <= offset - start <= m.end() and m.group() in self.definitions:
                        return m.group()
                return name
        return None

    def path_for_rule(self, rule: str) -> str | None:
        """The subschema a rule holds, or the one its only holder holds."""
        return self.path_of_rule.get(rule) or self.owner.get(rule)


def rule_map(compiled: CompiledSchema, text: str, language: str) -> RuleMap:
    """Where each rule of `text` (the compiled GBNF, or its Lark translation) is, and (for
    Maskscope's compiler) what it holds; no rules for llguidance's "json" grammar."""
    if language in ("json", "regex"):  # no rules: a schema handed over, or one pattern
        return RuleMap(language, {})
    definitions = _definitions(text, language)
    shown = _shown_names(compiled.gbnf, language, definitions)
    rule_of_path: dict[str, str] = {}
    path_of_rule: dict[str, str] = {}
    for path, rule in compiled.rule_paths:
        name = shown.get(rule)
        if name is not None:
            rule_of_path.setdefault(path, name)
            path_of_rule.setdefault(name, path)
    root = shown.get("root")
    if root is not None and rule_of_path:  # the grammar's start holds the whole schema
        path_of_rule.setdefault(root, "$")
    owner = _owners(text, language, definitions, path_of_rule)
    owner.update(_members(text, language, definitions, path_of_rule))
    return RuleMap(language, definitions, rule_of_path, path_of_rule, owner)


# A key-value rule: the key's literal first (`"\"quantity\""`, a key without escapes).
_MEMBER_KEY = re.compile(r'"\\"([^"\\]*)\\""')


def _members(
    text: str, language: str, definitions: dict[str, tuple[int, int]], holds: dict[str, str]
) -> dict[str, str]:
    """A key-value rule (`kv-4 ::= "\"quantity\"" ws ":" ws quantity ws`) belongs to the
    property it writes: the one rule it names that holds `...properties.quantity`."""
    found: dict[str, str] = {}
    for name, (start, end) in definitions.items():
        head = _DEFINITION[language].match(text, start)
        body = text[head.end() if head else start : end]
        key = _MEMBER_KEY.match(body)
        if name in holds or key is None:
            continue
        named = {m.group() for m in _NAME[language].finditer(_blank_quoted(body, language))}
        paths = {holds[n] for n in named if n in holds}
        tail = child_path("$.properties", key.group(1))[len("$.properties") :]
        mine = [p for p in paths if p.endswith(tail) and p[: -len(tail)].endswith("properties")]
        if len(mine) == 1:
            found[name] = mine[0]
    return found


def _definitions(text: str, language: str) -> dict[str, tuple[int, int]]:
    """Each rule's definition: from its name to the end of its last line (Lark writes
    alternatives on lines of their own, and blank lines between some definitions)."""
    starts = [(m.group(1), m.start()) for m in _DEFINITION[language].finditer(text)]
    spans: dict[str, tuple[int, int]] = {}
    for i, (name, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(text)
        spans.setdefault(name, (start, start + len(text[start:end].rstrip())))
    return spans


def _shown_names(gbnf: str, language: str, definitions: dict[str, tuple[int, int]]) -> dict:
    """GBNF rule name -> its name in the shown text."""
    names = _DEFINITION["gbnf"].findall(gbnf)
    if language == "gbnf":
        return {name: name for name in names if name in definitions}
    # llguidance's translation: `root` becomes `start`, names are folded by _lark_key below,
    # and rules it reads as lexemes are written in capitals. distinct_lark_names renames
    # rules whose folded names would clash, one for one and in the same order.
    renamed = _DEFINITION["gbnf"].findall(distinct_lark_names(gbnf))
    by_key = {name.lower(): name for name in definitions}
    shown = {}
    for old, new in zip(names, renamed, strict=False):
        found = by_key.get("start" if new == "root" else _lark_key(new))
        if found is not None:
            shown[old] = found
    return shown


def _lark_key(name: str) -> str:
    """The name llguidance's GBNF->Lark translation gives a rule, up to letter case (as
    engine/grammar/rewrite.py reckons it)."""
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name.replace("-", "_")).lower()


def _blank_quoted(body: str, language: str) -> str:
    """`body` with literals, classes and regexes blanked out, positions kept."""
    return _QUOTED[language].sub(lambda m: " " * len(m.group()), body)


def _owners(
    text: str, language: str, definitions: dict[str, tuple[int, int]], holds: dict[str, str]
) -> dict[str, str]:
    """For each rule holding no subschema: the subschema of the rules that name it, when
    they all hold the same one (`ws` and shared primitives get none)."""
    named: dict[str, list[str]] = {}
    for name, (start, end) in definitions.items():
        head = _DEFINITION[language].match(text, start)
        body = _blank_quoted(text[head.end() if head else start : end], language)
        found = {m.group() for m in _NAME[language].finditer(body)}
        named[name] = [n for n in found if n in definitions and n not in holds and n != name]
    owners: dict[str, set[str]] = {}
    todo = [(rule, path) for rule, path in holds.items()]
    while todo:
        rule, path = todo.pop()
        for child in named.get(rule, ()):
            seen = owners.setdefault(child, set())
            if path not in seen and len(seen) < 2:  # two owners: ambiguous, stop there
                seen.add(path)
                todo.append((child, path))
    return {rule: next(iter(paths)) for rule, paths in owners.items() if len(paths) == 1}
