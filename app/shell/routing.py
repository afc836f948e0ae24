"""Where each message of the window goes, and when it goes away.

One error, one home: a schema or grammar error lives in the Problems list, and the output
view only points there ("not run: the schema has errors — see Problems"). The banner is for
errors with no other home (model load, a native crash, file I/O). Every message clears when
its cause is gone: fixing (or undoing) the schema takes the pointer away, a model that loads
takes the model error away. Results from older inputs are marked out of date.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.decoding.freshness import Freshness
from app.decoding.violations import Violation, find_violations
from engine.errors import GrammarError, SchemaInvalidError, SchemaSyntaxError
from engine.records import RunResult

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from app.banner import ErrorBanner
    from app.session import Session
    from app.shell.panes import PaneHost
    from app.views import Views
    from engine.workbench.problems import Report

# Errors whose home is the Problems list, by the kind of Problem they are there.
ERROR_KIND = {
    "syntax": SchemaSyntaxError.kind,
    "schema": SchemaInvalidError.kind,
    "grammar": GrammarError.kind,
}
SCHEMA_KINDS = frozenset(ERROR_KIND.values())


class Routing(QObject):
    def __init__(
        self,
        views: Views,
        session: Session,
        status: QStatusBar,
        banner: ErrorBanner,
        panes: PaneHost,
    ) -> None:
        super().__init__(session)
        self.views, self.session = views, session
        self.status, self.banner, self.panes = status, banner, panes
        schema, panel, output = views.schema_editor, views.settings_panel, views.output_view
        prompt = views.prompt_pane
        problems = schema.problems_list
        self.freshness = Freshness(self.inputs_now, (output, views.step_chart), self)
        # The live check judges what Run will run: the selected compiler and backend.
        panel.backend.currentTextChanged.connect(schema.set_backend)
        panel.max_tokens.valueChanged.connect(schema.set_max_tokens)
        schema.set_prompt_source(prompt.text)
        prompt.editor.textChanged.connect(schema.prompt_changed)
        problems.set_editors(schema.editor, prompt.editor)
        schema.sig_report.connect(self._on_report)
        output.sig_show_problems.connect(self.show_problems)
        output.sig_violation_selected.connect(self._select_warning)
        problems.sig_selected.connect(output.select_violations_of)
        for changed in (
            schema.editor.textChanged,
            prompt.editor.textChanged,
            panel.sig_generation_changed,
        ):
            changed.connect(self.freshness.changed)

    def inputs_now(self) -> dict[str, object]:
        v = self.views
        return {
            "schema": v.schema_editor.text(),
            "prompt": v.prompt_pane.text(),
            "settings": v.settings_panel.generation_settings(),
        }

    # --- before a run -------------------------------------------------------------------------
    def refuse_run(self) -> bool:
        """True (and the pointer shown) when the live check already knows the schema cannot
        run; the run is then not started."""
        schema = self.views.schema_editor
        if not (schema.is_current() and schema.has_errors()):
            return False
        first = next(p for p in schema.problems() if p.severity == "error")
        self.not_run(ERROR_KIND.get(first.kind, GrammarError.kind), first.message)
        return True

    def not_run(self, kind: str, message: str) -> None:
        self.session.error = (kind, message)
        self.views.output_view.show_not_run()
        self.status.clearMessage()  # "Compiling schema…" is over
        self.show_problems()

    def run_error(self, kind: str, message: str) -> bool:
        """Route a run's error; True when it belongs to the Problems list (then handled)."""
        if kind not in SCHEMA_KINDS:
            return False
        schema = self.views.schema_editor
        if kind == GrammarError.kind and not any(p.message == message for p in schema.problems()):
            # The run started before the live check ended: the list learns it from the run.
            schema.show_error(message)
        self.not_run(kind, message)
        return True

    def run_started(self) -> None:
        self.freshness.ran(self.inputs_now())

    # --- after a run --------------------------------------------------------------------------
    def violations(self, result: RunResult, schema_text: str) -> list[Violation]:
        """The output's validation errors, each tied to its unenforced warning when the
        Problems list shows the report of the schema the run used."""
        if result.parse_error is not None or not result.errors:
            return []
        try:
            schema = json.loads(schema_text)
        except json.JSONDecodeError:
            return []
        editor = self.views.schema_editor
        shown = editor.report_input
        problems = editor.problems() if shown is not None and shown.text == schema_text else []
        return find_violations(schema, result.text, result.parsed, problems)

    def finished(self) -> None:
        self.freshness.check_now()

    # --- messages that go away with their cause ---------------------------------------------
    def _on_report(self, report: Report) -> None:
        self.views.settings_panel.set_output_bound(report.output_bound)
        if not self.views.schema_editor.has_errors():
            self.views.output_view.clear_not_run()

    def model_loaded(self, path: str) -> None:
        self.banner.clear("model")
        self.views.schema_editor.set_model(path)

    def show_problems(self) -> None:
        if "problems" in self.panes.panes:
            self.panes.show_pane("problems")
        self.views.schema_editor.show_problems()

    def _select_warning(self, violation: Violation) -> None:
        if violation.warning is not None:
            self.show_problems()
            self.views.schema_editor.problems_list.select(violation.warning)
