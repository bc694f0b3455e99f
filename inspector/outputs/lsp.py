"""What the language server's commands (``workspace/executeCommand``) return: the
contract with the VS Code extension, whose TypeScript types are generated from this
schema (vscode-extension/src/common/outputs.ts)."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from dyn_inspect.inspector.outputs.common import Output

# The identifiers the server and its clients share, defined once: the language server uses
# these, and `dyn-inspect schema --outputs` writes them under "contracts", from which the
# VS Code extension's constants are generated (vscode-extension/src/common/outputs.ts).
SERVER_COMMANDS: dict[str, str] = {
    "selectRun": "dynInspect.selectRun",
    "listRuns": "dynInspect.listRuns",
    "summary": "dynInspect.summary",
    "showDetails": "dynInspect.showDetails",  # the code lens: [file, line] -> LspFunctionDetails
    "showInTui": "dynInspect.showInTui",
    "exportBugReport": "dynInspect.exportBugReport",  # registered by the server unless the client has its own
    "verify": "dynInspect.verify",
}
# Diagnostic codes other than torch's own (a graph break's GBxxxx id, a failure's exception type)
DIAGNOSTIC_CODES: dict[str, str] = {
    "recompile": "recompile",
    "recompileLimit": "recompile-limit",
    "recompileCause": "recompile-cause",
    "verified": "verified",  # the Hint a verify leaves where a fixed cause showed
    "notVerified": "not-verified",  # where a re-run that did not verify the fix crashed or newly failed
}
SETTINGS_SECTION = "dynInspect"
# the keys of the section the server reads (initializationOptions, workspace/configuration)
SETTINGS: tuple[str, ...] = ("runsDir", "graphBreakSeverity", "showLibraryBreaks", "showRecompiles", "run", "showContent")


def contracts() -> dict[str, object]:
    """What ``schema --outputs`` writes under "contracts"."""
    return {
        "commands": SERVER_COMMANDS,
        "diagnosticCodes": DIAGNOSTIC_CODES,
        "settingsSection": SETTINGS_SECTION,
        "settings": list(SETTINGS),
    }


class LspSummary(Output):
    """``dynInspect.summary`` and ``dynInspect.selectRun``: the run the editor shows."""

    breaks: int  # unique graph-break sites
    recompiles: int
    run: str | None  # its directory; null: no run yet
    degraded: list[str]  # hooks the recorder could not use in that run's torch


class LspRunInfo(Output):
    """One entry of ``dynInspect.listRuns``."""

    path: str
    id: str
    command: str
    breaks: int
    recompiles: int
    status: str


class LspRecompile(Output):
    """One recompile of the function (or of the code after one of its graph breaks)."""

    compile_id: str
    part: str | None  # null: the function itself; else the resume function after a break
    part_line: int | None
    reasons: list[str]
    suggestion: str | None
    code: str | None


class LspFunctionDetails(Output, kw_only=True):
    """``dynInspect.showDetails``: ``found`` false carries ``file`` and ``line`` (or
    ``error`` for bad arguments) and nothing else."""

    found: bool
    run: str | None | UnsetType = UNSET
    error: str | UnsetType = UNSET
    function: str | UnsetType = UNSET
    file: str | UnsetType = UNSET
    line: int | UnsetType = UNSET
    recorded_line: int | UnsetType = UNSET
    title: str | UnsetType = UNSET
    compiles: int | UnsetType = UNSET
    part_compiles: int | UnsetType = UNSET
    compile_ids: list[str] | UnsetType = UNSET
    outcomes: list[str] | UnsetType = UNSET
    graph_breaks: list[str] | UnsetType = UNSET
    kernels: int | UnsetType = UNSET
    compile_time_s: float | UnsetType = UNSET
    recompiles: list[LspRecompile] | UnsetType = UNSET
    recompile_limit: str | None | UnsetType = UNSET
    # all of the above as Markdown, rendered once by the server (every string from the run
    # escaped): what the editors show, VS Code's preview and Neovim's document alike
    markdown: str | UnsetType = UNSET


class LspVerifyError(Output):
    """``dynInspect.verify`` when the re-run failed (else the ``VerifyReport``; ``{}``
    when there is no run)."""

    error: str
