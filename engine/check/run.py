"""One schema checked under one compiler and backend: compile, feed each instance, judge."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.check.feed import Fed, feed_text
from engine.check.inputs import FileInstance, SchemaCase
from engine.check.pool import CRASHED, HUNG
from engine.check.verdict import InstanceVerdict, explanation, schema_errors
from engine.check.write import Arrange, document_order, llamacpp_order, properties_order, write
from engine.errors import GrammarError, MaskscopeError
from engine.masking import make_backend
from engine.schema.validate import validation_issues

if TYPE_CHECKING:
    from engine.grammar.compile import CompiledSchema
    from engine.masking import MaskBackend
    from engine.model.llama import Model


@dataclass(frozen=True, slots=True)
class SchemaResult:
    file: str
    group: str | None
    compiler: str
    backend: str
    compiled: bool
    error: str | None = None
    ms: float | None = None  # compile time
    verdicts: tuple[InstanceVerdict, ...] = ()

    @property
    def valid_n(self) -> int:
        return sum(v.valid for v in self.verdicts)

    @property
    def invalid_n(self) -> int:
        return sum(not v.valid for v in self.verdicts)

    @property
    def valid_ok(self) -> int:
        return sum(v.valid and v.accepted for v in self.verdicts) if self.compiled else 0

    @property
    def invalid_rej(self) -> int:
        return sum(not v.valid and not v.accepted for v in self.verdicts) if self.compiled else 0

    @property
    def unexplained(self) -> int:
        return sum(v.unexplained for v in self.verdicts) if self.compiled else 0

    @property
    def crashed(self) -> bool:
        return bool(self.error) and self.error.startswith((CRASHED, HUNG))

    @property
    def passed(self) -> bool:
        return self.compiled and all(v.agrees for v in self.verdicts)

    @property
    def failed(self) -> bool:
        """What makes `check` exit non-zero: no grammar, a valid instance refused, or an
        invalid one let through that no reported gap explains."""
        bad = any(v.over_constrained or v.unexplained for v in self.verdicts)
        return not self.compiled or self.error is not None or bad

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {"file": self.file}
        if self.group is not None:
            line["group"] = self.group
        line |= {"compiler": self.compiler, "backend": self.backend, "compiled": self.compiled}
        if self.error is not None:
            line["error"] = self.error
        line |= {
            "valid_ok": self.valid_ok,
            "valid_n": self.valid_n,
            "invalid_rej": self.invalid_rej,
            "invalid_n": self.invalid_n,
            "unexplained": self.unexplained,
            "ms": None if self.ms is None else round(self.ms, 1),
        }
        return line


# A compile slower than this is timed once: the grammar check's share of it is small.
_RETIME_BELOW_MS = 1000.0


def key_order(compiler: str) -> Arrange:
    """How instances are written for a compiler's grammar: each object's keys in the order
    its grammar writes them."""
    if compiler == "maskscope":
        try:
            from engine.grammar.compilers.maskscope.arrange import arrange
        except ImportError:  # until the compiler's own order exists
            return document_order
        return arrange
    if compiler == "llamacpp":
        return llamacpp_order
    # llguidance: found by experiment; outlines-core writes each object's `properties` in
    # order, required or not (src/json_schema/parsing.rs), with its `[ ]?` around ', ', ': ';
    # XGrammar, without any_order (vLLM's default), wants the schema's declared order.
    if compiler in ("llguidance", "outlines", "xgrammar"):
        return properties_order
    return document_order


def check_case(model: Model, case: SchemaCase, compiler: str, backend_name: str) -> SchemaResult:
    """Every instance of `case` through `compiler`'s grammar on `backend_name`."""
    from engine.grammar.compile import compile_schema

    text = json.dumps(case.schema, ensure_ascii=False)
    start = time.perf_counter()
    try:
        compiled = compile_schema(text, compiler)
        ms = (time.perf_counter() - start) * 1000
        if ms < _RETIME_BELOW_MS:
            # Timed again: the first compile may wait on llama.cpp's check of a grammar it
            # has not seen (in a child process, then cached); `ms` is the compiler's own.
            start = time.perf_counter()
            compiled = compile_schema(text, compiler)
            ms = (time.perf_counter() - start) * 1000
        backend = make_backend(backend_name, model, compiled)
    except Exception as exc:  # a MaskscopeError, or a compiler's bug: both are no grammar
        ms = (time.perf_counter() - start) * 1000
        return SchemaResult(
            case.file, case.group, compiler, backend_name, False, _reason(exc, compiler), ms,
            _unjudged(case),
        )  # fmt: skip
    arrange = key_order(compiler)
    try:
        verdicts = tuple(
            _verdict(model, backend, compiled, case, i, arrange) for i in range(len(case.instances))
        )
    except _Unjudged as exc:
        return SchemaResult(case.file, case.group, compiler, backend_name, True, str(exc), ms)
    except Exception as exc:  # a bug, in this module or a compiler's key order: say which
        error = f"cannot check the instances: {type(exc).__name__}: {exc}"
        return SchemaResult(case.file, case.group, compiler, backend_name, True, error, ms)
    finally:
        backend.close()
    return SchemaResult(case.file, case.group, compiler, backend_name, True, None, ms, verdicts)


def _verdict(
    model: Model,
    backend: MaskBackend,
    compiled: CompiledSchema,
    case: SchemaCase,
    index: int,
    arrange: Arrange,
) -> InstanceVerdict:
    instance = case.instances[index]
    if instance.text is not None:
        return _raw_verdict(model, backend, instance, index)
    texts = _written(case.schema, instance.data, arrange)
    fed = _feed(model, backend, texts[0])
    if not fed.accepted and len(texts) > 1:
        # The grammar's own order is only our reading of it: the instance's order may pass.
        retry = _feed(model, backend, texts[1])
        if retry.accepted:
            fed = retry
    try:
        valid = not validation_issues(instance.data, case.schema)
        errors = [] if valid else schema_errors(instance.data, case.schema)
    except Exception as exc:  # a pattern Python's re cannot read (\p{L}), a remote $ref
        raise _Unjudged(f"jsonschema cannot judge instance {index + 1}: {exc}") from exc
    let_through = fed.accepted and not valid
    gaps = explanation(case.schema, errors, compiled.unenforced) if let_through else ()
    return InstanceVerdict(
        index=index,
        description=instance.description,
        text=texts[0],
        valid=valid,
        accepted=fed.accepted,
        where=fed.where,
        at=fed.rejected_at,
        label=instance.valid,
        explained_by=gaps,
        errors=tuple(e.message for e in errors),
    )


def _raw_verdict(
    model: Model, backend: MaskBackend, instance: FileInstance, index: int
) -> InstanceVerdict:
    """A text that is not JSON is invalid against any schema: the grammar must refuse it, and
    no unenforced keyword can explain that it did not."""
    fed = _feed(model, backend, instance.text or "")
    return InstanceVerdict(
        index=index,
        description=instance.description,
        text=instance.text or "",
        valid=False,
        accepted=fed.accepted,
        where=fed.where,
        at=fed.rejected_at,
        label=instance.valid,
        explained_by=(),
        errors=("not JSON: the text is given raw",),
    )


def _reason(exc: Exception, compiler: str) -> str:
    if isinstance(exc, MaskscopeError):
        return str(exc)
    return f"the {compiler} compiler failed: {type(exc).__name__}: {exc}"


class _Unjudged(Exception):
    """jsonschema could not give its verdict, so the grammar's cannot be compared."""


def _written(schema: Any, data: Any, arrange: Arrange) -> list[str]:
    own = write(data)
    try:
        first = write(arrange(schema, data))
    except RecursionError:  # a schema too deep to walk: the instance's own order it is
        return [own]
    return [first] if own == first else [first, own]


def _feed(model: Model, backend: MaskBackend, text: str) -> Fed:
    try:
        return feed_text(model, backend, text)
    except GrammarError as exc:  # llguidance refusing a token its own mask allowed
        return Fed(False, 0, f"(backend error: {exc})")


def _unjudged(case: SchemaCase) -> tuple[InstanceVerdict, ...]:
    """jsonschema's verdicts alone, for a schema that got no grammar (or crashed)."""
    out = []
    for i, instance in enumerate(case.instances):
        try:
            valid = instance.text is None and not validation_issues(instance.data, case.schema)
        except Exception:  # jsonschema cannot read it: as the file says
            valid = bool(instance.valid)
        out.append(
            InstanceVerdict(i, instance.description, "", valid, False, "no grammar", instance.valid)
        )
    return tuple(out)


def no_verdict(case: SchemaCase, compiler: str, backend: str, error: str) -> SchemaResult:
    """A schema whose worker crashed or hung: jsonschema's counts, nothing accepted."""
    verdicts = _unjudged(case)
    return SchemaResult(case.file, case.group, compiler, backend, False, error, None, verdicts)


# The pool's side (engine.check.pool): module-level, so that spawned workers can load them.


def load_model(path: str | None) -> Model:
    """A worker's model: only the vocabulary is used, so the smallest context will do."""
    from engine.model.llama import Model
    from engine.settings import ModelSettings

    model = Model.load(ModelSettings(path=path, n_ctx=64, n_threads=1))
    # The first compile and backend pay for imports and llguidance's tokenizer; spend that
    # here, so that no schema's compile time carries it.
    check_case(
        model, SchemaCase("warm-up", None, {"type": "integer"}, ()), "llamacpp", "llguidance"
    )
    return model


def check_task(model: Model, task: tuple[SchemaCase, str, str]) -> SchemaResult:
    return check_case(model, *task)


def lost_task(task: tuple[SchemaCase, str, str], why: str) -> SchemaResult:
    case, compiler, backend = task
    if backend == "outlines" and why.startswith(HUNG):
        # The pair's only slow part is outlines-core's regex automaton and Index, which
        # cannot be stopped (engine/masking/outlines.py); its feed is a lookup per token.
        # Past the time limit the schema did not compile: a finding, not a crash.
        why = f"outlines-core did not compile the schema: {why.removeprefix(HUNG)}"
    return no_verdict(case, compiler, backend, why)
