/** The contributed commands: terminal runs of the CLI, run selection, bug report export, problem list. */
import * as path from 'path';
import {
    Disposable,
    ProgressLocation,
    QuickPickItem,
    Range,
    Uri,
    commands,
    languages,
    window,
    workspace,
} from 'vscode';
import { Commands, DIAGNOSTIC_SOURCE } from './constants';
import { CommandLine, LaunchError, formatCommandLine } from './launch';
import { showOutput, traceError, traceInfo } from './log';
import { ProcessRunner, runProcess } from './python';
import { RunInfo, ServerController } from './server';
import { getSettings, getWorkspaceRoot } from './settings';
import { showLaunchError } from './status';

/** The CLI command line for this workspace, or undefined after telling the user why not. */
async function getCli(controller: ServerController): Promise<CommandLine | undefined> {
    try {
        return (await controller.getLaunch()).cli;
    } catch (error) {
        if (error instanceof LaunchError) {
            void showLaunchError(error);
            return undefined;
        }
        throw error;
    }
}

/** The CLI reads and writes runs where the server looks: `dynInspect.runsDir`, via $DYN_INSPECT_RUNS_DIR. */
function cliEnvironment(): Record<string, string> {
    const runsDir = getSettings().runsDir;
    return runsDir ? { DYN_INSPECT_RUNS_DIR: runsDir } : {};
}

/** Runs the CLI in a new integrated terminal (no shell, so no quoting issues); it hosts the live TUI. */
function runInTerminal(controller: ServerController, cli: CommandLine, args: string[], title: string): void {
    const terminal = window.createTerminal({
        name: title,
        shellPath: cli.command,
        shellArgs: [...cli.args, ...args],
        cwd: getWorkspaceRoot()?.uri.fsPath,
        env: cliEnvironment(),
    });
    traceInfo(`Terminal: ${formatCommandLine([cli.command, ...cli.args, ...args])}`);
    terminal.show();
    // A run may have been recorded meanwhile: refresh the status bar when the terminal closes.
    const listener = window.onDidCloseTerminal((closed) => {
        if (closed === terminal) {
            listener.dispose();
            void controller.refreshSummary();
        }
    });
}

export async function runCurrentFile(controller: ServerController): Promise<void> {
    const document = window.activeTextEditor?.document;
    if (!document || document.languageId !== 'python' || document.uri.scheme !== 'file') {
        void window.showWarningMessage('Open a saved Python file to run it with dyn-inspect.');
        return;
    }
    if (document.isDirty && !(await document.save())) {
        return;
    }
    const cli = await getCli(controller);
    if (cli) {
        runInTerminal(controller, cli, [document.uri.fsPath], `dyn-inspect: ${path.basename(document.uri.fsPath)}`);
    }
}

export async function openInspector(controller: ServerController): Promise<void> {
    const cli = await getCli(controller);
    if (cli) {
        const run = controller.selectedRun;
        runInTerminal(controller, cli, run ? ['open', run] : ['open'], 'dyn-inspect: inspector');
    }
}

interface RunPickItem extends QuickPickItem {
    run: RunInfo;
}

export async function chooseRun(controller: ServerController): Promise<void> {
    let runs: RunInfo[];
    try {
        runs = await controller.listRuns();
    } catch (error) {
        void window.showErrorMessage(`Could not list dyn-inspect runs: ${error instanceof Error ? error.message : String(error)}`);
        return;
    }
    if (runs.length === 0) {
        void window.showInformationMessage('No dyn-inspect runs recorded yet. Use "dyn-inspect: Run Current File with dyn-inspect" first.');
        return;
    }
    const selected = controller.selectedRun;
    const items: RunPickItem[] = runs.map((run) => ({
        label: run.id,
        description: `${run.breaks} breaks · ${run.recompiles} recompiles · ${run.status}${run.path === selected ? ' · selected' : ''}`,
        detail: run.command,
        run,
    }));
    const picked = await window.showQuickPick(items, { title: 'dyn-inspect: Select Run', placeHolder: 'Show diagnostics from this run', matchOnDetail: true });
    if (picked) {
        await controller.selectRun(picked.run.path);
    }
}

export async function exportBugReport(controller: ServerController, run: ProcessRunner = runProcess): Promise<void> {
    const cli = await getCli(controller);
    if (!cli) {
        return;
    }
    const root = getWorkspaceRoot()?.uri;
    const target = await window.showSaveDialog({
        title: 'Export dyn-inspect bug report',
        defaultUri: root ? Uri.joinPath(root, 'dyn-inspect-report.zip') : undefined,
        filters: { 'Zip archive': ['zip'] },
        saveLabel: 'Export',
    });
    if (!target) {
        return;
    }
    const selectedRun = controller.selectedRun;
    // The save dialog has already asked whether to replace an existing file.
    const args = [...cli.args, 'export', ...(selectedRun ? [selectedRun] : []), '-o', target.fsPath, '--force'];
    traceInfo(`Export: ${formatCommandLine([cli.command, ...args])}`);
    const result = await window.withProgress(
        { location: ProgressLocation.Notification, title: 'Exporting dyn-inspect bug report…' },
        () => run(cli.command, args, { cwd: root?.fsPath, env: { ...process.env, ...cliEnvironment() } }),
    );
    if (result.exitCode === 0) {
        const choice = await window.showInformationMessage(`Bug report written to ${target.fsPath}`, 'Reveal in File Explorer');
        if (choice) {
            await commands.executeCommand('revealFileInOS', target);
        }
        return;
    }
    traceError(`Export failed (${result.error?.message ?? `exit code ${result.exitCode}`}):\n${result.stderr}`);
    const reason = result.stderr.trim().split(/\r?\n/).pop() || result.error?.message || `exit code ${result.exitCode}`;
    const choice = await window.showErrorMessage(`dyn-inspect export failed: ${reason}`, 'Show Output');
    if (choice) {
        showOutput();
    }
}

interface BreakPickItem extends QuickPickItem {
    uri?: Uri;
    range?: Range;
}

/**
 * The status bar's click: every dyn-inspect diagnostic in one list (VS Code has no API to
 * set the Problems panel's filter), plus an entry that opens the Problems panel.
 */
export async function showBreaks(): Promise<void> {
    const items: BreakPickItem[] = [];
    for (const [uri, diagnostics] of languages.getDiagnostics()) {
        for (const diagnostic of diagnostics) {
            if (diagnostic.source !== DIAGNOSTIC_SOURCE) {
                continue;
            }
            items.push({
                label: diagnostic.message.split(/\r?\n/)[0],
                description: `${workspace.asRelativePath(uri)}:${diagnostic.range.start.line + 1}`,
                uri,
                range: diagnostic.range,
            });
        }
    }
    items.sort((a, b) => (a.description ?? '').localeCompare(b.description ?? '', undefined, { numeric: true }));
    items.push({ label: '$(list-flat) Open the Problems panel', description: 'type "dyn-inspect" in its filter' });
    const picked = await window.showQuickPick(items, {
        title: `dyn-inspect: ${items.length - 1} graph breaks and recompiles`,
        matchOnDescription: true,
    });
    if (!picked) {
        return;
    }
    if (picked.uri && picked.range) {
        await window.showTextDocument(picked.uri, { selection: picked.range });
    } else {
        await commands.executeCommand('workbench.action.problems.focus');
    }
}

export function registerCommands(controller: ServerController): Disposable[] {
    const guarded = (handler: () => Promise<void>) => async (): Promise<void> => {
        if (!workspace.isTrusted) {
            void showLaunchError(new LaunchError('untrusted', 'dyn-inspect commands that run Python are off in Restricted Mode. Trust this workspace to use them.'));
            return;
        }
        try {
            await handler();
        } catch (error) {
            traceError(error);
            void window.showErrorMessage(`dyn-inspect: ${error instanceof Error ? error.message : String(error)}`);
        }
    };
    return [
        commands.registerCommand(Commands.runCurrentFile, guarded(() => runCurrentFile(controller))),
        commands.registerCommand(Commands.openInspector, guarded(() => openInspector(controller))),
        commands.registerCommand(Commands.chooseRun, guarded(() => chooseRun(controller))),
        commands.registerCommand(Commands.exportBugReport, guarded(() => exportBugReport(controller))),
        commands.registerCommand(Commands.restartServer, () => controller.restart()),
        commands.registerCommand(Commands.showOutput, () => showOutput()),
        commands.registerCommand(Commands.showBreaks, () => showBreaks()),
    ];
}
