"""Status bar: what the worker is doing, the model, where it runs, and decoding speed."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

from app.plain_text import literal_html, plain_label
from engine.model.llama import ModelInfo


class StatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # The run the chart and output show: yours, a branch, a replay, a suite sample.
        self.subject_label = plain_label(QLabel("", self))
        self.subject_label.setObjectName("statusSubject")
        self.model_label = plain_label(QLabel("model: not loaded", self))  # a file's name
        self.model_label.setObjectName("statusModel")
        self.gpu_label = QLabel("", self)
        self.gpu_label.setObjectName("statusGpu")
        self.speed_label = QLabel("", self)
        self.speed_label.setObjectName("statusSpeed")
        self.speed_label.setMinimumWidth(110)
        # Tokens so far against max_tokens; busy (no range) while the model loads.
        self.progress = QProgressBar(self)
        self.progress.setObjectName("statusProgress")
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(True)
        self.progress.setToolTip("Tokens generated so far, out of Max tokens")
        self.progress.hide()
        self.addPermanentWidget(self.progress)
        for label in (self.subject_label, self.model_label, self.gpu_label, self.speed_label):
            self.addPermanentWidget(label)
        self._max_tokens = 0
        self._first_step_at = 0.0
        self._steps = 0
        self._error = ""  # the error message shown, cleared with its cause

    def set_subject(self, text: str) -> None:
        self.subject_label.setText(f"showing: {text}" if text else "")
        self.subject_label.setToolTip("The run the chart and the output show" if text else "")

    def show_error(self, text: str) -> None:
        """A message that stays until clear_error(), not until a timeout."""
        self._error = text
        self.showMessage(text, 0)

    def clear_error(self) -> None:
        """The error's cause is gone: take its message away, and no other."""
        if self._error and self.currentMessage() == self._error:
            self.clearMessage()
        self._error = ""

    def set_model(self, info: ModelInfo) -> None:
        self.model_label.setText(f"model: {info.name}")
        self.model_label.setToolTip(
            literal_html(
                f"{info.path}\n{info.n_vocab} tokens in vocabulary, {info.n_layer} layers, "
                f"{info.n_ctx} tokens of context, {info.n_threads} threads"
            )
        )
        # Short in the bar, so that a narrow window keeps room for the message; whole on hover.
        self.gpu_label.setText(info.offload_label.split(" (")[0])
        self.gpu_label.setToolTip(info.offload_label)

    def set_model_wanted(self, name: str) -> None:
        """The Model field asks for `name`: the bar says so until it has loaded."""
        self.model_label.setText(f"model: {name} (loading…)")
        self.model_label.setToolTip("")

    def set_model_failed(self, name: str, reason: str) -> None:
        """The model the field asks for did not load: the bar must not name the one before."""
        self.model_label.setText(f"model: {name} (not loaded)")
        self.model_label.setToolTip(literal_html(reason))
        self.gpu_label.setText("")

    def run_started(self, max_tokens: int) -> None:
        self._steps = 0
        self._first_step_at = 0.0
        self.speed_label.setText("")
        self.progress.setRange(0, 0)  # busy until the first token: compile, load, prompt
        self.progress.setFormat("starting…")
        self._max_tokens = max_tokens
        self.progress.show()

    def run_ended(self) -> None:
        self.progress.hide()

    def step(self) -> None:
        """Live speed, counted from the first token so prompt processing is left out."""
        now = time.perf_counter()
        if self._steps == 0:
            self._first_step_at = now
        self._steps += 1
        if self._steps == 1:
            self.progress.setRange(0, self._max_tokens)
            self.progress.setFormat("%v / %m tokens")
        self.progress.setValue(self._steps)
        elapsed = now - self._first_step_at
        if elapsed > 0.25:
            self.speed_label.setText(f"{(self._steps - 1) / elapsed:.1f} tok/s")

    def set_speed(self, tokens_per_s: float) -> None:
        self.speed_label.setText(f"{tokens_per_s:.1f} tok/s" if tokens_per_s else "")
