"""The one place where work crosses threads.

A QThread runs :class:`_Worker`, which owns the loaded model, compiles the schema and
drains ``engine.decode.loop.generate``. The GUI thread talks to it only through
:class:`RunController`: requests go in as queued signals, results come back as queued
signals, and Stop is a ``threading.Event`` that the generator polls between steps. The
GUI thread therefore never waits on the model, except in :meth:`RunController.shutdown`,
which waits at most one decoding step (or one model load) when the window closes.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from PySide6.QtCore import (
    QCoreApplication,
    QObject,
    Qt,
    QThread,
    Signal,
    SignalInstance,
    Slot,
)

from engine import heap
from engine.decode.loop import generate
from engine.decode.pacing import Pacer
from engine.errors import GrammarError, MaskscopeError
from engine.grammar.compile import compile_schema, cross_grammar
from engine.internal_log import bug_message
from engine.masking.base import PLUGINS
from engine.masking.llguidance import tokenizer_for
from engine.model.llama import LoadCancelled, Model
from engine.model.paths import note_model
from engine.records import FinishReason, RunResult, StepRecord
from engine.runs.provenance import Provenance, provenance_of
from engine.settings import GenerationSettings, ModelSettings
from engine.suite.cache import RunCache
from engine.suite.format import Suite
from engine.suite.run import run_suite

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunRequest:
    schema_text: str
    prompt: str
    model: ModelSettings
    generation: GenerationSettings
    forced: tuple[int, ...] = ()  # a branch: the tokens of its first steps (see generate)


@dataclass(frozen=True, slots=True)
class SuiteRequest:
    """Every case of `suite` × `samples` on the model (engine/suite/run), up to `parallel`
    samples of a case in one batch."""

    suite: Suite
    model: ModelSettings
    samples: int | None = None  # the suite's own count when None
    cache: RunCache | None = None  # None decodes every sample afresh
    parallel: int = 1  # as `maskscope test --parallel P`


class ModelCache:
    """Keeps one loaded model and reloads it only when its ModelSettings change.

    Only one thread uses it at a time: the worker thread while it runs, or whoever calls
    :meth:`close` after that thread has stopped. Tests share one cache between windows so
    the model loads once per session.
    """

    def __init__(self) -> None:
        self._settings: ModelSettings | None = None
        self._model: Model | None = None

    def get(self, settings: ModelSettings, should_stop: Callable[[], bool] | None = None) -> Model:
        """The model for these settings, loading it if need be; a load that
        `should_stop()` ends raises LoadCancelled and leaves nothing held."""
        if self._model is not None and self._settings == settings:
            change = self._model.file_change()
            if change is None:
                return self._model
            # Load what the file holds now: a missing or broken file then fails with the
            # load's own clear message, and a run never reports a model that is gone.
            log.warning("%s; loading it again", change)
        self.close()  # free the old weights before loading new ones
        self._model = Model.load(settings, should_stop)
        self._settings = settings
        return self._model

    def loaded(self, settings: ModelSettings) -> Model | None:
        """The model for these settings if it is the one held and its file is still the one
        loaded; never loads (the next get() loads a changed file again)."""
        if self._model is None or self._settings != settings:
            return None
        return self._model if self._model.file_change() is None else None

    def close(self) -> None:
        if self._model is not None:
            self._model.close()
        self._model = None
        self._settings = None


def _yield_to_the_gui() -> None:
    """Run this thread below the GUI thread. llama.cpp's CPU threads start from it and
    inherit that, so on a CPU they keep busy the window still answers at once: the
    timer-lag probe's worst stall went from 37-49 ms to 23-31 ms on 2 cores."""
    if sys.platform.startswith("linux"):
        tid = threading.get_native_id()
        try:  # Linux gives each thread its own nice value; Qt's priorities ignore it
            os.setpriority(os.PRIO_PROCESS, tid, min(os.getpriority(os.PRIO_PROCESS, tid) + 5, 19))
        except OSError:
            log.warning("could not lower the worker thread's priority")
    else:
        QThread.currentThread().setPriority(QThread.Priority.LowPriority)


class BackendSetupError(MaskscopeError):
    """A backend could not set up for a grammar that compiled (outlines-core's Index past
    its time limit): the banner's, since the Problems list reports the compile only."""

    kind = "backend"


def _preparing(generation: GenerationSettings) -> str | None:
    """What the status bar says while the run's backend sets up, where that takes long."""
    plugin = PLUGINS.get(generation.backend)
    return plugin.preparing if plugin is not None and generation.constrained else None


def _provenance(model: Model, settings: GenerationSettings | None) -> Provenance | None:
    """What a saved run records about how it was made; None if the model file went away
    or changed since the load (its digest would name weights the run did not use)."""
    if change := model.file_change():
        log.warning("no provenance for this run: %s", change)
        return None
    try:
        return provenance_of(model.info.path, settings or GenerationSettings(), model.n_vocab)
    except MaskscopeError as e:
        log.warning("no provenance for this run: %s", e.message)
        return None


class _Worker(QObject):
    """Lives in the worker thread; each slot is one job and ends with sig_idle."""

    sig_state = Signal(str)
    sig_model_loaded = Signal(object, object)  # ModelSettings, ModelInfo
    sig_step = Signal(object)  # StepRecord
    sig_provenance = Signal(object)  # Provenance of the run about to finish, or None
    sig_finished = Signal(object)  # RunResult
    sig_error = Signal(str, str)  # kind, message
    sig_suite_progress = Signal(object)  # engine.suite.run.Progress, after each sample
    sig_suite_finished = Signal(object)  # engine.suite.run.SuiteRun, also when cancelled
    sig_suite_error = Signal(str, str)  # kind, message: the suite's, not the window's run
    sig_idle = Signal()

    def __init__(self, cache: ModelCache, stop: threading.Event, pacer: Pacer) -> None:
        super().__init__()
        self._cache = cache
        self._stop = stop
        self._pacer = pacer

    @contextmanager
    def _job(self, error: SignalInstance, what: str) -> Iterator[None]:
        """A job's end: its error as one line on `error` (a bug too, which must not kill the
        thread; `what` names the job in its message), then sig_idle, whatever happened."""
        try:
            yield
        except MaskscopeError as e:
            error.emit(e.kind, e.message)
        except Exception as e:
            error.emit("internal", bug_message(e, what))
        finally:
            self.sig_idle.emit()

    @Slot(object)
    def load(self, settings: ModelSettings) -> None:
        # A cancelled load: the window is closing, and nobody is waiting for this model.
        with self._job(self.sig_error, "the window: a model load"), suppress(LoadCancelled):
            model = self._load(settings)
            # llguidance builds its token trie (~1.7 s) holding Python's GIL, which stalls
            # the window: here, while it says it is loading, rather than at the first Run.
            self.sig_state.emit("Preparing the vocabulary for the grammar…")
            tokenizer_for(model, self._stop.is_set)

    @Slot(object)
    def run(self, request: RunRequest) -> None:
        with self._job(self.sig_error, "the window: a run"):
            self.sig_finished.emit(self._run(request))

    @Slot(object)
    def run_suite(self, request: SuiteRequest) -> None:
        with self._job(self.sig_suite_error, "the window: a suite run"):
            self.sig_state.emit("Compiling schema…")
            try:
                model = self._load(request.model)
            except LoadCancelled:
                self.sig_suite_error.emit("cancelled", "stopped before the model had loaded")
                return
            self.sig_state.emit("Running the suite…")
            done = run_suite(
                model,
                request.suite,
                samples=request.samples,
                parallel=request.parallel,
                cache=request.cache,
                should_stop=self._stop.is_set,
                on_progress=self.sig_suite_progress.emit,
            )
            self.sig_suite_finished.emit(done)

    def _load(self, settings: ModelSettings) -> Model:
        self.sig_state.emit("Loading model…")
        model = self._cache.get(settings, self._stop.is_set)
        if self._stop.is_set():  # the window is closing: the hash below would cost ~0.5 s
            raise LoadCancelled(f"the load of {model.info.name} was stopped")
        _provenance(model, None)  # hash the model file here, once, not after a run
        self.sig_model_loaded.emit(settings, model.info)
        return model

    def _run(self, request: RunRequest) -> RunResult:
        # Compile first: a schema error should show at once, not after a model load.
        self.sig_state.emit("Compiling schema…")
        if request.model.path:  # the grammar judge may need its vocabulary
            note_model(request.model.path)
        compiled = compile_schema(request.schema_text, request.generation.compiler)
        try:
            model = self._load(request.model)
        except LoadCancelled:
            model = None
        if model is None or self._stop.is_set():
            return RunResult(
                text="",
                finish_reason=FinishReason.CANCELLED,
                n_tokens=0,
                message="stopped before the first token",
            )
        # A backend whose setup takes long (outlines-core's Index) says so until the first
        # step; generate() sets it up there, and Stop reaches it through should_stop.
        preparing = _preparing(request.generation)
        self.sig_state.emit(preparing or "Decoding…")
        cross = cross_grammar(compiled, request.generation)
        steps = generate(
            model, compiled, request.prompt, request.generation, self._stop.is_set,
            request.forced, cross,
        )  # fmt: skip
        while True:
            # Between two steps the generator holds the whole run's state: a pause here
            # loses nothing, and the next step is the one an unpaused run would make.
            self._pacer.wait_turn(self._stop.is_set)
            try:
                record = next(steps) if not preparing else self._prepared(steps)
            except StopIteration as done:
                self.sig_provenance.emit(_provenance(model, request.generation))
                return done.value
            except LoadCancelled as stopped:
                return RunResult(
                    text="", finish_reason=FinishReason.CANCELLED, n_tokens=0, message=str(stopped)
                )
            if preparing:
                preparing = None
                self.sig_state.emit("Decoding…")
            self.sig_step.emit(record)

    def _prepared(self, steps: Iterator[StepRecord]) -> StepRecord:
        """The first step, after the backend's long setup; a setup that fails (an index past
        its time limit) is the backend's error for the banner, not a schema problem: the
        grammar compiled, and the live check never builds the index."""
        try:
            return next(steps)
        except GrammarError as e:
            raise BackendSetupError(e.message) from None


class RunController(QObject):
    """GUI-thread handle on the worker thread.

    Signals (all delivered in the GUI thread):
      sig_state(str)            what the worker is doing now, for the status bar
      sig_model_loaded(object, object)  ModelSettings and ModelInfo of the model a job
                                loaded or reused
      sig_step(object)          one StepRecord per generated token
      sig_provenance(object)    the Provenance of a run (or None), just before sig_finished
      sig_finished(object)      RunResult; ends a run that got as far as decoding
      sig_error(str, str)       (kind, message); ends a job that failed
      sig_run_ended()           after a run's sig_finished or sig_error; .running is False
      sig_suite_progress(object)  engine.suite.run.Progress after each sample of a suite
      sig_suite_finished(object)  engine.suite.run.SuiteRun; ends a suite run, even a
                                cancelled one, with the samples that finished
      sig_suite_error(str, str) (kind, message); ends a suite run that failed
      sig_suite_ended()         after a suite's sig_suite_finished or sig_suite_error
    """

    sig_state = Signal(str)
    sig_model_loaded = Signal(object, object)
    sig_step = Signal(object)
    sig_provenance = Signal(object)
    sig_finished = Signal(object)
    sig_error = Signal(str, str)
    sig_run_ended = Signal()
    sig_suite_progress = Signal(object)
    sig_suite_finished = Signal(object)
    sig_suite_error = Signal(str, str)
    sig_suite_ended = Signal()

    _request_run = Signal(object)
    _request_suite = Signal(object)
    _request_load = Signal(object)

    def __init__(self, cache: ModelCache | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._owns_cache = cache is None
        self._cache = cache if cache is not None else ModelCache()
        self._stop = threading.Event()
        self.pacer = Pacer()  # Pause / Step / Continue and the delay per step; see engine
        # The worker runs jobs one after another in request order, so a FIFO of job kinds
        # tells which job each sig_idle ends. A run may queue behind a model load.
        self._jobs: deque[str] = deque()
        self._thread = QThread()
        self._thread.setObjectName("maskscope-worker")
        self._worker = _Worker(self._cache, self._stop, self.pacer)
        self._worker.moveToThread(self._thread)
        self._thread.finished.connect(self._worker.deleteLater)
        self._thread.started.connect(_yield_to_the_gui, Qt.ConnectionType.DirectConnection)
        # Receivers live in different threads, so these connections are queued.
        self._request_run.connect(self._worker.run)
        self._request_load.connect(self._worker.load)
        self._request_suite.connect(self._worker.run_suite)
        self._worker.sig_idle.connect(self._on_idle)
        self._model_settings: ModelSettings | None = None  # of the last model a job loaded
        self._worker.sig_model_loaded.connect(self._note_model)
        names = ("sig_state", "sig_model_loaded", "sig_step", "sig_provenance", "sig_finished")
        suite = ("sig_suite_progress", "sig_suite_finished", "sig_suite_error")
        for name in (*names, "sig_error", *suite):
            getattr(self._worker, name).connect(getattr(self, name))
        self._thread.start()
        # Belt and braces: a QThread destroyed while running aborts the process, so the
        # thread also ends if the application quits without closing the window first.
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    @property
    def running(self) -> bool:
        """A run or a suite run is queued or in progress (model loads alone do not count):
        the model serves one of them at a time, and Stop ends whichever it is."""
        return "run" in self._jobs or "suite" in self._jobs

    @property
    def decoding_one_run(self) -> bool:
        """A single run (not a suite) is queued or in progress: the one Pause and Step act on."""
        return "run" in self._jobs

    def loaded_model(self, settings: ModelSettings) -> Model | None:
        """The model the worker holds for these settings, between jobs only (the worker
        thread owns it while one runs); None during a job, when it holds another, or when
        its file changed or went away since it was loaded (the next job loads it again)."""
        return None if self._jobs else self._cache.loaded(settings)

    def start(self, request: RunRequest) -> bool:
        """Queue a run; False (and nothing queued) while another run is in progress."""
        return self._queue("run", self._request_run, request)

    def start_suite(self, request: SuiteRequest) -> bool:
        """Queue a suite run; False (and nothing queued) while another run is in progress.
        stop() cancels it between two steps, keeping the samples that finished."""
        return self._queue("suite", self._request_suite, request)

    def load(self, settings: ModelSettings) -> bool:
        """Load (or reuse) a model ahead of the first run so the status bar can name it.
        Refused during a run, which loads the model it needs itself."""
        return self._queue("load", self._request_load, settings)

    def _queue(self, job: str, request: SignalInstance, argument: object) -> bool:
        """Hand the worker a job; False (and nothing queued) during a run or once the thread
        has ended. A Stop meant for the job before must not end this one."""
        if self.running or not self._thread.isRunning():
            return False
        self._stop.clear()
        self._jobs.append(job)
        request.emit(argument)
        return True

    def stop(self) -> None:
        self._stop.set()

    def shutdown(self) -> None:
        """Stop any run, wait for the thread to end, and free the model if this owns it."""
        self._stop.set()
        self._thread.quit()
        self._thread.wait()
        if self._owns_cache:
            self._cache.close()

    @Slot(object, object)
    def _note_model(self, settings: ModelSettings, _info: object) -> None:
        self._model_settings = settings

    @Slot()
    def _on_idle(self) -> None:
        job = self._jobs.popleft()
        if job == "run":
            self.sig_run_ended.emit()
        elif job == "suite":
            self.sig_suite_ended.emit()
        if not self._jobs and self._model_settings is not None:
            self._settle(self._model_settings)

    def _settle(self, settings: ModelSettings) -> None:
        """Once per model, between jobs: what lives is kept out of the collections a run
        makes (engine/heap.py). On this thread, the GUI's: the collection may free Qt
        objects, which only the GUI thread may do (one freed on the worker crashed)."""
        model = self._cache.loaded(settings)
        if model is not None:
            heap.settle_after_load(model)
