"""Runs that demonstration mode starts on the window's behalf: "what if" branches and the
unconstrained pass of a constrained-against-unconstrained comparison.

Both go through the window's own start_run (the Host API, app/host.py), so they are
drawn, paused and stopped like any run. A click while a run is going stops it first, and
acts on what it made once it has ended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from engine.records import FinishReason
from engine.runs.branches import BranchSet, branch_name
from engine.runs.saved import SavedRun, run_settings

if TYPE_CHECKING:
    from app.host import Host

WITHOUT = "the same prompt and seed without the grammar"


def token_text(run: SavedRun, index: int, token_id: int) -> str:
    """The display form of a candidate of step `index`."""
    record = run.records[index]
    candidates = (*record.top_raw, *record.top_masked)
    return next((c.text for c in candidates if c.id == token_id), str(token_id))


class Branching(QObject):
    sig_branch = Signal(object)  # Branch: a what-if run ended and was kept
    sig_original = Signal(object)  # SavedRun: a run of the user's own ended; branches reset
    sig_pair = Signal(object, object)  # SavedRun, SavedRun: constrained, unconstrained
    sig_pair_state = Signal(str)  # which pass of the pair is running, for its view
    sig_pair_first = Signal(object)  # SavedRun: the pair's run with the grammar, as it ends
    # The pair's run without the grammar is about to start: it runs at full speed, since
    # the demonstration is the run with the grammar (0.5 s a token made it 2 minutes).
    sig_unpaced_run = Signal()

    def __init__(self, host: Host) -> None:
        super().__init__(host.widget())
        self.host = host
        self.branches = BranchSet()
        self._purpose: Callable[[SavedRun], None] | None = None  # what the run is for
        self._then: Callable[[], None] | None = None  # starts once the run has ended
        self._user_run = False  # the running run is the user's own Run
        host.session.sig_user_run.connect(self._user_run_starting)
        host.session.sig_ended.connect(self._run_ended)

    # --- what if ---------------------------------------------------------------------------
    def force(self, index: int, token_id: int) -> bool:
        """Continue the shown run from step `index` with `token_id` instead of its own."""
        if self.host.controller.running:
            self._purpose = None
            self._then = lambda: self._fork(index, token_id)
            self.host.stop()
            return True
        return self._fork(index, token_id)

    def _fork(self, index: int, token_id: int) -> bool:
        origin = self.host.session.run()
        if origin is None or not 0 <= index < len(origin.records):
            return False
        if self.branches.original is None:
            self._set_original(origin)
        text = token_text(origin, index, token_id)
        forced = (*(r.token_id for r in origin.records[:index]), token_id)
        generation = dataclasses.replace(run_settings(origin), constrained=True)
        name = branch_name(len(self.branches) + 1, index, text)
        if not self.host.start_run(
            origin.schema_text, origin.prompt, generation, forced, subject=name
        ):
            return False
        self._purpose = lambda run: self._keep(index, token_id, text, run)
        self.host.show_status(f"What if: continuing from step {index + 1} with {text!r}…", 0)
        return True

    def _keep(self, index: int, token_id: int, text: str, run: SavedRun) -> None:
        branch = self.branches.new_branch(index, token_id, text, run)
        self.branches.add(branch)
        self.sig_branch.emit(branch)

    # --- constrained against unconstrained -------------------------------------------------
    def compare_unconstrained(self) -> bool:
        """Run the editors' schema and prompt with the grammar, then the same prompt and
        seed with no mask at all."""
        if self.host.controller.running or not self.host.run():
            return False
        self.sig_pair_state.emit("Running with the grammar…")
        self._purpose = lambda constrained: self._then_unconstrained(constrained)
        return True

    def _then_unconstrained(self, constrained: SavedRun) -> None:
        if constrained.result.finish_reason in (FinishReason.CANCELLED, FinishReason.ERROR):
            self.sig_pair_state.emit("")  # stopped or failed: there is nothing to compare
            return

        def start() -> None:
            generation = dataclasses.replace(run_settings(constrained), constrained=False)
            self.sig_unpaced_run.emit()
            if self.host.start_run(
                constrained.schema_text, constrained.prompt, generation, subject=WITHOUT
            ):
                self.sig_pair_state.emit("Running the same prompt and seed without the grammar…")
                self.sig_pair_first.emit(constrained)  # shown while its partner runs
                self._purpose = lambda free: self._paired(constrained, free)

        self._then = start

    def _paired(self, constrained: SavedRun, free: SavedRun) -> None:
        # The main views go back to the grammar's run.
        self.host.show_run(constrained, "your run, with the grammar")
        self.sig_pair.emit(constrained, free)

    # --- plumbing --------------------------------------------------------------------------
    def _set_original(self, run: SavedRun) -> None:
        self.branches.set_original(run)
        self.sig_original.emit(run)

    def _user_run_starting(self) -> None:
        self._purpose = None
        self._user_run = True

    def _run_ended(self) -> None:
        purpose, self._purpose = self._purpose, None
        user_run, self._user_run = self._user_run, False
        run = self.host.session.run()
        if run is not None and purpose is not None:
            purpose(run)
        elif run is not None and user_run and run.result.finish_reason is not FinishReason.ERROR:
            self._set_original(run)
        then, self._then = self._then, None
        if then is not None:
            then()
