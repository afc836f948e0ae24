"""Everything the window remembers between sessions, kept in QSettings.

One class owns the keys so that the window never spells a key twice, and tests can
point it at a throw-away INI file instead of the user's real settings.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import platformdirs
from PySide6.QtCore import QByteArray, QSettings

from engine.model.paths import APP_NAME
from engine.settings import GenerationSettings, ModelSettings

ORGANIZATION = "Maskscope"
APPLICATION = "Maskscope"
MAX_RECENT = 8


class SettingsStore:
    def __init__(self, settings: QSettings | None = None) -> None:
        self._s = settings if settings is not None else QSettings(ORGANIZATION, APPLICATION)

    # --- window layout -------------------------------------------------------------------
    def geometry(self, key: str) -> QByteArray | None:
        value = self._s.value(f"layout/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_geometry(self, key: str, state: QByteArray) -> None:
        self._s.setValue(f"layout/{key}", state)

    def remove_geometry(self, *keys: str) -> None:
        for key in keys:
            self._s.remove(f"layout/{key}")

    def data_dir(self) -> Path:
        """Where the window keeps files of its own (the autosave): the platformdirs user data
        folder, or beside the settings file when the store is one (as in tests)."""
        if self._s.format() == QSettings.Format.IniFormat and self._s.fileName():
            return Path(self._s.fileName()).parent / "data"
        return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))

    # --- recent files --------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        return _str_list(self._s.value("files/recent"))

    def add_recent_file(self, path: str) -> None:
        recent = [p for p in self.recent_files() if p != path]
        self._s.setValue("files/recent", [path, *recent][:MAX_RECENT])

    def clear_recent_files(self) -> None:
        self._s.setValue("files/recent", [])

    # --- last run settings ---------------------------------------------------------------
    def model_settings(self) -> ModelSettings:
        return _load_dataclass(self._s, "model", ModelSettings)

    def generation_settings(self) -> GenerationSettings:
        return _load_dataclass(self._s, "generation", GenerationSettings)

    def set_model_settings(self, model: ModelSettings) -> None:
        """Only for a model that loaded: a bad choice must not greet every later start."""
        _save_dataclass(self._s, "model", model)

    def set_generation_settings(self, generation: GenerationSettings) -> None:
        _save_dataclass(self._s, "generation", generation)

    # --- the unsaved session: the schema and prompt survive a quit without a prompt -----
    def draft(self) -> tuple[str | None, str | None, str | None]:
        """(schema text, prompt text, schema file path) of the last session, or Nones."""
        return tuple(  # type: ignore[return-value]
            _opt_str(self._s.value(f"draft/{key}")) for key in ("schema", "prompt", "path")
        )

    def set_draft(self, schema: str, prompt: str, path: str | None) -> None:
        self._s.setValue("draft/schema", schema)
        self._s.setValue("draft/prompt", prompt)
        self._s.setValue("draft/path", path or "")

    def draft_example(self) -> str | None:
        """The title of the example the draft came from, which names the window."""
        return _opt_str(self._s.value("draft/example"))

    def set_draft_example(self, title: str | None) -> None:
        self._s.setValue("draft/example", title or "")

    def log_scale(self) -> bool:
        return _to_bool(self._s.value("view/log_scale", False))

    def set_log_scale(self, on: bool) -> None:
        self._s.setValue("view/log_scale", on)

    def bar_log_scale(self) -> bool:
        return _to_bool(self._s.value("view/bar_log_scale", False))

    def set_bar_log_scale(self, on: bool) -> None:
        self._s.setValue("view/bar_log_scale", on)

    def auto_rerun(self) -> bool:
        return _to_bool(self._s.value("run/auto_rerun", False))

    def set_auto_rerun(self, on: bool) -> None:
        self._s.setValue("run/auto_rerun", on)

    def step_delay(self) -> float:
        """Seconds a demonstration waits after each token (0: full speed)."""
        try:
            return max(0.0, float(self._s.value("run/step_delay", 0.0)))
        except (TypeError, ValueError):
            return 0.0

    def set_step_delay(self, seconds: float) -> None:
        self._s.setValue("run/step_delay", seconds)

    def suite_parallel(self) -> int:
        """How many samples of a case the Suite pane decodes at once (1 to 8)."""
        try:
            return min(8, max(1, int(self._s.value("suite/parallel", 1))))
        except (TypeError, ValueError):
            return 1

    def set_suite_parallel(self, n: int) -> None:
        self._s.setValue("suite/parallel", n)

    def sync(self) -> None:
        self._s.sync()


def _str_list(value: Any) -> list[str]:
    # QSettings returns a bare str for a one-element list in INI files, and None when unset.
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value if v]


def _opt_str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _to_bool(value: Any) -> bool:
    # INI files hand booleans back as the strings "true"/"false".
    if isinstance(value, str):
        return value.lower() == "true"
    return bool(value)


def _save_dataclass(s: QSettings, group: str, obj: Any) -> None:
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        # None cannot round-trip through QSettings; "" stands for it.
        s.setValue(f"{group}/{f.name}", "" if value is None else value)


def _load_dataclass(s: QSettings, group: str, cls: Any) -> Any:
    """Rebuild cls from stored values, keeping the default for anything missing or garbled."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        raw = s.value(f"{group}/{f.name}")
        if raw is None:
            continue
        try:
            values[f.name] = _parse(str(f.type), raw)
        except (TypeError, ValueError):
            continue
    return cls(**values)


def _parse(type_name: str, raw: Any) -> Any:
    # The dataclasses use postponed annotations, so f.type is text such as "int | None".
    if "None" in type_name and raw == "":
        return None
    base = type_name.replace("| None", "").strip()
    if base == "bool":
        return _to_bool(raw)
    if base == "int":
        return int(raw)
    if base == "float":
        return float(raw)
    return str(raw)
