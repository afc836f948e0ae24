"""Running a suite on an OpenAI-compatible server (engine/suite/server/request.py says what
each mode sends): every case × N samples as concurrent requests, each read back into the
same Sample a local run makes, less what only local decoding sees (the per-step masks:
valid mass, forced and overruled steps are None, never 0).

The local model is used only to read the outputs: the fail-open check feeds each one through
Maskscope's tested grammar (llguidance), and a sample whose output is invalid and which that
grammar would not have let through (a truncated output only needs to be a prefix it allows)
is marked failed open. That is the server ignoring the schema, a harness problem, never a
model failure (engine/suite/metrics.py turns it into an exit-2 problem).

The first request goes alone: it settles the form of response_format the server takes and
proves the server answers before N requests wait on it. A cancel (should_stop) stops sending;
the requests still in flight are abandoned, and the finished samples are kept. A server that
stops answering after that first sample (every retry spent) ends the run as a cancel does:
nothing more is sent, the requests in flight are waited for, the finished samples are kept,
and ServerRun.stopped says so (exit 2). Server runs are not cached: the server's model and
build are not Maskscope's to hash.

A local model whose file was replaced since it was loaded (a model kept between runs) is
loaded again for the run, so the check reads with the tokenizer the file now holds; a file
that is gone fails that load (ModelLoadError) before any request.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from engine.check.feed import feed_text, plain_tokens
from engine.decode.loop import build_prompt, finish_run
from engine.errors import GrammarError, MaskscopeError, SuiteError
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.masking import MaskBackend, make_backend
from engine.model.llama import Model
from engine.records import FinishReason, RunResult
from engine.runs.saved import SavedRun
from engine.settings import GenerationSettings
from engine.suite.format import Case, Suite
from engine.suite.metrics import Sample, field_results, runaway_of_pieces
from engine.suite.run import Progress, SuiteRun
from engine.suite.server.client import HttpRefusal, Reply, ServerClient, ServerUnreachable
from engine.suite.server.note import ServerNote
from engine.suite.server.request import (
    FORMS,
    GRAMMAR,
    JSON_OBJECT,
    RESPONSE_FORMAT,
    Answer,
    ServerOptions,
    check_mode,
    read_answer,
    refuses_format,
    request_for,
)
from engine.suite.template import render_prompt

_POLL_S = 0.1  # how often a wait for replies looks at should_stop
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """The provenance of a server run, for the result and the table."""

    url: str
    mode: str
    model: str  # as the server's /v1/models names it; "" when it does not say
    response_format: str = ""  # the form the server took: json_schema or json_object

    def to_json(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class ServerRun:
    run: SuiteRun
    server: ServerInfo
    # Why the run ended before every sample was back, when the server stopped answering
    # ("the server at URL stopped answering after K of N samples: ..."); else empty.
    stopped: str = ""


@dataclass(frozen=True, slots=True)
class _Planned:
    order: int
    case: Case
    index: int
    prompt: str  # the text sent: the model's own for the completions modes
    settings: GenerationSettings


@dataclass(frozen=True, slots=True)
class _Reply:
    plan: _Planned
    answer: Answer | None
    wall_ms: float
    error: BaseException | None = None
    retries: int = 0  # requests resent after a refused connection (nothing had been sent)
    server_ms: float | None = None  # the server's own time on it, where it reports one


def server_model(client: ServerClient) -> str:
    """The model the server serves, by /v1/models; "" when it does not say (HTTP error or
    another shape). A server that does not answer raises ServerUnreachable."""
    try:
        data = client.get("/v1/models").data
        return str(data["data"][0]["id"])
    except (HttpRefusal, KeyError, IndexError, TypeError):
        return ""


def run_suite_on_server(
    model: Model,
    suite: Suite,
    options: ServerOptions,
    *,
    samples: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    on_progress: Callable[[Progress], None] | None = None,
    client: ServerClient | None = None,
) -> ServerRun:
    """Every case `samples` times on the server. Bad input raises MaskscopeError before any
    request; so do a server that cannot be reached and one that refuses every response_format
    form (SuiteError: exit 2)."""
    base = suite.settings()
    compiled = compile_schema(suite.schema_text, base.compiler)
    check_mode(options.mode, compiled)
    with _current(model) as model:
        client = client or ServerClient(options.url, timeout_s=options.timeout_s)
        name = server_model(client)
        planned = list(_plan(model, suite, samples or suite.samples, base, options.mode))
        runner = _ServerRunner(model, suite, compiled, options, client, name)
        try:
            cancelled = runner.run(planned, should_stop, on_progress)
        finally:
            runner.close()
    done = sorted(runner.made, key=lambda pair: pair[0])
    wall_s = time.perf_counter() - runner.start
    run = SuiteRun(
        tuple(s for _, s, _ in done), tuple(r for _, _, r in done), cancelled, 0, wall_s,
        len(planned), wall_s,
    )  # fmt: skip
    form = runner.form if options.mode != GRAMMAR else ""
    stopped = (
        f"the server at {options.url} stopped answering after {len(done)} of {len(planned)} "
        f"samples: {runner.lost}"
        if runner.lost
        else ""
    )
    return ServerRun(run, ServerInfo(options.url, options.mode, name, form), stopped)


@contextmanager
def _current(model: Model) -> Iterator[Model]:
    """`model`, or its file loaded anew (and closed after) when that is no longer the one
    `model` holds; a file gone raises the load's own one-line error."""
    change = model.file_change()
    if change is None:
        yield model
        return
    log.warning("%s; loading it again", change)
    reloaded = Model.load(model.settings)
    try:
        yield reloaded
    finally:
        reloaded.close()


def _plan(
    model: Model, suite: Suite, samples: int, base: GenerationSettings, mode: str
) -> Iterator[_Planned]:
    """As the local run plans (engine/suite/run.py): sample i of a case has seed + i."""
    order = 0
    for case in suite.cases:
        prompt = render_prompt(suite.prompt, case.vars)
        if mode != RESPONSE_FORMAT:  # the chat endpoint applies the server's template itself
            prompt = build_prompt(model, prompt, base)
        for i in range(samples):
            yield _Planned(order, case, i, prompt, dataclasses.replace(base, seed=base.seed + i))
            order += 1


class _ServerRunner:
    def __init__(
        self,
        model: Model,
        suite: Suite,
        compiled: CompiledSchema,
        options: ServerOptions,
        client: ServerClient,
        server_model_name: str,
    ) -> None:
        self.model, self.suite, self.compiled, self.options = model, suite, compiled, options
        self.client, self.server_model = client, server_model_name
        self.form = FORMS[0]
        self._form_lock = threading.Lock()
        self._replies: queue.Queue[_Reply] = queue.Queue()
        self.made: list[tuple[int, Sample, SavedRun]] = []
        self.lost = ""  # why the server stopped answering mid-run; empty while it answers
        self.start = time.perf_counter()
        self.checker = GrammarCheck(model, compiled)

    def close(self) -> None:
        self.checker.close()

    def run(
        self,
        planned: list[_Planned],
        should_stop: Callable[[], bool],
        on_progress: Callable[[Progress], None] | None,
    ) -> bool:
        """Send every request, at most `concurrency` at a time after the first; True when
        cancelled, or the server stopped answering, before every sample was back."""
        todo = iter(planned)
        in_flight = 0
        while True:
            # The first reply settles the response_format form before the others are sent.
            width = self.options.concurrency if self.made else 1
            while not self.lost and in_flight < width and (plan := next(todo, None)) is not None:
                if should_stop():
                    return True
                self._launch(plan)
                in_flight += 1
            if not in_flight:
                return bool(self.lost)
            reply = self._next_reply(should_stop)
            if reply is None:
                return True
            in_flight -= 1
            self._add(reply, on_progress, len(planned))

    def _next_reply(self, should_stop: Callable[[], bool]) -> _Reply | None:
        """The next reply to come back; None once should_stop says so."""
        while not should_stop():
            try:
                return self._replies.get(timeout=_POLL_S)
            except queue.Empty:
                continue
        return None

    def _launch(self, plan: _Planned) -> None:
        # Daemon threads: a cancel abandons the requests in flight instead of waiting for
        # them (up to the timeout each) before the command can exit.
        threading.Thread(target=lambda: self._replies.put(self._ask(plan)), daemon=True).start()

    def _ask(self, plan: _Planned) -> _Reply:
        try:
            answer, reply = self._request(plan)
            return _Reply(plan, answer, reply.wall_ms, None, reply.retries, served_ms(reply.data))
        except Exception as exc:  # carried to the main thread, which decides
            return _Reply(plan, None, 0.0, exc)

    def _request(self, plan: _Planned) -> tuple[Answer, Reply]:
        """The answer, and the reply it came in: its wall time counts from when the request
        that answered was sent, and its retries (the client resends a POST only when its
        connection was refused)."""
        form = self.form
        try:
            reply = self.client.post(*self._body(plan, form))
        except HttpRefusal as refusal:
            if self.options.mode == GRAMMAR or not refuses_format(refusal):
                raise
            with self._form_lock:
                if self.form == form == FORMS[0]:
                    self.form = JSON_OBJECT
                elif form == JSON_OBJECT:
                    raise self._refused(refusal) from None
            try:
                reply = self.client.post(*self._body(plan, self.form))
            except HttpRefusal as second:
                if refuses_format(second):
                    raise self._refused(refusal, second) from None
                raise
        return read_answer(self.options.mode, reply.data), reply

    def _body(self, plan: _Planned, form: str) -> tuple[str, dict]:
        return request_for(
            self.options.mode, form, plan.prompt, plan.settings, self.compiled,
            model=self.server_model or None, logprobs=self.options.logprobs,
        )  # fmt: skip

    def _refused(self, *refusals: HttpRefusal) -> SuiteError:
        said = "; then ".join(str(r) for r in refusals)
        return SuiteError(
            f"the server at {self.options.url} refuses response_format (tried "
            f"{' and '.join(FORMS)}): {said}"
        )

    def _add(
        self, reply: _Reply, on_progress: Callable[[Progress], None] | None, total: int
    ) -> None:
        if isinstance(reply.error, ServerUnreachable) and self.made:
            # Gone after answering: stop sending, keep what came back (a first request that
            # gets no answer raises instead: there is nothing to keep).
            self.lost = self.lost or reply.error.reason
            return
        if reply.error is not None and not isinstance(reply.error, HttpRefusal):
            raise reply.error  # unreachable, refused response_format, a broken reply
        sample, run = self._sample(reply)
        self.made.append((reply.plan.order, sample, run))
        if on_progress is not None:
            elapsed = time.perf_counter() - self.start
            on_progress(Progress(len(self.made), total, 0, elapsed, sample))

    def _sample(self, reply: _Reply) -> tuple[Sample, SavedRun]:
        plan = reply.plan
        result, note, pieces = self._result(reply)
        sample = Sample(
            case_id=plan.case.id,
            index=plan.index,
            seed=plan.settings.seed,
            result=result,
            records=(),
            latency_ms=reply.wall_ms,
            server_ms=reply.server_ms,
            fields=field_results(result, plan.case.expected),
            mean_valid_mass=None,
            min_valid_mass=None,
            n_overruled=None,
            n_forced=None,
            runaway=runaway_of_pieces(pieces),
            server=note,
        )
        name = self.server_model or self.options.url
        return sample, SavedRun(self.suite.schema_text, plan.prompt, name, (), result)

    def _result(self, reply: _Reply) -> tuple[RunResult, ServerNote, list[str]]:
        if reply.answer is None:  # an HTTP error on this sample: the harness failed on it
            message = f"the server answered {reply.error}"
            result = RunResult("", FinishReason.ERROR, 0, message=message)
            return result, ServerNote(), []
        answer = reply.answer
        finish = _finish(answer.finish_reason)
        pieces = list(answer.tokens) or self.checker.pieces(answer.text)
        n_tokens = answer.completion_tokens or len(pieces)
        message = "" if finish is not FinishReason.ERROR else (
            f"the server ended with finish_reason {answer.finish_reason!r}"
        )  # fmt: skip
        result = finish_run(
            answer.text, self.compiled, finish, n_tokens, message,
            total_ms=reply.wall_ms, setup_ms=0.0, prompt_ms=0.0, forward_ms=0.0, mask_ms=0.0,
            settings=reply.plan.settings,
        )  # fmt: skip
        where, failed_open = self.checker.verdict(result)
        note = ServerNote(
            answer.tokens, answer.logprobs, where, failed_open, answer.finish_reason,
            reply.retries,
        )  # fmt: skip
        return result, note, pieces


def served_ms(data: object) -> float | None:
    """The time the server spent on a request by its own clock: llama-server's `timings`
    (tools/server/server-common.cpp, server_slot_stats::to_json: prompt_ms from when its slot
    took the task to the prompt's end, predicted_ms for the tokens after), so the wait for a
    free slot is left out. None where the reply has no such numbers (llama-cpp-python's)."""
    timings = data.get("timings") if isinstance(data, dict) else None
    if not isinstance(timings, dict):
        return None
    parts = [timings.get("prompt_ms"), timings.get("predicted_ms")]
    if not all(isinstance(p, int | float) and not isinstance(p, bool) for p in parts):
        return None
    total = float(parts[0]) + float(parts[1])
    return total if 0.0 <= total < 1e12 else None


def _finish(server_reason: str) -> FinishReason:
    if server_reason == "length":
        return FinishReason.MAX_TOKENS
    if server_reason in ("stop", "eos", ""):
        return FinishReason.END_OF_GENERATION
    return FinishReason.ERROR


class GrammarCheck:
    """Maskscope's tested grammar, on llguidance, reading the server's outputs."""

    def __init__(self, model: Model, compiled: CompiledSchema) -> None:
        self.model = model
        self.backend: MaskBackend | None = None
        self.problem = ""
        try:
            self.backend = make_backend("llguidance", model, compiled)
        except GrammarError as exc:
            self.problem = f"not checked: llguidance cannot read the grammar ({exc})"

    def pieces(self, text: str) -> list[str]:
        tokens = plain_tokens(self.model, text)
        return [self.model.piece(t).decode("utf-8", "replace") for t in tokens]

    def verdict(self, result: RunResult) -> tuple[str, str]:
        """How the grammar reads the output ("accepted", "rejected at ..."), and why it shows
        the server failed open; empty when it does not."""
        if self.backend is None or result.finish_reason is FinishReason.ERROR:
            return self.problem, ""
        try:
            fed = feed_text(self.model, self.backend, result.text)
        except MaskscopeError as exc:
            return f"not checked: {exc}", ""
        if fed.accepted or result.valid:
            return fed.where, ""
        if result.truncated and fed.token == "":
            return "a prefix the grammar allows (truncated)", ""
        return fed.where, f"the output ignores the tested grammar: {fed.where}"

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
