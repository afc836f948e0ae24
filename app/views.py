"""The editors and views of the window that its features and its wiring may link to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.chart.step_chart import StepChart
    from app.decoding.output_view import OutputView
    from app.settings.panel import SettingsPanel
    from app.workbench.prompt_pane import PromptPane
    from app.workbench.schema_editor import SchemaEditor


@dataclass(frozen=True)
class Views:
    """Each is one instance in the window; the run they draw is the session's."""

    schema_editor: SchemaEditor
    prompt_pane: PromptPane
    settings_panel: SettingsPanel
    step_chart: StepChart
    output_view: OutputView
