"""What lets the Suite pane fit a narrow dock (issue 27): buttons as narrow as their text,
rows of them that wrap, and a splitter whose folded part asks for no room.

Fusion gives every push button with text a width of at least 80 px, and Qt's layouts never
make a QPushButton narrower than that: the cases' row of five short buttons ("Undo",
"Redo") needed 424 px and the pane 719 px, where the default layout on a 1280x800 screen
gives its dock 340 px.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStyle,
    QStyleOptionButton,
    QWidget,
)

_WIDE = 1000  # a text this wide is past any minimum width a style gives a button
SPACING = 6


class CompactButton(QPushButton):
    """A push button that asks for the style's width but gives way down to its whole text
    and the style's padding around it."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        policy = self.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Preferred)  # may shrink to the hint below
        self.setSizePolicy(policy)

    def minimumSizeHint(self) -> QSize:
        hint = self.sizeHint()
        option = QStyleOptionButton()
        self.initStyleOption(option)
        # The style's padding around a text, measured where its minimum width plays no part.
        padded = self.style().sizeFromContents(
            QStyle.ContentsType.CT_PushButton, option, QSize(_WIDE, hint.height()), self
        )
        text = self.fontMetrics().size(Qt.TextFlag.TextShowMnemonic, self.text()).width()
        icon = self.iconSize().width() if not self.icon().isNull() else 0
        return QSize(min(text + icon + padded.width() - _WIDE, hint.width()), hint.height())


class FlowRow(QWidget):
    """Widgets side by side, each as wide as it asks while they fit, narrower (down to its
    minimum) when they do not, and wrapped onto further rows when even that is too wide.
    Widgets added after add_stretch stand at the right end while the row is one row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._widgets: list[QWidget] = []
        self._right_from: int | None = None  # the index of the first right-hand widget
        self._height = 0  # of the rows as last placed
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def add_widget(self, widget: QWidget) -> None:
        self.insert_widget(len(self._widgets), widget)

    def insert_widget(self, index: int, widget: QWidget) -> None:
        hidden = widget.isHidden()
        widget.setParent(self)
        widget.setHidden(hidden)
        self._widgets.insert(index, widget)
        if self._right_from is not None and index < self._right_from:
            self._right_from += 1
        self._changed()

    def add_stretch(self) -> None:
        self._right_from = len(self._widgets)

    # --- size ------------------------------------------------------------------------------
    def _shown(self) -> list[QWidget]:
        return [w for w in self._widgets if not w.isHidden()]

    def sizeHint(self) -> QSize:
        shown = self._shown()
        width = sum(w.sizeHint().width() for w in shown) + SPACING * max(len(shown) - 1, 0)
        return QSize(width, self._height or self._row_height(shown))

    def minimumSizeHint(self) -> QSize:
        shown = self._shown()
        width = max((_least(w) for w in shown), default=0)
        return QSize(width, self._height or self._row_height(shown))

    @staticmethod
    def _row_height(widgets: list[QWidget]) -> int:
        return max((w.sizeHint().height() for w in widgets), default=0)

    # --- placing ---------------------------------------------------------------------------
    def _rows(self, width: int) -> list[list[tuple[QWidget, int]]]:
        """The widgets in rows, each with its width, for a row `width` wide."""
        shown = self._shown()
        if not shown:
            return []
        gaps = SPACING * (len(shown) - 1)
        hints = [w.sizeHint().width() for w in shown]
        least = [_least(w) for w in shown]
        if sum(hints) + gaps <= width:
            return [list(zip(shown, hints, strict=True))]
        if sum(least) + gaps <= width:  # one row: each gives way in proportion to its slack
            slack = [h - m for h, m in zip(hints, least, strict=True)]
            share = (width - gaps - sum(least)) / max(sum(slack), 1)
            widths = [m + int(s * share) for m, s in zip(least, slack, strict=True)]
            return [list(zip(shown, widths, strict=True))]
        rows: list[list[tuple[QWidget, int]]] = [[]]
        used = 0
        for widget, w in zip(shown, least, strict=True):
            if rows[-1] and used + SPACING + w > width:
                rows.append([])
                used = 0
            used += (SPACING if rows[-1] else 0) + w
            rows[-1].append((widget, w))
        return rows

    def _place(self) -> None:
        rows = self._rows(self.width())
        right_from = self._right_from if len(rows) == 1 else None
        right = [w for w in self._widgets[right_from:] if not w.isHidden()] if right_from else []
        y = 0
        for row in rows:
            height = self._row_height([w for w, _ in row])
            x = 0
            # Those at the right end, while there is one row: placed from the right edge.
            tail = sum(w for widget, w in row if widget in right) + SPACING * max(len(right) - 1, 0)
            for widget, w in row:
                if widget is (right[0] if right else None):
                    x = max(x, self.width() - tail)
                widget.setGeometry(QRect(x, y, w, height))
                x += w + SPACING
            y += height + SPACING
        height = max(y - SPACING, 0)
        if height != self._height:
            self._height = height
            self.updateGeometry()  # the rows' count changed: the pane makes room

    def _changed(self) -> None:
        self._place()
        self.updateGeometry()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place()

    def event(self, event: QEvent) -> bool:
        # A widget shown, hidden or resized its hint (a font change): placed again.
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.FontChange):
            self._changed()
        return super().event(event)


class WrappingLabel(QLabel):
    """A word-wrapped label whose minimum height holds all its lines at its width.

    Qt's layouts size a row (and a part of a splitter) by minimum heights, which leave out
    height-for-width: a second line of the run bar's message took its height from the
    results below it, and the verdict's last line was cut off (seen at 1280x800)."""

    def __init__(
        self, text: str = "", parent: QWidget | None = None, hide_empty: bool = False
    ) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self._hide_empty = hide_empty  # a message line: no blank row while it says nothing
        self.setHidden(hide_empty and not text)

    def setText(self, text: str) -> None:
        super().setText(text)
        if self._hide_empty:
            self.setHidden(not text)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        if not self.text():
            return hint
        return QSize(hint.width(), max(hint.height(), self.heightForWidth(self.width())))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():  # its lines wrap anew
            self.updateGeometry()


def _least(widget: QWidget) -> int:
    """The narrowest a layout would make the widget."""
    return widget.minimumWidth() or widget.minimumSizeHint().width()


class FoldingSplitter(QSplitter):
    """A vertical splitter whose minimum height leaves out a part folded to nothing.

    QSplitter counts every part's minimum height, folded or not, so in a scrolled dock the
    pane stayed as tall as the folded part and the rest together: the dock scrolled around
    a table stretched over empty room. A folded part still comes back by its handle."""

    def __init__(self, orientation: Qt.Orientation, parent: QWidget | None = None) -> None:
        super().__init__(orientation, parent)
        # A part folded or unfolded by its handle changes the minimum: the layout asks anew.
        self.splitterMoved.connect(lambda *_: self.updateGeometry())

    def setSizes(self, sizes: list[int]) -> None:
        super().setSizes(sizes)
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        for index, size in enumerate(self.sizes()):
            widget = self.widget(index)
            if size == 0 and not widget.isHidden():
                least = widget.minimumHeight() or widget.minimumSizeHint().height()
                hint.setHeight(max(hint.height() - least, 0))
        return hint
