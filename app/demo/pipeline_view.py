"""One step's pipeline as a row of boxes: logits → ÷ T → softmax P → mask → renormalise →
sample, each holding the sampled token's number at that stage.

Fonts are left to the stylesheet (presentation mode enlarges them); only weights and
colours are set here, and the colours follow the light or dark theme.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.demo.step_explained import NO_NUMBER, Stage
from app.theme import chart_colors, is_dark

N_STAGES = 6
# Boxes a row: one row, or two, or three in a narrow pane, or a column in a pane too narrow
# for two boxes side by side (presentation mode's large type in a third of 1280 px).
ROW_LENGTHS = (N_STAGES, 3, 2, 1)


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
    """Six boxes in a row, or in two rows where the row would not fit: a narrow pane then
    neither scrolls sideways nor cuts the last boxes off (issue 27, item 3)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.boxes = [StageBox(self) for _ in range(N_STAGES)]
        self.arrows: list[QLabel] = []
        for _ in range(N_STAGES - 1):
            arrow = QLabel("→", self)
            arrow.setObjectName("stageArrow")
            self.arrows.append(arrow)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self.columns = 0
        self._place(N_STAGES)
        self._stages: tuple[Stage, ...] = ()
        self._plain = False
        self.apply_theme()

    def _place(self, columns: int) -> None:
        """Boxes `columns` to a row, an arrow between each two in a row."""
        if columns == self.columns:
            return
        self.columns = columns
        for widget in (*self.boxes, *self.arrows):
            self._grid.removeWidget(widget)
        for c in range(2 * N_STAGES):
            self._grid.setColumnStretch(c, 0)
        for i, box in enumerate(self.boxes):
            row, col = divmod(i, columns)
            self._grid.addWidget(box, row, 2 * col)
            self._grid.setColumnStretch(2 * col, 1)
            if i:  # the arrow before a row's first box has no place: hidden
                arrow = self.arrows[i - 1]
                arrow.setVisible(col > 0)
                if col:
                    self._grid.addWidget(arrow, row, 2 * col - 1)

    def _row_width(self, columns: int) -> int:
        """The width `columns` boxes a row need: each grid column as wide as its widest box."""
        widths = [b.sizeHint().width() for b in self.boxes]
        boxes = sum(max(widths[c::columns]) for c in range(columns))
        arrows = (columns - 1) * (self.arrows[0].sizeHint().width() + 2 * self._grid.spacing())
        return boxes + arrows

    def minimumSizeHint(self) -> QSize:
        # The narrowest arrangement's width: the pane may be that narrow; resizeEvent reflows.
        width = self._row_width(ROW_LENGTHS[-1])
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._reflow()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # Presentation mode's larger font widens every box: the row may no longer fit.
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._reflow()

    def _reflow(self) -> None:
        fits = (n for n in ROW_LENGTHS if self._row_width(n) <= self.width())
        self._place(next(fits, ROW_LENGTHS[-1]))

    def show_stages(self, stages: Sequence[Stage]) -> None:
        self._stages = tuple(stages)
        for box, stage in zip(self.boxes, self._stages, strict=True):
            box.show_stage(stage, self._plain)
        self._reflow()  # plain words are longer than the stage names

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
