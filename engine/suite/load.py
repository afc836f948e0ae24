"""Reading and writing suite files (docs/suite-format.md).

Every problem is a SuiteError that names the file and the place in it: a JSON path such as
`$.cases[2].vars` in the suite, or a line in its cases file.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from engine.errors import MaskscopeError, SuiteError
from engine.schema.nesting import read_limited, too_deep
from engine.schema.parse import parse_schema
from engine.schema.siblings import ExternalRefError, bundle_schema
from engine.settings import (
    BACKENDS,
    COMPILERS,
    DEFAULT_BACKEND,
    DEFAULT_COMPILER,
    MAX_TOKENS,
    SEED,
    TEMPERATURE,
    TOP_K,
    GenerationSettings,
    Range,
)
from engine.suite.cases import read_rows
from engine.suite.format import (
    ABSENT_KINDS,
    FORMAT,
    VERSION,
    Case,
    Expectation,
    Instance,
    Suite,
    Thresholds,
)
from engine.suite.jsonpath import PathError, parse_path
from engine.suite.never_met import never_met_in
from engine.suite.template import render_prompt, unused_values
from engine.workbench.siblings import ref_error_line

_KEYS = (
    "format",
    "version",
    "name",
    "description",
    "schema",
    "schema_file",
    "compiler",
    "backend",
    "generation",
    "prompt",
    "samples",
    "cases",
    "cases_file",
    "instances",
    "thresholds",
)
_CASE_KEYS = ("id", "vars", "expected", "description")
_INSTANCE_KEYS = ("data", "text", "valid", "description")
_RATES = ("min_validity", "max_truncation", "min_field_accuracy")
_THRESHOLD_KEYS = (*_RATES, "max_p95_latency_ms", "latency")
_LATENCIES = ("service", "wall")  # what max_p95_latency_ms holds (format.Thresholds)
SAMPLES = Range(int, 1, 10_000)
# Generation settings a suite may set; compiler and backend have their own top-level keys.
_SETTINGS = {
    f.name: f.default
    for f in dataclasses.fields(GenerationSettings)
    if f.name not in ("compiler", "backend")
}
_SETTING_RANGES = {
    "max_tokens": MAX_TOKENS,
    "temperature": TEMPERATURE,
    "seed": SEED,
    "top_k": TOP_K,
}


def load_suite(path: str) -> Suite:
    """The suite in the file at `path`, its schema_file and cases_file read beside it."""
    try:
        text = read_limited(path, "suite")
    except MaskscopeError as exc:
        raise SuiteError(exc.message) from None
    deep = too_deep(text)  # before json and the schema's walkers recurse into it
    if deep is not None:
        raise SuiteError(deep.reason, path, f"line {deep.line}, column {deep.column}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise SuiteError(f"not JSON ({exc.msg})", path, where) from None
    return suite_from_json(data, Path(path).parent, file=path)


def suite_from_json(data: Any, base_dir: str | Path, file: str = "") -> Suite:
    """The suite that `data` (a parsed suite file) describes; its paths are read relative to
    `base_dir`. `file` names the suite in messages and becomes Suite.path."""
    return _Reader(file, Path(base_dir)).suite(data)


def suite_to_json(suite: Suite) -> dict[str, Any]:
    """The suite as its file holds it; the cases read from cases_file stay in that file."""
    out: dict[str, Any] = {"format": FORMAT, "version": VERSION, "name": suite.name}
    if suite.description:
        out["description"] = suite.description
    if suite.schema_file is not None:
        out["schema_file"] = suite.schema_file
    else:
        out["schema"] = suite.schema
    out |= {"compiler": suite.compiler, "backend": suite.backend}
    if suite.generation:
        out["generation"] = dict(suite.generation)
    out |= {"prompt": suite.prompt, "samples": suite.samples}
    out["cases"] = [_case_json(case) for case in suite.cases if case.line is None]
    if suite.cases_file is not None:
        out["cases_file"] = suite.cases_file
    out["instances"] = [_instance_json(instance) for instance in suite.instances]
    thresholds = {k: v for k, v in dataclasses.asdict(suite.thresholds).items() if v is not None}
    if thresholds.get("latency") == _LATENCIES[0]:  # the default goes unsaid
        del thresholds["latency"]
    if thresholds:
        out["thresholds"] = thresholds
    return out


def _is_json(text: str) -> bool:
    if too_deep(text) is not None:
        return True  # JSON too deep to read: not the question asked here
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def suite_warnings(suite: Suite) -> list[str]:
    """What is allowed but probably a mistake: variables that no placeholder uses, and
    expectations that no output of the schema can meet (engine/suite/never_met.py)."""
    found = []
    for case in suite.cases:
        unused = unused_values(suite.prompt, case.vars)
        if unused:
            names = ", ".join(repr(name) for name in unused)
            found.append(f"case {case.id!r}: the prompt uses no {{{{…}}}} for {names}")
    for case_id, why in never_met_in(suite):
        found.append(f"case {case_id!r}: {why}, so the case can never pass")
    return found


def schema_text_of(schema: Any) -> str:
    """The text an inline schema is hashed and compiled from: the same for the same schema."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _case_json(case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {"id": case.id, "vars": dict(case.vars)}
    if case.expected:
        out["expected"] = {e.path: _expectation_json(e) for e in case.expected}
    if case.description:
        out["description"] = case.description
    return out


def _expectation_json(expectation: Expectation) -> Any:
    if expectation.kind == "regex":
        return {"regex": expectation.value}
    if expectation.kind == "tolerance":
        return {"value": expectation.value, "tolerance": expectation.tolerance}
    if expectation.kind in ABSENT_KINDS:
        return {expectation.kind: True}
    # A bare object would read back as an expectation spec, so objects say "equals".
    value = expectation.value
    return {"equals": value} if isinstance(value, dict) else value


def _instance_json(instance: Instance) -> dict[str, Any]:
    out: dict[str, Any] = {"valid": instance.valid}
    if instance.text is not None:
        out["text"] = instance.text
    else:
        out["data"] = instance.data
    if instance.description:
        out["description"] = instance.description
    return out


class _Reader:
    """Reads one suite's JSON; `file` and `where` name each problem's place."""

    def __init__(self, file: str, base_dir: Path) -> None:
        self.file = file
        self.base_dir = base_dir

    def fail(self, where: str, message: str, file: str | None = None) -> SuiteError:
        return SuiteError(message, self.file if file is None else file, where)

    def suite(self, data: Any) -> Suite:
        if not isinstance(data, dict) or "format" not in data:
            raise self.fail("$", f'not a Maskscope suite: it has no "format": "{FORMAT}"')
        if data["format"] != FORMAT:
            got = json.dumps(data["format"])
            raise self.fail("$.format", f'not a Maskscope suite: format is {got}, not "{FORMAT}"')
        version = data.get("version")
        if version != VERSION or isinstance(version, bool):
            raise self.fail(
                "$.version", f"version {json.dumps(version)} is not one this Maskscope reads (1)"
            )
        self.keys(data, "$", _KEYS, required=("prompt",))
        schema_text, schema_file = self.schema(data)
        cases = [
            self.case(c, f"$.cases[{i}]", f"case {i + 1}")
            for i, c in enumerate(self.items(data, "cases"))
        ]
        cases_file = self.optional(data, "cases_file", str, "$.cases_file")
        if cases_file is not None:
            cases += self.cases_file(cases_file)
        suite = Suite(
            name=self.optional(data, "name", str, "$.name") or self.default_name(),
            schema_text=schema_text,
            prompt=self.prompt(data["prompt"]),
            cases=tuple(cases),
            compiler=self.choice(data, "compiler", COMPILERS, DEFAULT_COMPILER),
            backend=self.choice(data, "backend", BACKENDS, DEFAULT_BACKEND),
            generation=self.generation(data.get("generation", {})),
            samples=self.ranged(data.get("samples", 1), SAMPLES, "$.samples"),
            instances=tuple(
                self.instance(x, f"$.instances[{i}]")
                for i, x in enumerate(self.items(data, "instances"))
            ),
            thresholds=self.thresholds(data.get("thresholds", {})),
            description=self.optional(data, "description", str, "$.description") or "",
            schema_file=schema_file,
            cases_file=cases_file,
            path=self.file or None,
        )
        self.check_cases(suite)
        problem = suite.settings().problem()
        if problem:
            raise self.fail("$.generation", problem)
        return suite

    def default_name(self) -> str:
        name = Path(self.file).name if self.file else "suite"
        return name.removesuffix(".json").removesuffix(".suite") or "suite"

    # -- the parts -------------------------------------------------------------------------

    def schema(self, data: dict[str, Any]) -> tuple[str, str | None]:
        if ("schema" in data) == ("schema_file" in data):
            raise self.fail("$", 'give the schema inline ("schema") or by path ("schema_file")')
        if "schema" in data:
            if not isinstance(data["schema"], dict | bool):
                raise self.fail("$.schema", "the schema is a JSON object (or true/false)")
            text, file = schema_text_of(data["schema"]), None
        else:
            file = self.optional(data, "schema_file", str, "$.schema_file")
            text = self.bundled(file, self.read_inside(file, "$.schema_file", "schema"))
        try:
            parse_schema(text)
        except MaskscopeError as exc:
            raise self.fail("$.schema_file" if file else "$.schema", f"the schema: {exc}") from None
        return text, file

    def prompt(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail("$.prompt", f"the prompt is a string, not {json.dumps(value)}")
        return value

    def case(self, data: Any, where: str, default_id: str, file: str | None = None) -> Case:
        self.keys(data, where, _CASE_KEYS, required=("vars",), file=file)

        def at(part: str) -> str:  # $.cases[2].vars in the suite; line 4, vars in a file
            return f"{where}.{part}" if where.startswith("$") else f"{where}, {part}"

        values = data["vars"]
        if not isinstance(values, dict):
            raise self.fail(at("vars"), "vars is an object of variable values", file)
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise self.fail(at(f"vars.{name}"), "a variable is a string or a number", file)
        expected = data.get("expected", {})
        if not isinstance(expected, dict):
            raise self.fail(at("expected"), "expected maps JSON paths to values", file)
        return Case(
            id=self.optional(data, "id", str, at("id"), file) or default_id,
            vars={name: str(value) for name, value in values.items()},
            expected=tuple(
                self.expectation(path, spec, at(f"expected[{json.dumps(path)}]"), file)
                for path, spec in expected.items()
            ),
            description=self.optional(data, "description", str, at("description"), file) or "",
        )

    def expectation(self, path: str, spec: Any, where: str, file: str | None) -> Expectation:
        try:
            parse_path(path)
        except PathError as exc:
            raise self.fail(where, exc.message, file) from None
        if not isinstance(spec, dict):
            return Expectation(path, "equals", spec)
        if set(spec) == {"equals"}:
            return Expectation(path, "equals", spec["equals"])
        if set(spec) == {"regex"}:
            pattern = spec["regex"]
            if not isinstance(pattern, str):
                raise self.fail(where, "a regex is a string", file)
            try:
                re.compile(pattern)
            except re.error as exc:
                raise self.fail(where, f"not a regular expression: {exc}", file) from None
            return Expectation(path, "regex", pattern)
        if set(spec) == {"value", "tolerance"}:
            value, tolerance = spec["value"], spec["tolerance"]
            if not (_number(value) and _number(tolerance) and tolerance >= 0):
                raise self.fail(where, "value and tolerance are numbers, tolerance 0 or more", file)
            return Expectation(path, "tolerance", value, tolerance)
        if len(spec) == 1 and (kind := next(iter(spec))) in ABSENT_KINDS:
            if spec[kind] is not True:
                shown = json.dumps(spec[kind], ensure_ascii=False)
                raise self.fail(where, f'{{"{kind}": true}} takes true, not {shown}', file)
            if path == "$":
                raise self.fail(where, "the whole output ($) is never absent: name a key", file)
            return Expectation(path, kind, None)
        raise self.fail(
            where,
            'an expectation is a value, {"equals": V}, {"regex": R}, '
            '{"value": N, "tolerance": T}, {"absent": true} or {"absent_or_null": true}; '
            f"not one with keys {sorted(spec)}",
            file,
        )

    def cases_file(self, name: str) -> list[Case]:
        text = self.read_inside(name, "$.cases_file", "cases")
        shown = str(self.base_dir / name)
        stem = Path(name).stem
        return [
            dataclasses.replace(
                self.case(row, f"line {line}", f"{stem} line {line}", shown), line=line
            )
            for line, row in read_rows(Path(name), text, shown)
        ]

    def check_cases(self, suite: Suite) -> None:
        seen: set[str] = set()
        for index, case in enumerate(suite.cases):
            file, where = self.place_of(case, index, suite.cases_file)
            if case.id in seen:
                raise self.fail(where, f"the case id {case.id!r} is used twice", file)
            seen.add(case.id)
            try:
                render_prompt(suite.prompt, case.vars)
            except SuiteError as exc:
                raise self.fail(where, exc.message, file) from None

    def place_of(self, case: Case, index: int, cases_file: str | None) -> tuple[str, str]:
        if case.line is None:
            return self.file, f"$.cases[{index}]"
        return str(self.base_dir / (cases_file or "")), f"line {case.line}"

    def instance(self, data: Any, where: str) -> Instance:
        self.keys(data, where, _INSTANCE_KEYS, required=("valid",))
        if ("data" in data) == ("text" in data):
            raise self.fail(where, 'an instance has "data" (JSON) or "text" (raw), not both')
        valid = data["valid"]
        if not isinstance(valid, bool):
            raise self.fail(f"{where}.valid", "valid is true or false")
        text = self.optional(data, "text", str, f"{where}.text")
        if valid and text is not None and not _is_json(text):
            raise self.fail(
                f"{where}.text",
                "a text that is not JSON is never valid: mark it known-bad (valid: false)",
            )
        return Instance(
            valid=valid,
            data=data.get("data"),
            text=text,
            description=self.optional(data, "description", str, f"{where}.description") or "",
        )

    def generation(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail("$.generation", "generation is an object of settings")
        misplaced = [k for k in ("compiler", "backend") if k in data]
        if misplaced:
            raise self.fail(
                f"$.generation.{misplaced[0]}", f"{misplaced[0]} is set at the suite's top level"
            )
        self.keys(data, "$.generation", tuple(_SETTINGS))
        out = {}
        for name, value in data.items():
            where = f"$.generation.{name}"
            if name in _SETTING_RANGES:
                out[name] = self.ranged(value, _SETTING_RANGES[name], where)
            elif isinstance(_SETTINGS[name], bool):
                if not isinstance(value, bool):
                    raise self.fail(where, f"{name} is true or false")
                out[name] = value
            else:  # cross_check_compiler: a compiler's name or null
                if value is not None and value not in COMPILERS:
                    raise self.fail(where, f"choose one of {', '.join(COMPILERS)}, or null")
                out[name] = value
        return out

    def thresholds(self, data: Any) -> Thresholds:
        self.keys(data, "$.thresholds", _THRESHOLD_KEYS)
        for name, value in data.items():
            where = f"$.thresholds.{name}"
            if name == "latency":
                if value not in _LATENCIES:
                    raise self.fail(where, f'"service" or "wall", not {json.dumps(value)}')
                continue
            if value is None:
                continue
            if not _number(value):
                raise self.fail(where, f"a threshold is a number, not {json.dumps(value)}")
            if name in _RATES and not 0 <= value <= 1:
                raise self.fail(where, f"a rate is from 0 to 1, not {value}")
            if name not in _RATES and value <= 0:
                raise self.fail(where, f"a latency is more than 0 ms, not {value}")
        limits = {name: _float(value) for name, value in data.items() if name != "latency"}
        return Thresholds(**limits, latency=data.get("latency", _LATENCIES[0]))

    # -- small checks ----------------------------------------------------------------------

    def keys(
        self,
        data: Any,
        where: str,
        allowed: tuple[str, ...],
        required: tuple[str, ...] = (),
        file: str | None = None,
    ) -> None:
        if not isinstance(data, dict):
            raise self.fail(where, "expected a JSON object", file)
        unknown = [key for key in data if key not in allowed]
        if unknown:
            names = ", ".join(repr(key) for key in unknown)
            raise self.fail(where, f"unknown key {names}; the keys are {', '.join(allowed)}", file)
        missing = [key for key in required if key not in data]
        if missing:
            raise self.fail(where, f"missing {', '.join(repr(key) for key in missing)}", file)

    def items(self, data: dict[str, Any], key: str) -> list[Any]:
        value = data.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"$.{key}", f"{key} is a list")
        return value

    def optional(
        self, data: dict[str, Any], key: str, kind: type, where: str, file: str | None = None
    ) -> Any:
        value = data.get(key)
        if value is not None and not isinstance(value, kind):
            raise self.fail(where, f"{key} is a {kind.__name__}, not {json.dumps(value)}", file)
        return value

    def choice(self, data: dict[str, Any], key: str, names: tuple[str, ...], default: str) -> str:
        value = data.get(key, default)
        if value not in names:
            shown = json.dumps(value)
            raise self.fail(f"$.{key}", f"{shown} is not a {key}; choose one of {', '.join(names)}")
        return value

    def ranged(self, value: Any, allowed: Range, where: str) -> int | float:
        whole = allowed.kind is int
        if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
            what = "a whole number" if whole else "a number"
            raise self.fail(where, f"{json.dumps(value)} is not {what}")
        if value not in allowed:
            raise self.fail(where, f"must be from {allowed.low} to {allowed.high}, not {value}")
        return allowed.kind(value)

    def bundled(self, name: str | None, text: str) -> str:
        """The schema file's text with the files its `$ref`s name bundled in, read from its
        folder and never outside the suite's (engine/schema/siblings.py)."""
        assert name is not None  # read_inside refused an empty one
        try:
            return bundle_schema(text, self.base_dir / name, self.base_dir).text
        except ExternalRefError as exc:
            raise self.fail("$.schema_file", ref_error_line(exc)) from None
        except MaskscopeError as exc:
            raise self.fail("$.schema_file", f"the schema: {exc}") from None

    def read_inside(self, name: str | None, where: str, what: str) -> str:
        """The text of `name`, a path relative to the suite's folder that stays inside it."""
        if not name:
            raise self.fail(where, f"the {what} file's path is empty")
        if "\0" in name:  # no file has one; the OS would refuse it with a ValueError
            raise self.fail(where, f"the {what} file's path holds a NUL character")
        base = self.base_dir.resolve()
        target = (base / Path(name).expanduser()).resolve()
        if not target.is_relative_to(base):
            raise self.fail(where, f"suite paths must stay inside the suite's folder: {name}")
        try:
            return read_limited(str(target), what)
        except MaskscopeError as exc:
            raise self.fail(where, exc.message) from None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
