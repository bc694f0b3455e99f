/** The status bar item (latest run's breaks / recompiles, or why the server isn't running) and launch-error notifications. */
import * as fs from 'fs';
import * as path from 'path';
import { Disposable, StatusBarAlignment, StatusBarItem, ThemeColor, commands, window, workspace } from 'vscode';
import { Commands, PIP_PACKAGE, SERVER_NAME } from './constants';
import { LaunchError } from './launch';
import { showOutput } from './log';
import type { LspSummary } from './outputs';

/** What the status bar shows of `dynInspect.summary`'s result. */
export type SummaryLike = Pick<LspSummary, 'breaks' | 'recompiles' | 'run'>;

function plural(count: number, word: string): string {
    return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export function formatSummary(summary: SummaryLike): { text: string; tooltip: string } {
    if (!summary.run) {
        return {
            text: '$(flame) dyn-inspect: no runs',
            tooltip: 'No dyn-inspect run recorded yet. Use "dyn-inspect: Run Current File with dyn-inspect".',
        };
    }
    return {
        text: `$(flame) ${plural(summary.breaks, 'break')} · ${plural(summary.recompiles, 'recompile')}`,
        tooltip: `dyn-inspect run ${path.basename(summary.run)}: ${plural(summary.breaks, 'graph break')}, ${plural(summary.recompiles, 'recompile')}. Click to list them.`,
    };
}

export class StatusBar implements Disposable {
    readonly item: StatusBarItem;

    constructor() {
        this.item = window.createStatusBarItem('dynInspect.status', StatusBarAlignment.Left, 50);
        this.item.name = SERVER_NAME;
        this.showStarting();
        this.item.show();
    }

    showStarting(): void {
        this.set('$(loading~spin) dyn-inspect', 'Starting the dyn-inspect language server…', Commands.showOutput);
    }

    showRunning(): void {
        this.set('$(flame) dyn-inspect', 'The dyn-inspect language server is running.', Commands.showBreaks);
    }

    showSummary(summary: SummaryLike): void {
        const { text, tooltip } = formatSummary(summary);
        this.set(text, tooltip, Commands.showBreaks);
    }

    showLaunchProblem(error: LaunchError): void {
        if (error.kind === 'untrusted') {
            this.set('$(shield) dyn-inspect', error.message, 'workbench.trust.manage');
        } else {
            this.showError(error.message);
        }
    }

    showError(message: string): void {
        this.set('$(warning) dyn-inspect', message, Commands.showOutput, new ThemeColor('statusBarItem.errorBackground'));
    }

    dispose(): void {
        this.item.dispose();
    }

    private set(text: string, tooltip: string, command: string, backgroundColor?: ThemeColor): void {
        this.item.text = text;
        this.item.tooltip = tooltip;
        this.item.command = command;
        this.item.backgroundColor = backgroundColor;
    }
}

export const INSTALL_ACTION = 'Install dyn-inspect…';

/** Whether `folder` is a dyn-inspect source checkout (its pyproject.toml names the package). */
export function isCheckout(folder: string): boolean {
    try {
        return /^name\s*=\s*"dyn-inspect"\s*$/m.test(fs.readFileSync(path.join(folder, 'pyproject.toml'), 'utf8'));
    } catch {
        return false;
    }
}

/**
 * dyn-inspect installs from its source checkout (it is not on PyPI): asks for the checkout
 * (the workspace itself when it is one), then runs `<python> -m pip install -e <checkout>`
 * in a terminal and restarts the server once that succeeded.
 */
export async function installFromSource(interpreter: string[]): Promise<void> {
    const root = workspace.workspaceFolders?.[0]?.uri;
    const picked = await window.showOpenDialog({
        title: 'Select the dyn-inspect source checkout (the folder with its pyproject.toml)',
        canSelectFolders: true,
        canSelectFiles: false,
        canSelectMany: false,
        defaultUri: root && isCheckout(root.fsPath) ? root : undefined,
        openLabel: 'Install from here',
    });
    const folder = picked?.[0]?.fsPath;
    if (!folder) {
        return;
    }
    if (!isCheckout(folder)) {
        void window.showErrorMessage(`${folder} is not a dyn-inspect checkout: its pyproject.toml does not name "${PIP_PACKAGE}".`);
        return;
    }
    const [command, ...leading] = interpreter;
    const terminal = window.createTerminal({
        name: 'dyn-inspect: install',
        shellPath: command,
        shellArgs: [...leading, '-m', 'pip', 'install', '-e', folder],
    });
    terminal.show();
    const listener = window.onDidCloseTerminal(async (closed) => {
        if (closed !== terminal) {
            return;
        }
        listener.dispose();
        if (closed.exitStatus?.code === 0) {
            await commands.executeCommand(Commands.restartServer);
        }
    });
}

/** Shows a launch error with the buttons that fix it. */
export async function showLaunchError(error: LaunchError): Promise<void> {
    if (error.kind === 'untrusted') {
        const choice = await window.showInformationMessage(error.message, 'Manage Workspace Trust');
        if (choice) {
            await commands.executeCommand('workbench.trust.manage');
        }
        return;
    }
    const actions: string[] = [];
    if (error.kind === 'notImportable' && error.interpreter) {
        actions.push(INSTALL_ACTION);
    }
    actions.push('Open Settings', 'Show Output');
    const choice = await window.showErrorMessage(error.message, ...actions);
    if (choice === INSTALL_ACTION && error.interpreter) {
        await installFromSource(error.interpreter);
    } else if (choice === 'Open Settings') {
        await commands.executeCommand('workbench.action.openSettings', 'dynInspect.interpreter');
    } else if (choice === 'Show Output') {
        showOutput();
    }
}

/** The action offered with the server's "no recorded runs found" message. */
export const RUN_CURRENT_FILE_ACTION = 'Run Current File with dyn-inspect';

/**
 * The server's `window/showMessage`, shown as VS Code's client would, plus a "Run Current
 * File" button when it says that no run was found (the server cannot run an editor command).
 * `type`: 1 error, 2 warning, else information.
 */
export async function showServerMessage(params: { type: number; message: string }): Promise<void> {
    const actions = params.message.includes('no recorded runs found') ? [RUN_CURRENT_FILE_ACTION] : [];
    const show = params.type === 1 ? window.showErrorMessage : params.type === 2 ? window.showWarningMessage : window.showInformationMessage;
    const choice = await show(params.message, ...actions);
    if (choice === RUN_CURRENT_FILE_ACTION) {
        await commands.executeCommand(Commands.runCurrentFile);
    }
}
