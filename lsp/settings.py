"""The server's settings: what ``initializationOptions`` and ``workspace/didChangeConfiguration``
may set, parsed tolerantly (a bad value keeps the previous one and is reported once).

Keys (the contract with the VS Code extension), either at the top level or under
``"dynInspect"``: ``runsDir`` (str | null), ``graphBreakSeverity`` ("error" | "warning" |
"information" | "hint"), ``showLibraryBreaks`` (bool), ``showRecompiles`` (bool), ``run``
(str | null: a run directory or id; null follows the latest run), ``showContent`` ("auto" |
"document" | "message" | "none": how command results that are content — a function's
details — are shown; "auto" opens a generated document where the client can show one, the
VS Code extension says "none" because it renders them itself).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from lsprotocol import types

from dyn_inspect.inspector.outputs.lsp import SETTINGS, SETTINGS_SECTION

SECTION = SETTINGS_SECTION

SEVERITIES: dict[str, types.DiagnosticSeverity] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}

_KEYS = SETTINGS
SHOW_CONTENT = ("auto", "document", "message", "none")


@dataclass(frozen=True)
class Settings:
    runs_dir: str | None = None
    graph_break_severity: types.DiagnosticSeverity = types.DiagnosticSeverity.Warning
    # On by default: the issue asks for library breaks on the workspace line that leads
    # into them; a client turns them off explicitly.
    show_library_breaks: bool = True
    show_recompiles: bool = True
    run: str | None = None
    show_content: str = "auto"


def _section(raw: Any) -> dict[str, Any] | None:
    """The settings dict inside ``raw``: nested under "dynInspect" or at the top level."""
    if not isinstance(raw, dict):
        return None
    nested = raw.get(SECTION)
    if isinstance(nested, dict):
        return nested
    if any(k in raw for k in _KEYS):
        return raw
    return None


def has_settings(raw: Any) -> bool:
    return _section(raw) is not None


def _optional_str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    raise TypeError("expected a string or null")


def apply_settings(base: Settings, raw: Any) -> tuple[Settings, list[str]]:
    """``base`` updated with the keys present in ``raw``; plus one problem line per value
    that could not be used (that key keeps its previous value)."""
    section = _section(raw)
    if section is None:
        return base, []
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for key, field, parse in (
        ("runsDir", "runs_dir", _optional_str),
        ("run", "run", _optional_str),
        ("graphBreakSeverity", "graph_break_severity", _severity),
        ("showLibraryBreaks", "show_library_breaks", _bool),
        ("showRecompiles", "show_recompiles", _bool),
        ("showContent", "show_content", _show_content),
    ):
        if key not in section:
            continue
        try:
            changes[field] = parse(section[key])
        except (TypeError, ValueError) as exc:
            problems.append(f"setting {SECTION}.{key}={section[key]!r} ignored: {exc}")
    return replace(base, **changes), problems


def _severity(value: Any) -> types.DiagnosticSeverity:
    if isinstance(value, str) and value.strip().lower() in SEVERITIES:
        return SEVERITIES[value.strip().lower()]
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 4:
        return types.DiagnosticSeverity(value)
    raise ValueError('expected "error", "warning", "information" or "hint"')


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError("expected true or false")


def _show_content(value: Any) -> str:
    if isinstance(value, str) and value in SHOW_CONTENT:
        return value
    raise ValueError('expected "auto", "document", "message" or "none"')
