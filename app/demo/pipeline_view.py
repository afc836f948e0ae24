"""One step's pipeline as a row of boxes: logits → ÷ T → softmax P → mask → renormalise →
sample, each holding the sampled token's number at that stage.

Fonts are left to the stylesheet (presentation mode enlarges them); only weights and
colours are set here, and the colours follow the light or dark theme.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.demo.step_explained import NO_NUMBER, Stage
from app.theme import chart_colors, is_dark

N_STAGES = 6


class StageBox(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stageBox")
        self.title = QLabel(self)
        self.title.setObjectName("stageTitle")
        self.value = QLabel(self)
        self.value.setObjectName("stageValue")
        for label in (self.title, self.value):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.value)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def show_stage(self, stage: Stage, plain: bool) -> None:
        self.title.setText(stage.plain if plain else stage.name)
        self.value.setText(stage.shown(plain))
        missing = " (not in this saved run)" if stage.value == NO_NUMBER else ""
        self.setToolTip(f"{stage.tip}{missing}")
        self.setProperty("tone", stage.tone)
        self.style().unpolish(self)
        self.style().polish(self)


class PipelineView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.boxes = [StageBox(self) for _ in range(N_STAGES)]
        self.arrows: list[QLabel] = []
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        for i, box in enumerate(self.boxes):
            if i:
                arrow = QLabel("→", self)
                arrow.setObjectName("stageArrow")
                self.arrows.append(arrow)
                layout.addWidget(arrow)
            layout.addWidget(box, 1)
        self._stages: tuple[Stage, ...] = ()
        self._plain = False
        self.apply_theme()

    def show_stages(self, stages: Sequence[Stage]) -> None:
        self._stages = tuple(stages)
        for box, stage in zip(self.boxes, self._stages, strict=True):
            box.show_stage(stage, self._plain)

    def values(self) -> list[str]:
        return [box.value.text() for box in self.boxes]

    def titles(self) -> list[str]:
        return [box.title.text() for box in self.boxes]

    def set_plain_language(self, plain: bool) -> None:
        self._plain = plain
        if self._stages:
            self.show_stages(self._stages)

    def apply_theme(self) -> None:
        c = chart_colors()
        dark = is_dark()
        box = "#2a2c31" if dark else "#f3f5f8"
        edge = "#44474f" if dark else "#cfd5de"
        muted = "#9aa0aa" if dark else "#5f6670"

        def tint(color, alpha: float) -> str:
            return f"rgba({color.red()}, {color.green()}, {color.blue()}, {alpha})"

        self.setStyleSheet(
            f"""
            QFrame#stageBox {{ background: {box}; border: 1px solid {edge}; border-radius: 6px; }}
            QFrame#stageBox[tone="ok"] {{ border-color: {c.after.name()};
                background: {tint(c.after, 0.14)}; }}
            QFrame#stageBox[tone="bad"] {{ border-color: {c.raw_masked.name()};
                background: {tint(c.raw_masked, 0.14)}; }}
            QFrame#stageBox[tone="chosen"] {{ border: 2px solid {c.current_step.name()};
                background: {tint(c.current_step, 0.14)}; }}
            QLabel#stageTitle {{ color: {muted}; background: transparent; border: none; }}
            QLabel#stageValue {{ font-weight: bold; background: transparent; border: none; }}
            QLabel#stageArrow {{ color: {muted}; font-weight: bold; }}
            """
        )
