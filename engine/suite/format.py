"""What a suite file holds (docs/suite-format.md): the schema, settings, prompt template,
cases with expected field values, known-good and known-bad instances, and thresholds.

Plain frozen dataclasses; engine/suite/load.py reads and writes them as JSON.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.errors import PatternTimeoutError
from engine.schema import patterns
from engine.settings import DEFAULT_BACKEND, DEFAULT_COMPILER, GenerationSettings
from engine.suite.jsonpath import MISSING, lookup, parse_path

FORMAT = "maskscope-suite"
VERSION = 1

# "absent": the key must not be there; "absent_or_null": not there, or null. A model that
# invents a value where the input gave none is caught by them, where expecting null would
# also fail a correct answer that leaves the key out.
ExpectKind = Literal["equals", "regex", "tolerance", "absent", "absent_or_null"]
ABSENT_KINDS: tuple[ExpectKind, ...] = ("absent", "absent_or_null")


@dataclass(frozen=True, slots=True)
class Expectation:
    """One expected field value: at `path`, exactly `value`, a full regex match of its string
    form (`value` is the pattern), a number within `tolerance` of `value`, or nothing there
    (`absent`; `absent_or_null` takes a null too; `value` is unused)."""

    path: str  # $.currency, $.items[0].total
    kind: ExpectKind
    value: Any
    tolerance: float | None = None  # kind "tolerance" only; absolute, bounds included

    def check(self, output: Any) -> tuple[bool, str]:
        """Whether the parsed output meets this expectation, and why not, in words."""
        found = lookup(output, parse_path(self.path))
        if self.kind in ABSENT_KINDS:
            return self._check_absent(found)
        if found is MISSING:
            return False, f"{self.path} is missing"
        if self.kind == "equals":
            if same_json(found, self.value):
                return True, ""
            return False, f"{self.path} is {_shown(found)}, expected {_shown(self.value)}"
        if self.kind == "regex":
            try:
                if patterns.fullmatch(self.value, string_form(found)):  # bounded in time
                    return True, ""
            except PatternTimeoutError as exc:
                return False, f"{self.path} cannot be judged: {exc}"
            return False, f"{self.path} is {_shown(found)}, which does not match /{self.value}/"
        if not _is_number(found):
            return False, f"{self.path} is {_shown(found)}, not a number"
        if abs(found - self.value) <= (self.tolerance or 0.0):
            return True, ""
        return False, (
            f"{self.path} is {_shown(found)}, not within {_shown(self.tolerance)} "
            f"of {_shown(self.value)}"
        )

    def _check_absent(self, found: Any) -> tuple[bool, str]:
        if found is MISSING or (found is None and self.kind == "absent_or_null"):
            return True, ""
        wanted = "absent" if self.kind == "absent" else "absent or null"
        return False, f"{self.path} is {_shown(found)}, expected {wanted}"


@dataclass(frozen=True, slots=True)
class Case:
    """One input: the template's variable values and the field values expected back."""

    id: str
    vars: dict[str, str]
    expected: tuple[Expectation, ...] = ()
    description: str = ""
    line: int | None = None  # its line in the cases file; None for a case in the suite itself


@dataclass(frozen=True, slots=True)
class Instance:
    """A known-good (`valid`) or known-bad output: JSON `data`, or raw `text` when the output
    is not JSON at all (a truncated object, say)."""

    valid: bool
    data: Any = None
    text: str | None = None  # when set, the instance is this text and `data` is unused
    description: str = ""

    @property
    def output_text(self) -> str:
        """The output as the model would have written it."""
        return self.text if self.text is not None else json.dumps(self.data, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What a run must reach to pass; None leaves a metric unchecked."""

    min_validity: float | None = None  # share of samples valid, 0..1
    max_truncation: float | None = None  # share of samples cut off at max_tokens, 0..1
    min_field_accuracy: float | None = None  # share of expectations met, 0..1
    max_p95_latency_ms: float | None = None  # per object
    # What that maximum holds: "service" (the time serving a sample, queueing left out) or
    # "wall" (the request's whole wall time); engine/suite/metrics.py says how each is measured.
    latency: str = "service"


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    # The schema exactly as read from schema_file (with the files its `$ref`s name bundled
    # in: engine/schema/siblings.py); for an inline schema, its JSON text as
    # load.schema_text_of writes it. The grammar hash is computed from this text.
    schema_text: str
    prompt: str  # template with {{variable}} placeholders (engine/suite/template.py)
    cases: tuple[Case, ...] = ()
    compiler: str = DEFAULT_COMPILER
    backend: str = DEFAULT_BACKEND
    generation: dict[str, Any] = field(default_factory=dict)  # GenerationSettings fields
    samples: int = 1  # per case
    instances: tuple[Instance, ...] = ()
    thresholds: Thresholds = Thresholds()
    description: str = ""
    schema_file: str | None = None  # as written in the suite: relative to its folder
    cases_file: str | None = None  # as written; the cases read from it have a `line`
    path: str | None = None  # the suite file it was loaded from

    @property
    def schema(self) -> Any:
        return json.loads(self.schema_text)

    def settings(self, base: GenerationSettings | None = None) -> GenerationSettings:
        """`base` (the usual settings by default) with the suite's compiler, backend and
        generation settings in place."""
        return dataclasses.replace(
            base or GenerationSettings(),
            **self.generation,
            compiler=self.compiler,
            backend=self.backend,
        )


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: 1 equals 1.0, but true is not 1 (Python's == says it is)."""
    if _is_number(a) and _is_number(b):  # _is_number excludes booleans
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def string_form(value: Any) -> str:
    """What a regex is matched against: a string itself, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
