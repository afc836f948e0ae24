"""Multi-file schemas: a `$ref` to a sibling file, bundled into one self-contained document.

Teams keep a schema in several files (`{"$ref": "defs/address.json"}`), but every engine
takes one document. `bundle_schema` reads the files a schema refers to, each resolved from
the folder of the file that holds the `$ref` and never outside the root folder (the folder
the user opened). Nothing comes from the network: a reference with a scheme (`https:`,
`file:`, `urn:`) is left as it is, and the compilers refuse it as before. Each file goes
under the root's `$defs` (`definitions` before draft 2019-09) and every reference becomes a
local JSON pointer. This is the bundling of JSON Schema 2020-12 §9.3.1, except that the
embedded documents lose their `$id`: not every engine follows an embedded resource, and a
local pointer works in all of them.

`same_verdicts` proves a bundle equal to its files on known instances: jsonschema judges
each instance against the files themselves (a referencing.Registry that holds only them) and
against the bundle.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from jsonschema import Draft4Validator, Draft6Validator, Draft7Validator
from jsonschema_specifications import REGISTRY as META_SCHEMAS
from referencing import Resource
from referencing.jsonschema import DRAFT202012, specification_with

from engine.errors import MaskscopeError
from engine.schema.nesting import loads, read_limited
from engine.schema.parse import schema_validator, validator_class
from engine.schema.pointer import local_ref, pointer_tokens

_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# Keywords that apply a subschema to the same instance: a chain of them that comes back to
# where it started never reaches a schema (the validator and every compiler recurse forever).
_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else")
_OLD_DRAFTS = (Draft4Validator, Draft6Validator, Draft7Validator)
Parts = tuple[str | int, ...]


class ExternalRefError(MaskscopeError):
    """A `$ref` to a file that cannot be followed: it leaves the root folder, names a
    missing or unreadable file, or is part of a loop.

    `file` (relative to the root folder) and `parts` (the JSON path of the object holding
    the `$ref`) say where it is, and `text` is that file's text, for a line and column.
    `entry` is the path, in the root document, of the `$ref` that leads to `file`: where the
    window's editor can point. `nested`: the `$ref` is in another file than the root.
    """

    kind = "schema"

    def __init__(
        self, reason: str, file: str, parts: Parts, text: str, entry: Parts, nested: bool
    ) -> None:
        super().__init__(f"{file}, {pointer(parts, '$ref')}: {reason}")
        self.reason, self.file, self.parts, self.text = reason, file, parts, text
        self.entry, self.nested = entry, nested


@dataclass(frozen=True, slots=True)
class Bundled:
    """One schema document made from a root file and the files it refers to."""

    text: str  # the bundle's JSON; the root's own text when it refers to no file
    root_file: str = ""  # the root document's file, relative to the root folder
    defs: str = "$defs"  # where the files went: `$defs`, or `definitions` before 2019-09
    keys: dict[str, str] = field(default_factory=dict)  # key under `defs` -> file
    entries: dict[str, Parts] = field(default_factory=dict)  # file -> the root's $ref to it
    documents: dict[str, Any] = field(default_factory=dict)  # file -> its JSON, as written
    folder: Path | None = None  # the root folder

    @property
    def files(self) -> tuple[str, ...]:
        """The files pulled in besides the root, in the order they were first met."""
        return tuple(self.keys.values())

    def origin(self, parts: Parts) -> tuple[str, Parts] | None:
        """The file and path a place in the bundle came from, when it is in a pulled-in file."""
        if len(parts) >= 2 and parts[0] == self.defs and parts[1] in self.keys:
            return self.keys[str(parts[1])], parts[2:]
        return None


def pointer(parts: Parts, last: str = "") -> str:
    """("properties", "a/b") -> `#/properties/a~1b`, a JSON pointer a reader can follow."""
    return local_ref([*parts, *([last] if last else [])])


def file_part(ref: str) -> str | None:
    """The relative file a `$ref` names ("defs/a.json" of "defs/a.json#/x"); None for a
    local one (`#/...`) or one with a scheme or host, which is no file of the user's."""
    split = urlsplit(ref)
    if split.scheme or split.netloc or not split.path:
        return None
    return unquote(split.path)


def refs_in(node: Any, parts: Parts = ()) -> Iterator[tuple[Parts, str]]:
    """(path of the object, its `$ref`) for every string `$ref`, data keywords left out."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield parts, node["$ref"]
        for key, value in node.items():
            if key not in _DATA_KEYWORDS and isinstance(value, dict | list):
                yield from refs_in(value, (*parts, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from refs_in(item, (*parts, index))


def bundle_schema(text: str, file: str | Path, root: str | Path | None = None) -> Bundled:
    """The schema in `text` (the file `file` holds, as the editor has it) with every file it
    refers to bundled in. `root` is the folder nothing may be read outside of: by default
    the file's own. The text comes back as it is when it refers to no file."""
    if '"$ref"' not in text:  # a quick no: most schemas are one file
        return Bundled(text)
    path = Path(file).expanduser().resolve()
    folder = Path(root).expanduser().resolve() if root is not None else path.parent
    if not path.is_relative_to(folder):
        raise MaskscopeError(f"the schema {file} is outside the folder {root}")
    schema = loads(text, str(file))
    reader = _Reader(folder, path.relative_to(folder).as_posix(), text, schema)
    if not reader.gather():
        return Bundled(text)
    bundled = reader.bundle()
    return Bundled(
        json.dumps(bundled, indent=2, ensure_ascii=False),
        reader.root_file, reader.defs, reader.keys, reader.entries,
        {name: doc for name, (doc, _) in reader.docs.items()}, folder,
    )  # fmt: skip


class _Reader:
    """Reads the files breadth first, then writes the bundle and looks for loops."""

    def __init__(self, folder: Path, root_file: str, text: str, schema: Any) -> None:
        self.folder, self.root_file = folder, root_file
        self.docs: dict[str, tuple[Any, str]] = {root_file: (schema, text)}
        self.entries: dict[str, Parts] = {}
        self.keys: dict[str, str] = {}
        self.defs = "definitions" if issubclass(validator_class(schema), _OLD_DRAFTS) else "$defs"

    def gather(self) -> bool:
        """Read every file reachable by `$ref`; False when the root refers to none."""
        queue = [self.root_file]
        while queue:
            name = queue.pop(0)
            doc = self.docs[name][0]
            for parts, ref in refs_in(doc):
                target = self.target(name, parts, ref)
                if target is not None and target not in self.docs:
                    self.entries[target] = self.entries.get(name, parts)
                    self.docs[target] = self.read(target, name, parts, ref)
                    queue.append(target)
        return len(self.docs) > 1

    def target(self, name: str, parts: Parts, ref: str) -> str | None:
        """The file `ref` names, relative to the root folder; None for no file."""
        relative = file_part(ref)
        if relative is None:
            return None
        at = (self.folder / name).parent / relative
        try:
            resolved = at.resolve()  # a link is followed, so it cannot lead outside either
        except (OSError, RuntimeError, ValueError) as exc:
            why = f"the reference {ref} cannot be followed: {exc}"
            raise self.error(why, name, parts) from None
        if not resolved.is_relative_to(self.folder):
            raise self.error(
                f"the reference {ref} leaves the folder Maskscope may read ({self.folder}): "
                "copy the file into it, or open a folder that holds both", name, parts,
            )  # fmt: skip
        return resolved.relative_to(self.folder).as_posix()

    def read(self, target: str, name: str, parts: Parts, ref: str) -> tuple[Any, str]:
        path = self.folder / target
        if not path.is_file():
            raise self.error(f"the reference {ref} names no file: {target} does not exist",
                             name, parts)  # fmt: skip
        try:
            text = read_limited(path, "schema")
            return loads(text, target), text
        except MaskscopeError as exc:
            raise self.error(f"the reference {ref} names a file that is no schema: {exc}",
                             name, parts) from None  # fmt: skip

    def error(self, reason: str, name: str, parts: Parts) -> ExternalRefError:
        entry = self.entries.get(name, parts)
        nested = name != self.root_file
        return ExternalRefError(reason, name, parts, self.docs[name][1], entry, nested)

    def bundle(self) -> Any:
        root = self.docs[self.root_file][0]
        held = root.get(self.defs, {})
        if not isinstance(held, dict):
            raise MaskscopeError(f"{self.defs} must be an object to hold the files it refers to")
        for name in self.docs:
            if name != self.root_file:
                self.keys[_free_key(name, held.keys() | self.keys.keys())] = name
        prefixes = {self.root_file: ""} | {n: f"/{self.defs}/{k}" for k, n in self.keys.items()}
        copies = {name: self.rewritten(name, prefixes) for name in self.docs}
        out = copies[self.root_file]
        out[self.defs] = {**out.get(self.defs, {}), **{k: copies[n] for k, n in self.keys.items()}}
        _Loops(self, out, prefixes).check()
        return out

    def rewritten(self, name: str, prefixes: dict[str, str]) -> Any:
        """A copy of the file's document with each reference a local pointer."""
        copy = json.loads(json.dumps(self.docs[name][0]))
        if name != self.root_file and isinstance(copy, dict):
            for key in ("$id", "id", "$schema"):  # only a resource's root may say them
                copy.pop(key, None)
        for parts, ref in list(refs_in(copy)):
            target = None if ref.startswith("#") else self.target(name, parts, ref)
            if target is None and not ref.startswith("#"):
                continue  # remote: the compilers say so, nothing is fetched
            fragment = ref.partition("#")[2]
            prefix = prefixes[target or name]
            local = fragment if fragment and not fragment.startswith("/") else prefix + fragment
            _at(copy, parts)["$ref"] = "#" + local
        return copy


class _Loops:
    """Finds a chain of references that comes back to where it started without going into
    the instance, through at least one reference to another file."""

    def __init__(self, reader: _Reader, bundled: Any, prefixes: dict[str, str]) -> None:
        self.reader, self.bundled = reader, bundled
        self.origins = {p: n for n, p in prefixes.items() if p}

    def check(self) -> None:
        done: set[Parts] = set()
        for parts, _ in refs_in(self.bundled):
            self.walk(parts, [], done)

    def walk(self, parts: Parts, trail: list[Parts], done: set[Parts]) -> None:
        if parts in trail:
            self.report(trail[trail.index(parts) :])
            return
        if parts in done:
            return
        node = _at(self.bundled, parts)
        target = _target(self.bundled, node.get("$ref")) if isinstance(node, dict) else None
        for step in _in_place(target):
            self.walk(step, [*trail, parts], done)
        done.add(parts)

    def report(self, cycle: list[Parts]) -> None:
        places = [self.place(parts) for parts in cycle]
        files = [name for name, _ in places]
        if len(set(files)) < 2:
            return  # a loop inside one file: the compilers name it
        name, inner = places[0]
        chain = " → ".join([*files, files[0]])
        raise self.reader.error(f"the references form a loop that never reaches a schema "
                                f"({chain})", name, inner)  # fmt: skip

    def place(self, parts: Parts) -> tuple[str, Parts]:
        for prefix, name in self.origins.items():
            head = tuple(prefix.split("/")[1:])
            if parts[: len(head)] == head:
                return name, parts[len(head) :]
        return self.reader.root_file, parts


def _in_place(found: tuple[Any, Parts] | None) -> Iterator[Parts]:
    """The objects holding a `$ref` that apply to the same instance as the subschema found
    (its value and path)."""
    if found is None:
        return
    node, here = found
    if not isinstance(node, dict):
        return
    if isinstance(node.get("$ref"), str):
        yield here
    for key in _IN_PLACE:
        value = node.get(key)
        items = enumerate(value) if isinstance(value, list) else [(None, value)]
        for index, item in items:
            where = (*here, key) if index is None else (*here, key, index)
            yield from _in_place((item, where))


def fragment_tokens(fragment: str) -> list[str] | None:
    """A URI fragment's JSON pointer as tokens (`/a~1b/0` -> ["a/b", "0"]); None for an
    anchor's name or a broken pointer."""
    try:
        return pointer_tokens(unquote(fragment))
    except ValueError:
        return None


def _target(root: Any, ref: Any) -> tuple[Any, Parts] | None:
    """The subschema a local `#/...` pointer names in `root`, with its path; None else."""
    tokens = fragment_tokens(ref[1:]) if isinstance(ref, str) and ref.startswith("#") else None
    if tokens is None:
        return None
    node, parts = root, []
    for token in tokens:
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
            parts.append(int(token))
        elif isinstance(node, dict) and token in node:
            node = node[token]
            parts.append(token)
        else:
            return None
    return node, tuple(parts)


def _at(root: Any, parts: Parts) -> Any:
    for part in parts:
        root = root[part]
    return root


def _free_key(name: str, taken: Iterable[str]) -> str:
    """A `$defs` key for a file, in characters that need no escaping in a pointer."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    used = set(taken)
    key, n = base, 2
    while key in used:
        key, n = f"{base}_{n}", n + 1
    return key


@dataclass(frozen=True, slots=True)
class Proof:
    """The bundle's verdicts against its files' on the same instances."""

    instances: int
    differing: tuple[int, ...]  # indices of the instances judged differently

    @property
    def same(self) -> bool:
        return not self.differing

    def to_json(self) -> dict[str, Any]:
        return {"instances": self.instances, "same_verdicts": self.same,
                "differing": list(self.differing)}  # fmt: skip


def same_verdicts(bundled: Bundled, instances: Iterable[Any]) -> Proof:
    """jsonschema's verdict on each instance against the files (each known by its file URI,
    so a relative `$ref` resolves as bundling resolved it) and against the bundle."""
    assert bundled.folder is not None, "a bundle of one file needs no proof"
    root = bundled.documents[bundled.root_file]
    cls = validator_class(root)
    dialect = root.get("$schema", "") if isinstance(root, dict) else ""
    spec = specification_with(dialect, default=DRAFT202012)
    uris = {name: (bundled.folder / name).as_uri() for name in bundled.documents}
    resources = [
        (uris[name], Resource(contents=_with_id(doc, uris[name], cls), specification=spec))
        for name, doc in bundled.documents.items()
    ]
    files = cls({"$ref": uris[bundled.root_file]}, registry=META_SCHEMAS.with_resources(resources),
                format_checker=cls.FORMAT_CHECKER)  # fmt: skip
    one = schema_validator(json.loads(bundled.text))
    values = list(instances)
    differing = tuple(i for i, v in enumerate(values) if _verdict(files, v) != _verdict(one, v))
    return Proof(len(values), differing)


def _with_id(doc: Any, uri: str, cls: type) -> Any:
    """The document with its file's URI as its `$id`, so its own references join to it."""
    if not isinstance(doc, dict):
        return doc
    return {**doc, ("id" if cls is Draft4Validator else "$id"): uri}


def _verdict(validator: Any, instance: Any) -> str:
    try:
        return "valid" if validator.is_valid(instance) else "invalid"
    except Exception as exc:  # a verdict too: both sides must fail alike
        return f"{type(exc).__name__}"
