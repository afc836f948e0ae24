"""The step's top candidates: P before masking, valid or masked, P′ after, and the division.

Each probability cell carries a bar as long as its value, so the room sees at a glance the
mass the mask took away and how the kept tokens grew. Masked tokens are struck through, as
the grammar struck them.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from app.demo.step_explained import Row, fmt
from app.glyphs import shown_token
from app.plain_text import literal_html
from app.theme import chart_colors

BAR_ROLE = Qt.ItemDataRole.UserRole + 1  # a probability cell's value, 0 to 1
COLOR_ROLE = Qt.ItemDataRole.UserRole + 2
TOKEN, P_BEFORE, VALID, P_AFTER, DIVISION = range(5)
HEADERS = ("Token", "P before", "Mask", "P′ after", "P / ΣP = P′")
MIN_COLUMN_PX = 32  # a column narrower than this shows nothing but an ellipsis
PLAIN_HEADERS = ("Token", "model's preference", "rules", "after the rules", "how it is rescaled")


class BarDelegate(QStyledItemDelegate):
    """Paints a faint bar under a probability, as wide as the probability."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        value = index.data(BAR_ROLE)
        color = index.data(COLOR_ROLE)
        if isinstance(value, float) and isinstance(color, QColor):
            bar = QColor(color)
            bar.setAlphaF(0.35)
            r = option.rect.adjusted(2, 3, -2, -3)
            painter.fillRect(QRect(r.left(), r.top(), round(r.width() * value), r.height()), bar)
        super().paint(painter, option, index)


class CandidatesTable(QTableWidget):
    """Emits sig_row_clicked(row) with the Row a click landed on."""

    sig_row_clicked = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(HEADERS), parent)
        self._set_headers(HEADERS)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.setMouseTracking(True)
        self.setWordWrap(False)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        # The columns share the table's width and elide what does not fit (each cell's
        # tooltip holds its whole text): a narrow pane never scrolls sideways (issue 27).
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(MIN_COLUMN_PX)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)
        delegate = BarDelegate(self)
        self.setItemDelegateForColumn(P_BEFORE, delegate)
        self.setItemDelegateForColumn(P_AFTER, delegate)
        self.rows: tuple[Row, ...] = ()
        self._plain = False
        self.cellClicked.connect(lambda r, _c: self.sig_row_clicked.emit(self.rows[r]))

    def _set_headers(self, headers: Sequence[str]) -> None:
        self.setHorizontalHeaderLabels(list(headers))
        for col, text in enumerate(headers):
            self.horizontalHeaderItem(col).setToolTip(text)  # the whole name, where elided

    def set_plain_language(self, plain: bool) -> None:
        self._set_headers(PLAIN_HEADERS if plain else HEADERS)
        self._plain = plain
        self.show_rows(self.rows)

    def show_rows(self, rows: Sequence[Row]) -> None:
        self.rows = tuple(rows)
        self.setRowCount(len(self.rows))
        colors = chart_colors()
        plain = self._plain
        for i, row in enumerate(self.rows):
            for col, item in enumerate(self._items(row, colors, plain)):
                self.setItem(i, col, item)
        self._fit()

    def fitted_height(self) -> int:
        """All rows without a scroll bar, so the panel need not scroll twice."""
        self.resizeRowsToContents()
        rows = sum(self.rowHeight(i) for i in range(self.rowCount()))
        header = self.horizontalHeader().sizeHint().height()
        return rows + header + 2 * self.frameWidth() + 2

    def _fit(self) -> None:
        self.setFixedHeight(self.fitted_height())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # Presentation mode enlarges the font through a stylesheet: the rows grow with it.
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit()

    def _items(self, row: Row, colors, plain: bool) -> list[QTableWidgetItem]:
        c = row.candidate
        text = shown_token(c.text, c.piece)  # code points where no font has a glyph
        token = QTableWidgetItem(f"{text}{'   ← drawn' if row.chosen else ''}")
        before = _number(fmt(c.p_raw), c.p_raw, colors.raw_valid if c.valid else colors.raw_masked)
        if c.valid:
            mark = QTableWidgetItem("the rules allowed" if plain else "✓ valid")
            mark.setForeground(colors.after)
            after = _number(fmt(c.p_masked), c.p_masked, colors.after)
            division = QTableWidgetItem(row.division.written() if row.division else "")
            tip = f"Click: what if the run took `{text}` here? It goes on from this step."
        else:
            mark = QTableWidgetItem("the rules forbid" if plain else "✗ masked")
            mark.setForeground(colors.raw_masked)
            after = _number("0", 0.0, colors.after)
            division = QTableWidgetItem("")
            tip = f"Click: why does the grammar forbid `{text}` here?"
            font = token.font()
            font.setStrikeOut(True)
            token.setFont(font)
            token.setForeground(colors.raw_masked)
        items = [token, before, mark, after, division]
        for item in items:
            # The cell's whole text first (an elided cell reads there), then what a click does.
            whole = f"{item.text()}\n" if item.text() else ""
            item.setToolTip(literal_html(f"{whole}{tip}"))  # token texts such as <b> are words
        if row.chosen:
            tint = QColor(colors.current_step)
            tint.setAlphaF(0.18)
            for col, item in enumerate(items):
                font = item.font()
                font.setWeight(QFont.Weight.Bold)
                item.setFont(font)
                if col not in (P_BEFORE, P_AFTER):  # the bars keep their own colours
                    item.setBackground(tint)
        return items


def _number(text: str, value: float, color: QColor) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    item.setData(BAR_ROLE, float(min(1.0, max(0.0, value))))
    item.setData(COLOR_ROLE, QColor(color))
    return item
