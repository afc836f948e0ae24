"""Status bar: what the worker is doing, the model, where it runs, and decoding speed."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from engine.model import ModelInfo


class StatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_label = QLabel("model: not loaded", self)
        self.model_label.setObjectName("statusModel")
        self.gpu_label = QLabel("", self)
        self.gpu_label.setObjectName("statusGpu")
        self.speed_label = QLabel("", self)
        self.speed_label.setObjectName("statusSpeed")
        self.speed_label.setMinimumWidth(110)
        for label in (self.model_label, self.gpu_label, self.speed_label):
            self.addPermanentWidget(label)
        self._run_started = 0.0
        self._first_step_at = 0.0
        self._steps = 0

    def set_model(self, info: ModelInfo) -> None:
        self.model_label.setText(f"model: {info.name}")
        self.model_label.setToolTip(
            f"{info.path}\n{info.n_vocab} tokens in vocabulary, {info.n_layer} layers, "
            f"{info.n_ctx} tokens of context, {info.n_threads} threads"
        )
        self.gpu_label.setText(info.offload_label)

    def run_started(self) -> None:
        self._steps = 0
        self._first_step_at = 0.0
        self.speed_label.setText("")

    def step(self) -> None:
        """Live speed, counted from the first token so prompt processing is left out."""
        now = time.perf_counter()
        if self._steps == 0:
            self._first_step_at = now
        self._steps += 1
        elapsed = now - self._first_step_at
        if elapsed > 0.25:
            self.speed_label.setText(f"{(self._steps - 1) / elapsed:.1f} tok/s")

    def set_speed(self, tokens_per_s: float) -> None:
        self.speed_label.setText(f"{tokens_per_s:.1f} tok/s" if tokens_per_s else "")
