"""The window's panes are docks: listed in View, hidden and shown, reset, remembered, and
usable in a small window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.shell.panes import PaneHost
from app.shell.window_size import default_size
from tests.app.shell_window import open_window

CORE = ("schema", "prompt", "chart", "settings", "output")
LEFT, RIGHT = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea


def _view_texts(window: MainWindow) -> list[str]:
    return [a.text() for a in window.view_menu.actions()]


def test_every_pane_is_a_dock_listed_in_view(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    for name in CORE:
        dock = window.panes.dock(name)
        assert isinstance(dock, QDockWidget) and dock.isVisible()
        assert dock.toggleViewAction() in window.view_menu.actions()
    assert window.panes.dock("schema").widget() is window.schema_editor
    assert {"JSON Schema", "Prompt", "Chart", "Settings", "Output", "Reset layout"} <= {
        t.replace("&", "") for t in _view_texts(window)
    }


def test_view_menu_hides_a_pane_and_reset_brings_it_back(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    chart = window.panes.dock("chart")
    chart.toggleViewAction().trigger()
    assert not chart.isVisible()
    chart.setFloating(True)
    window.panes.reset_layout()
    assert chart.isVisible() and not chart.isFloating()
    assert window.panes.dockWidgetArea(chart) == RIGHT


def test_added_panes_are_tabbed_beside_their_neighbours(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    notes = window.add_pane("notes", "Notes", QLabel("p"), LEFT)
    log = window.add_pane("log", "Log", QLabel("c"), RIGHT)
    outline = window.add_pane("outline", "Outline", QLabel("g"), LEFT, tab_with="schema")
    host = window.panes
    qtbot.wait(10)  # Qt lists a new tab once the event loop has run
    assert notes in host.tabifiedDockWidgets(host.dock("prompt"))
    assert log in host.tabifiedDockWidgets(host.dock("output"))
    assert outline in host.tabifiedDockWidgets(host.dock("schema"))
    assert notes.toggleViewAction() in window.view_menu.actions()
    # Joining a tab group does not cover the pane already there.
    assert not host.dock("prompt").visibleRegion().isEmpty()
    host.reset_layout()  # the extra panes keep their default places
    qtbot.wait(10)
    qtbot.wait(10)
    assert notes in host.tabifiedDockWidgets(host.dock("prompt"))


def test_layout_is_remembered(qtbot, store: SettingsStore, monkeypatch) -> None:
    store.set_geometry("main_splitter", b"old")  # from before the panes were docks
    window = open_window(qtbot, store, monkeypatch)
    window.panes.dock("settings").toggleViewAction().trigger()
    window.close()
    assert store.geometry("main_splitter") is None  # dropped, not left to rot
    assert store.geometry("panes") is not None
    again = open_window(qtbot, store, monkeypatch)
    assert not again.panes.dock("settings").isVisible()
    assert again.panes.dock("output").isVisible()


def test_a_pane_added_after_restore_takes_its_saved_place(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    notes = window.add_pane("notes", "Notes", QLabel("p"), LEFT)
    window.panes.addDockWidget(RIGHT, notes)  # the user moved it
    window.close()
    again = open_window(qtbot, store, monkeypatch)
    moved = again.add_pane("notes", "Notes", QLabel("p"), LEFT)
    assert again.panes.dockWidgetArea(moved) == RIGHT


def test_a_layout_saved_before_a_pane_existed_is_dropped(qtbot, store, monkeypatch) -> None:
    """Restored, it would leave the new pane heaped on the others (seen with a layout kept
    from before the demonstration and suite panes)."""
    window = open_window(qtbot, store, monkeypatch)
    window.panes.dock("settings").toggleViewAction().trigger()
    older = window.panes.save_layout()
    window.add_pane("notes", "Notes", QLabel("p"), LEFT)  # a pane the saved layout lacks
    assert not window.panes.restore_layout(older)
    assert window.panes.dock("settings").isVisible()  # the default layout instead
    window.panes.dock("settings").toggleViewAction().trigger()
    assert window.panes.restore_layout(window.panes.save_layout())
    assert not window.panes.dock("settings").isVisible()


def test_small_window_keeps_every_part_usable(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.resize(800, 550)
    window.panes.reset_layout()
    qtbot.wait(50)  # the docks settle after the resize
    editor = window.schema_editor.editor
    assert editor.height() >= 120 and editor.width() >= 200
    assert window.prompt_pane.editor.height() >= 80
    assert window.step_chart.height() >= 250
    # Settings, output and chart share the right column as tabs instead of squeezing it.
    host = window.panes
    assert host.dock("settings") in host.tabifiedDockWidgets(host.dock("chart"))
    assert window.settings_scroll.widget() is window.settings_panel


def test_wide_window_has_three_columns(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.resize(1500, 900)
    window.panes.reset_layout()
    qtbot.wait(50)
    schema, chart, settings = (window.panes.dock(n) for n in ("schema", "chart", "settings"))
    assert schema.geometry().right() < chart.geometry().left()
    assert chart.geometry().right() < settings.geometry().left()
    assert window.settings_panel.height() >= window.settings_panel.sizeHint().height() - 4


def test_default_size_fits_the_screen() -> None:
    assert default_size(QRect(0, 0, 2560, 1440)) == QSize(1500, 900)
    small = default_size(QRect(0, 0, 1024, 600))
    assert small.width() <= 1024 and small.height() <= 600


def _host_window(qtbot) -> tuple[QMainWindow, PaneHost]:
    """The five core panes in a host of their own, no model, and one more tabbed behind
    the output (Qt keeps such a tab visible, moved out of the host)."""
    window = QMainWindow()
    host = PaneHost(window)
    window.setCentralWidget(host)
    for name in PaneHost.CORE:
        host.add_pane(name, name.title(), QLabel(name), LEFT)
    host.add_pane("notes", "Notes", QLabel("notes"), RIGHT)
    qtbot.addWidget(window)
    window.resize(1180, 740)
    host.restore_layout(None)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)  # the default sizes are set once shown
    return window, host


def test_a_wider_window_widens_every_column_by_its_share(qtbot) -> None:
    """Maximised, the window's extra width went to the left column alone (issue 27): the
    chart and the settings and output column kept their widths."""
    window, host = _host_window(qtbot)
    columns = host.columns()
    assert columns is not None
    assert [c[0] for c in columns] == [host.dock(n) for n in ("schema", "chart", "settings")]

    def widths() -> list[int]:
        return [host.dock(n).width() for n in ("schema", "chart", "settings")]

    before, before_host = widths(), host.width()
    for size in ((1600, 1000), (1180, 740)):  # maximised, then back
        window.resize(*size)
        qtbot.wait(50)
        room = sum(before) + host.width() - before_host  # the dividers keep their width
        shares = [w * room / sum(before) for w in before]
        assert widths() == pytest.approx(shares, abs=6), (size, before, widths())
    assert widths() == pytest.approx(before, abs=6)  # back where they were


def test_a_moved_divider_is_kept_when_the_window_grows(qtbot) -> None:
    window, host = _host_window(qtbot)
    chart, settings = host.dock("chart"), host.dock("settings")
    host.resizeDocks([chart, settings], [300, 500], Qt.Orientation.Horizontal)  # as a drag
    qtbot.wait(50)
    before = [host.dock(n).width() for n in ("schema", "chart", "settings")]
    window.resize(1600, 1000)
    qtbot.wait(50)
    after = [host.dock(n).width() for n in ("schema", "chart", "settings")]
    assert after[2] > after[1] > before[1]  # the settings column stays the wider


def test_a_layout_restored_while_wider_comes_back_as_saved(qtbot) -> None:
    """Leaving presentation mode restores the layout while the window is still full
    screen: laid out for that width and then shrunk, it came back with other widths."""
    window, host = _host_window(qtbot)
    host.resizeDocks([host.dock("chart")], [420], Qt.Orientation.Horizontal)
    qtbot.wait(50)
    saved, width = host.saveState(), host.width()
    before = [host.dock(n).width() for n in ("schema", "chart", "settings")]
    window.resize(1900, 1000)  # full screen
    qtbot.wait(50)
    host.dock("settings").hide()  # what presentation mode does
    host.restore_at_width(saved, width)
    window.resize(1180, 740)
    qtbot.wait(50)
    assert [host.dock(n).width() for n in ("schema", "chart", "settings")] == before
