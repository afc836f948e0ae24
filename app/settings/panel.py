"""Model and generation settings, turned into engine.settings dataclasses on demand."""

from __future__ import annotations

import dataclasses
import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QToolButton,
    QWidget,
)

from app.settings.widgets import ClampingSpinBox, FittedPlaceholder
from app.theme import chart_colors
from engine.model.paths import DEFAULT_MODEL_LABEL
from engine.settings import (
    BACKENDS,
    COMPILERS,
    MAX_TOKENS,
    N_GPU_LAYERS,
    SEED,
    TEMPERATURE,
    TOP_K,
    GenerationSettings,
    ModelSettings,
    Range,
    backends_for,
    cross_check_problem,
    missing_engine,
    pairing_problem,
    runs_on,
)

GGUF_FILTER = "GGUF models (*.gguf);;All files (*)"
COMPILER_TIPS = {
    "maskscope": "Maskscope's own compiler: GBNF that runs on the llguidance, llamacpp and "
    "xgrammar backends and on stock llama.cpp, with a report of each keyword it does not "
    "enforce.",
    "llamacpp": "llama.cpp's own JSON Schema converter, the one llama-server runs for "
    "response_format (llama-cpp-python's older port where it is not built). Runs on the "
    "llguidance, llamacpp and xgrammar backends.",
    "llguidance": "llguidance's own JSON Schema compiler: what vLLM, SGLang and "
    "llguidance-enabled llama.cpp users get. Runs on the llguidance backend only; it refuses "
    "a schema with a keyword it cannot enforce.",
    "outlines": "outlines-core's JSON Schema compiler: the regex Outlines runs, on the "
    "outlines backend only; its index build can take tens of seconds on a large vocabulary. "
    "It skips minimum/maximum, multipleOf, uniqueItems, not, if/then/else, contains and "
    "min/maxProperties, and checks oneOf as anyOf.",
    "xgrammar": "XGrammar's own JSON Schema compiler, with the options vLLM passes: what "
    "vLLM, SGLang and TensorRT-LLM users get by default. Runs on the xgrammar backend only. "
    "It forbids properties the schema does not name, checks overlapping oneOf as anyOf and "
    "drops a length bound beside a pattern or format.",
}
BACKEND_TIPS = {
    "llguidance": "llguidance computes the exact valid-token set from the grammar.",
    "llamacpp": "llama.cpp's GBNF sampler, asked token by token.",
    "outlines": "outlines-core's Index and Guide, as Outlines uses them: a mask is a table "
    "lookup, but building the index can take tens of seconds on a large vocabulary.",
    "xgrammar": "XGrammar's GrammarMatcher, as vLLM and SGLang run it: a full mask in "
    "microseconds. It runs XGrammar's own grammar and the GBNF of the maskscope and "
    "llamacpp compilers, so a grammar tested here can be checked under vLLM's engine.",
}
OTHER_BACKEND = "the other backend"
CROSS_CHECK_TIP = (
    "Also compute a second mask each step and report the tokens the two disagree on. Slower."
)


class SettingsPanel(QGroupBox):
    """Emits sig_model_changed(ModelSettings) when the model file or GPU layers change,
    so the window can load the new model before the next run, and sig_generation_changed()
    when any generation setting changes (results made before it are then out of date)."""

    sig_model_changed = Signal(object)
    sig_generation_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)  # untitled: its pane's title bar says "Settings"
        self._model_base = ModelSettings()  # carries n_ctx/n_threads, which have no widget
        self._cross_check_possible = True  # the run's pair has a second mask to compare
        self._last_model: ModelSettings | None = None

        short_name = DEFAULT_MODEL_LABEL.split(" (")[0]  # "Gemma 3 270M"
        self.model_path = FittedPlaceholder(
            [f"default: {DEFAULT_MODEL_LABEL}", f"default: {short_name}", short_name, "default"],
            self,
        )
        self.model_path.setObjectName("modelPath")
        self.model_path.setClearButtonEnabled(True)
        self.model_path.setToolTip(
            f"GGUF model file. Leave empty for the default model, {DEFAULT_MODEL_LABEL}."
        )
        browse = QToolButton(self)
        browse.setText("Browse…")
        browse.setToolTip("Choose a GGUF model file")
        browse.clicked.connect(self.browse_model)
        path_row = QHBoxLayout()
        path_row.setContentsMargins(0, 0, 0, 0)
        path_row.addWidget(self.model_path, 1)
        path_row.addWidget(browse)

        self.gpu_layers = ClampingSpinBox(self)
        _set_range(self.gpu_layers, N_GPU_LAYERS)
        self.gpu_layers.setSpecialValueText("all")
        self.gpu_layers.setToolTip(
            "Layers to offload to the GPU: -1 (“all”) offloads every "
            "layer, 0 keeps the model on the CPU. Ignored by CPU-only "
            "builds of llama.cpp."
        )

        self.compiler = QComboBox(self)
        self.compiler.setObjectName("compiler")
        for i, name in enumerate(COMPILERS):
            self.compiler.addItem(name)
            self.compiler.setItemData(i, _wrapped(COMPILER_TIPS[name]), Qt.ItemDataRole.ToolTipRole)
        self.compiler.setToolTip(
            "What turns the schema into the grammar. The note under the schema says what "
            "this compiler's grammar does not enforce."
        )

        self.backend = QComboBox(self)
        self.backend.setObjectName("backend")
        for i, name in enumerate(BACKENDS):
            self.backend.addItem(name)
            self.backend.setItemData(i, _wrapped(BACKEND_TIPS[name]), Qt.ItemDataRole.ToolTipRole)
        self.backend.setToolTip(
            "Mask backend: what computes the valid tokens from the compiler's grammar. "
            "Those that cannot run the chosen compiler's grammar are greyed out."
        )

        self.temperature = QDoubleSpinBox(self)
        _set_range(self.temperature, TEMPERATURE)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setSpecialValueText("0 (greedy)")
        self.temperature.setToolTip(
            "Sampling temperature. 0 always picks the most probable valid token."
        )

        self.seed = ClampingSpinBox(self)
        _set_range(self.seed, SEED)
        self.seed.setToolTip(
            "Random seed: the same seed, prompt and settings give the same output."
        )

        self.max_tokens = ClampingSpinBox(self)
        _set_range(self.max_tokens, MAX_TOKENS)
        self.max_tokens.setToolTip(
            "Stop after this many tokens. A run cut off here is reported "
            "as truncated and never counts as valid."
        )

        # The longest valid output of a bounded schema, in tokens (the `unbounded` lint's
        # bound), beside the setting it should not exceed.
        self.output_bound: int | None = None
        self.bound_label = QLabel("", self)
        self.bound_label.setObjectName("outputBound")
        max_tokens_row = QHBoxLayout()
        max_tokens_row.setContentsMargins(0, 0, 0, 0)
        max_tokens_row.addWidget(self.max_tokens, 1)
        max_tokens_row.addWidget(self.bound_label)
        self.max_tokens.valueChanged.connect(self._show_bound)

        self.top_k = ClampingSpinBox(self)
        _set_range(self.top_k, TOP_K)
        self.top_k.setToolTip(
            "How many candidate tokens per step the chart shows (before and "
            "after masking). Does not change sampling."
        )

        self.exact_mask = QCheckBox("Exact mask (llamacpp)", self)
        self.exact_mask.setToolTip(
            "llamacpp backend only: check every vocabulary token against "
            "the grammar, not just the probable head. Slower, but the "
            "valid mass becomes exact."
        )
        self.cross_check = QCheckBox("Cross-check with", self)
        self.cross_check.setToolTip(CROSS_CHECK_TIP)
        self.cross_check_with = QComboBox(self)
        self.cross_check_with.setObjectName("crossCheckWith")
        self.cross_check_with.addItem(OTHER_BACKEND, None)
        for name in COMPILERS:
            self.cross_check_with.addItem(f"the {name} compiler", name)
        self.cross_check_with.setToolTip(
            "The other backend, on the same grammar; or another compiler's grammar, on the "
            "same backend: where two compilers' masks differ at each step."
        )
        self.chat_template = QCheckBox("Use chat template", self)
        self.chat_template.setToolTip(
            "Wrap the prompt in the model's own chat template (for instruction-tuned models)."
        )

        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Model:", path_row)
        form.addRow("GPU layers:", self.gpu_layers)
        form.addRow("Compiler:", self.compiler)
        form.addRow("Backend:", self.backend)
        form.addRow("Temperature:", self.temperature)
        form.addRow("Seed:", self.seed)
        form.addRow("Max tokens:", max_tokens_row)
        form.addRow("Top-K shown:", self.top_k)
        form.addRow(self.exact_mask)
        form.addRow(self.cross_check, self.cross_check_with)
        form.addRow(self.chat_template)
        # What the panel did on its own (a value clamped, a backend switched), until the
        # next such thing: a user never has to guess why a setting changed.
        self.notice = QLabel("", self)
        self.notice.setObjectName("settingsNotice")
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.RichText)
        self.notice.linkActivated.connect(self._switch_back)
        self.notice.hide()
        form.addRow(self.notice)
        self._chosen = ("", "")  # (compiler, backend) as the user last left them
        # A combo box is as wide as its longest entry by default ("the xgrammar compiler"),
        # which made the pane scroll sideways at 1280x800; these show what fits.
        for combo in (self.compiler, self.backend, self.cross_check_with):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(8)
        self.compiler.activated.connect(self._compiler_chosen)
        self.backend.activated.connect(self._remember_choice)
        for label, box in (
            ("GPU layers", self.gpu_layers),
            ("Seed", self.seed),
            ("Max tokens", self.max_tokens),
            ("Top-K shown", self.top_k),
        ):
            box.clamped.connect(lambda typed, kept, label=label: self._clamped(label, typed, kept))

        self.backend.currentTextChanged.connect(self._update_enabled)
        self.compiler.currentTextChanged.connect(self._update_enabled)
        self.cross_check.toggled.connect(self._update_enabled)
        for box in (self.max_tokens, self.seed, self.top_k):
            box.valueChanged.connect(self.sig_generation_changed)
        self.temperature.valueChanged.connect(self.sig_generation_changed)
        for combo in (self.compiler, self.backend, self.cross_check_with):
            combo.currentIndexChanged.connect(self.sig_generation_changed)
        for check in (self.exact_mask, self.cross_check, self.chat_template):
            check.toggled.connect(self.sig_generation_changed)
        self.model_path.editingFinished.connect(self._emit_if_model_changed)
        self.gpu_layers.editingFinished.connect(self._emit_if_model_changed)
        self.set_settings(ModelSettings(), GenerationSettings())

    def model_settings(self) -> ModelSettings:
        path = self.model_path.text().strip() or None
        return dataclasses.replace(
            self._model_base, path=path, n_gpu_layers=self.gpu_layers.value()
        )

    def generation_settings(self) -> GenerationSettings:
        return GenerationSettings(
            max_tokens=self.max_tokens.value(),
            temperature=self.temperature.value(),
            seed=self.seed.value(),
            top_k=self.top_k.value(),
            backend=self.backend.currentText(),
            compiler=self.compiler.currentText(),
            # Only the llamacpp backend has a non-exact mode; the box is greyed out otherwise.
            exact_mask=self.exact_mask.isChecked() and self.backend.currentText() == "llamacpp",
            # A pair with nothing to cross-check greys the box but keeps its tick for later.
            cross_check=self.cross_check.isChecked() and self._cross_check_possible,
            cross_check_compiler=self.cross_check_with.currentData(),
            chat_template=self.chat_template.isChecked(),
        )

    def set_settings(self, model: ModelSettings, generation: GenerationSettings) -> None:
        self._model_base = model
        self.model_path.setText(model.path or "")
        self.gpu_layers.setValue(model.n_gpu_layers)
        self.set_generation_settings(generation)
        self._last_model = self.model_settings()
        self._show_bound()  # the context may have changed

    def set_generation_settings(self, generation: GenerationSettings) -> None:
        self.max_tokens.setValue(generation.max_tokens)
        self.temperature.setValue(generation.temperature)
        self.seed.setValue(generation.seed)
        self.top_k.setValue(generation.top_k)
        if generation.compiler in COMPILERS:
            self.compiler.setCurrentText(generation.compiler)
        if generation.backend in BACKENDS:
            self.backend.setCurrentText(generation.backend)
        self.exact_mask.setChecked(generation.exact_mask)
        self.cross_check.setChecked(generation.cross_check)
        self.cross_check_with.setCurrentIndex(
            max(0, self.cross_check_with.findData(generation.cross_check_compiler))
        )
        self.chat_template.setChecked(generation.chat_template)
        self._update_enabled()
        self._remember_choice()

    def set_model_path(self, path: str) -> None:
        self.model_path.setText(path)
        self._emit_if_model_changed()

    def browse_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open model", self.model_path.text(), GGUF_FILTER
        )
        if path:
            self.set_model_path(path)

    def set_output_bound(self, bound: int | None) -> None:
        """The longest valid output in tokens, None when the schema has none (or no check
        has counted it yet)."""
        self.output_bound = bound
        self._show_bound()

    def bound_exceeded(self) -> bool:
        return self.output_bound is not None and self.max_tokens.value() < self.output_bound

    def _show_bound(self) -> None:
        n_ctx, wanted = self._model_base.n_ctx, self.max_tokens.value()
        if wanted >= n_ctx:  # the prompt takes its share of the same context
            self._bound_text(
                f"⚠ context holds {n_ctx}",
                f"The model's context holds {n_ctx} tokens, prompt and output together: a run "
                f"stops when it is full, before {wanted} tokens.",
                warn=True,
            )
            return
        bound = self.output_bound
        if bound is None:
            self._bound_text("", "", warn=False)
        elif self.bound_exceeded():
            self._bound_text(
                f"⚠ needs {bound}",
                f"The longest valid output takes {bound} tokens: with Max tokens at "
                f"{wanted} a run may be cut off before the JSON closes.",
                warn=True,
            )
        else:
            self._bound_text(
                f"≤ {bound} needed",
                f"The longest valid output takes {bound} tokens (counted with the model's "
                "tokenizer): Max tokens covers it.",
                warn=False,
            )

    def _bound_text(self, text: str, tip: str, *, warn: bool) -> None:
        self.bound_label.setText(text)
        self.bound_label.setToolTip(tip)
        colour = chart_colors().warn.name() if warn else "palette(placeholder-text)"
        self.bound_label.setStyleSheet(f"color: {colour};")

    def show_notice(self, text: str) -> None:
        """One line under the settings, rich text (a link may offer to undo)."""
        self.notice.setText(text)
        self.notice.setVisible(bool(text))

    def _clamped(self, label: str, typed: int, kept: int) -> None:
        side = "most" if typed > kept else "least"
        self.show_notice(
            f"{label}: {typed} is outside what llama.cpp takes; set to {kept}, the {side} it takes."
        )

    def _remember_choice(self) -> None:
        self._chosen = (self.compiler.currentText(), self.backend.currentText())

    def _compiler_chosen(self) -> None:
        """The user picked a compiler; say so when it took the backend with it, and offer
        the pair they had."""
        (compiler_was, backend_was), compiler = self._chosen, self.compiler.currentText()
        backend = self.backend.currentText()
        self._remember_choice()
        if backend == backend_was:
            return
        self.show_notice(
            f"The {html.escape(compiler)} compiler's grammar does not run on the "
            f"{html.escape(backend_was)} backend, so the backend is now "
            f"{html.escape(backend)}. "
            f'<a href="{html.escape(compiler_was)}|{html.escape(backend_was)}">Switch back to '
            f"{html.escape(compiler_was)} on {html.escape(backend_was)}</a>"
        )

    def _switch_back(self, link: str) -> None:
        compiler, backend = link.split("|")
        self.compiler.setCurrentText(compiler)
        self.backend.setCurrentText(backend)
        self._remember_choice()
        self.show_notice("")

    def set_chat_template_available(self, available: bool) -> None:
        self.chat_template.setEnabled(available)
        if not available:
            self.chat_template.setChecked(False)

    def _update_enabled(self) -> None:
        """Grey out what cannot run with the rest (engine.settings.runs_on), so that every
        choice left is one that runs: the compiler takes the backend with it."""
        for name in COMPILERS:  # an engine that is not installed says how to install it
            missing = missing_engine(name)
            _enable_item(self.compiler, name, not missing, COMPILER_TIPS[name], _sentence(missing))
        compiler = self.compiler.currentText()
        if not runs_on(compiler, self.backend.currentText()):
            self.backend.setCurrentText(backends_for(compiler)[0])
        for name in BACKENDS:
            why_not = _sentence(pairing_problem(compiler, name) or missing_engine(name))
            runs = runs_on(compiler, name) and not missing_engine(name)
            _enable_item(self.backend, name, runs, BACKEND_TIPS[name], why_not)
        backend = self.backend.currentText()
        self.exact_mask.setEnabled(backend == "llamacpp")
        self._update_cross_check(compiler, backend)

    def _update_cross_check(self, compiler: str, backend: str) -> None:
        """Offer the other backend and the other compilers that the pair can compare with;
        with none (the outlines pair), grey the cross-check itself."""
        other = self.cross_check_with
        problem = cross_check_problem(compiler, backend)
        _enable_item(other, OTHER_BACKEND, problem is None, "", _sentence(problem))
        for name in COMPILERS:
            runs = name != compiler and runs_on(name, backend)
            why_not = (
                "The run's own compiler."
                if name == compiler
                else _sentence(pairing_problem(name, backend))
            )
            _enable_item(other, f"the {name} compiler", runs, COMPILER_TIPS[name], why_not)
        offered = [i for i in range(other.count()) if _item_enabled(other, i)]
        self._cross_check_possible = bool(offered)
        self.cross_check.setEnabled(bool(offered))
        self.cross_check.setToolTip(
            CROSS_CHECK_TIP if offered else _sentence(problem) or CROSS_CHECK_TIP
        )
        other.setEnabled(bool(offered) and self.cross_check.isChecked())
        if offered and not _item_enabled(other, other.currentIndex()):
            other.setCurrentIndex(offered[0])

    def _emit_if_model_changed(self) -> None:
        current = self.model_settings()
        if current != self._last_model:
            self._last_model = current
            self.sig_model_changed.emit(current)


def _enable_item(combo: QComboBox, text: str, enabled: bool, tip: str, why_not: str) -> None:
    """Grey out one entry of a combo box, or not; its tooltip says why it is greyed."""
    index = combo.findText(text)
    combo.model().item(index).setEnabled(enabled)  # every QComboBox starts with a
    # QStandardItemModel, whose items can be greyed one by one
    combo.setItemData(index, _wrapped(tip if enabled else why_not), Qt.ItemDataRole.ToolTipRole)


def _wrapped(tip: str) -> str | None:
    """A tooltip as rich text, which Qt wraps (plain text runs off a 1280-pixel screen)."""
    return f"<p>{html.escape(tip, quote=False)}</p>" if tip else None


def _sentence(problem: str | None) -> str:
    """A settings problem as a tooltip: capitalised, with a full stop."""
    return f"{problem[0].upper()}{problem[1:]}." if problem else ""


def _item_enabled(combo: QComboBox, index: int) -> bool:
    return combo.model().item(index).isEnabled()


def _set_range(box: QSpinBox | QDoubleSpinBox, bounds: Range) -> None:
    """The spin box accepts what the command line accepts (engine/settings.py)."""
    box.setRange(bounds.low, bounds.high)
