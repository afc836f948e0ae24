"""A suite's `cases_file`: CSV (a header row of variable names) or JSON lines.

Each row becomes the same shape as a case written in the suite itself
(`{"id"?, "vars", "expected"?, "description"?}`), with its line number, so that one parser
(engine/suite/load.py) checks both and names the line of a bad one.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from engine.errors import SuiteError
from engine.schema.nesting import TooDeepError, check_depth

EXPECTED_PREFIX = "expected."  # a CSV column `expected.<json path>` holds an exact value
ID_COLUMN = "id"  # a CSV column `id` names the case; it is not a variable

Row = tuple[int, dict[str, Any]]  # (line number, the case's JSON)


def read_rows(path: Path, text: str, shown: str) -> list[Row]:
    """The cases in a cases file's `text`; `shown` names the file in messages."""
    if path.suffix.lower() == ".csv":
        return _csv_rows(text.removeprefix("\ufeff"), shown)  # Excel writes a BOM
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return _jsonl_rows(text, shown)
    raise SuiteError("a cases file is .csv or .jsonl", shown)


def expected_path(column: str) -> str:
    """`expected.items[0].total` and `expected.$.items[0].total` both mean $.items[0].total."""
    rest = column[len(EXPECTED_PREFIX) :]
    if rest.startswith("$"):
        return rest
    return f"${rest}" if rest.startswith("[") else f"$.{rest}"


def _csv_rows(text: str, shown: str) -> list[Row]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if not header:
            raise SuiteError("the CSV file has no header row", shown, "line 1")
        _check_header(header, shown)
        rows: list[Row] = []
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1  # a quoted cell may span lines
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                raise SuiteError(
                    f"{len(cells)} cells, but the header has {len(header)} columns",
                    shown,
                    f"line {line}",
                )
            try:
                rows.append((line, _csv_case(dict(zip(header, cells, strict=True)))))
            except TooDeepError as exc:  # a cell read as JSON
                raise SuiteError(exc.reason, shown, f"line {line}") from None
    except csv.Error as exc:
        raise SuiteError(f"not CSV ({exc})", shown, f"line {reader.line_num}") from None
    return rows


def _check_header(header: list[str], shown: str) -> None:
    seen: set[str] = set()
    for name in header:
        if not name.strip():
            raise SuiteError("a header cell is empty: every column needs a name", shown, "line 1")
        if name in seen:
            raise SuiteError(f"the column {name!r} appears twice", shown, "line 1")
        seen.add(name)


def _csv_case(row: dict[str, str]) -> dict[str, Any]:
    case: dict[str, Any] = {"vars": {}, "expected": {}}
    for column, cell in row.items():
        if column == ID_COLUMN:
            if cell.strip():
                case["id"] = cell.strip()
        elif column.startswith(EXPECTED_PREFIX):
            if cell != "":  # an empty cell expects nothing of this row
                case["expected"][expected_path(column)] = {"equals": _cell_value(cell)}
        else:
            case["vars"][column] = cell
    return case


def _cell_value(cell: str) -> Any:
    """A cell that reads as JSON (384.5, true, "12") is that value; any other is a string."""
    check_depth(cell)  # json would recurse into it
    try:
        return json.loads(cell)
    except json.JSONDecodeError:
        return cell


def _jsonl_rows(text: str, shown: str) -> list[Row]:
    rows: list[Row] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            check_depth(line)  # json would recurse into it
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SuiteError(f"not JSON ({exc.msg})", shown, f"line {number}") from None
        except TooDeepError as exc:
            where = f"line {number}, column {exc.column}"
            raise SuiteError(exc.reason, shown, where) from None
        if not isinstance(value, dict):
            raise SuiteError("each line is a JSON object", shown, f"line {number}")
        # {"vars": ...} is a full case; any other object is its variables alone.
        rows.append((number, value if "vars" in value else {"vars": value}))
    return rows
