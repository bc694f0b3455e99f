/** Identifiers shared by the extension, the language server and the CLI. */

import { ServerCommandIds, SettingsSection } from './outputs';

/** Language client id; also the settings section (`dynInspect.*`, incl. `dynInspect.trace.server`). */
export const SERVER_ID = SettingsSection;
export const SERVER_NAME = 'dyn-inspect';
/** Output channel (Markdown) where the code lens command shows a function's details. */
export const DETAILS_CHANNEL_NAME = 'dyn-inspect: Details';
export const CONFIG_SECTION = SettingsSection;

/** Python module started as `<python> -m dyn_inspect.lsp`. */
export const SERVER_MODULE = 'dyn_inspect.lsp';
/** The CLI's module, run as `<python> -m dyn_inspect.cli` when the console script can't be found. */
export const CLI_MODULE = 'dyn_inspect.cli';
/** Console script installed by the Python package; `dyn-inspect lsp` starts the server. */
export const CLI_NAME = 'dyn-inspect';
/** Distribution name (pyproject.toml); it installs from its source checkout, not from PyPI. */
export const PIP_PACKAGE = 'dyn-inspect';
/** Placeholder shown in install instructions for the user's checkout. */
export const SOURCE_PLACEHOLDER = '/path/to/dyn-inspect';
/** `source` of the diagnostics the server publishes. */
export const DIAGNOSTIC_SOURCE = 'dyn-inspect';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

/** Seconds allowed for `<python> -c "import dyn_inspect.lsp"` (a cold torch import can be slow). */
export const IMPORT_CHECK_TIMEOUT_MS = 60_000;

/** Commands contributed in package.json. */
export const Commands = {
    runCurrentFile: 'dynInspect.runCurrentFile',
    openInspector: 'dynInspect.openInspector',
    chooseRun: 'dynInspect.chooseRun',
    exportBugReport: ServerCommandIds.exportBugReport, // the server's id: a client with its own export handles it
    restartServer: 'dynInspect.restartServer',
    showOutput: 'dynInspect.showOutput',
    showBreaks: 'dynInspect.showBreaks',
} as const;

/**
 * Commands the server implements (workspace/executeCommand), generated from the server's own
 * list (inspector/outputs/lsp.py). vscode-languageclient also registers these ids as VS Code
 * commands, so the UI commands above must use other ids.
 */
export const ServerCommands = ServerCommandIds;

/** Key in workspaceState for the run chosen with "Select Run". */
export const SELECTED_RUN_KEY = 'dynInspect.selectedRun';
