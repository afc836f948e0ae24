"""Chart export: the step chart (bars and strip) as a PNG and as an SVG, files that open
and show the plots; bad names and folders say so."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QGraphicsItem
from step_chart_records import make_record, shown_chart

from app.chart.export import MARGIN_PX, PART_GAP_PX, PNG_SCALE, ChartExportError, export_chart

SVG = "{http://www.w3.org/2000/svg}"


def chart_with_run(qtbot):
    chart = shown_chart(qtbot)
    for step in range(12):
        chart.push(make_record(step, ("USD", "EUR", "✗Invoice"), valid_mass=0.3 + step / 20))
    chart.redraw()
    chart.mass.set_annotate_dips(True)
    return chart


def svg_texts(path: Path) -> str:
    root = ET.parse(path).getroot()
    return " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))


def test_png_holds_the_bars_and_the_strip_at_twice_the_size(qtbot, tmp_path: Path) -> None:
    chart = chart_with_run(qtbot)
    path = tmp_path / "chart.png"
    export_chart(chart, path)
    image = QImage(str(path))
    assert not image.isNull()
    parts = chart.export_parts()
    width = max(p.width() for p in parts) + 2 * MARGIN_PX
    height = sum(p.height() for p in parts) + PART_GAP_PX * (len(parts) - 1) + 2 * MARGIN_PX
    assert (image.width(), image.height()) == (width * PNG_SCALE, height * PNG_SCALE)
    # The blue "before masking" bar of the top row is in the picture.
    assert _has_colour(image, "#3b7dd8")


def test_svg_is_vector_and_shows_both_plots(qtbot, tmp_path: Path) -> None:
    chart = chart_with_run(qtbot)
    path = tmp_path / "chart.svg"
    export_chart(chart, path)
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    texts = svg_texts(path)
    for words in ("Candidate tokens at this step", "Valid mass and entropy", "USD", "step"):
        assert words in texts
    assert "“USD”" in texts  # a dip's label
    drawn = [e for e in root.iter() if e.tag in (f"{SVG}path", f"{SVG}polyline", f"{SVG}rect")]
    assert len(drawn) > 20
    assert not list(root.iter(f"{SVG}image"))  # no bitmaps: caches were off
    assert "Sans Serif" not in path.read_text(encoding="utf-8")  # fonts named as resolved


def test_export_leaves_the_plots_caches_as_they_were(qtbot, tmp_path: Path) -> None:
    chart = chart_with_run(qtbot)
    axis = chart.mass_plot.getAxis("left")
    export_chart(chart, tmp_path / "chart.svg")
    assert axis.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert not chart.mass.points._exportOpts


def test_a_single_plot_or_its_plot_item_exports_alone(qtbot, tmp_path: Path) -> None:
    chart = chart_with_run(qtbot)
    export_chart(chart.mass, tmp_path / "mass.png")
    assert (
        QImage(str(tmp_path / "mass.png")).width()
        == (chart.mass.width() + 2 * MARGIN_PX) * PNG_SCALE
    )
    export_chart(chart.mass_plot.getPlotItem(), tmp_path / "mass.svg")
    assert "step" in svg_texts(tmp_path / "mass.svg")
    assert "Candidate tokens" not in svg_texts(tmp_path / "mass.svg")


def test_an_unknown_format_or_folder_is_a_readable_error(qtbot, tmp_path: Path) -> None:
    chart = chart_with_run(qtbot)
    with pytest.raises(ChartExportError, match=r"\.png or \.svg"):
        export_chart(chart, tmp_path / "chart.jpg")
    for name in ("chart.png", "chart.svg"):
        with pytest.raises(ChartExportError, match="cannot write"):
            export_chart(chart, tmp_path / "missing" / name)


def _has_colour(image: QImage, name: str) -> bool:
    return any(
        image.pixelColor(x, y).name() == name
        for x in range(0, image.width(), 3)
        for y in range(0, image.height() // 2, 3)
    )
