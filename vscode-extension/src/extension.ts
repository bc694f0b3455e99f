/** Entry point: wires the output channel, status bar, server and commands together. */
import { ExtensionContext, languages, window, workspace } from 'vscode';
import { registerCommands } from './common/commands';
import { SERVER_NAME } from './common/constants';
import { DetailsView } from './common/details';
import { createLogChannel, traceError } from './common/log';
import { onDidChangePythonInterpreter } from './common/python';
import { ServerController } from './common/server';
import { classifyConfigurationChange, getSettings } from './common/settings';
import { StatusBar } from './common/status';
import { FindingsTree } from './common/tree';

let controller: ServerController | undefined;

/** Runs `fn` once, `delayMs` after the last of a burst of calls. */
function debounce(fn: () => void, delayMs: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    return () => {
        if (timer) {
            clearTimeout(timer);
        }
        timer = setTimeout(fn, delayMs);
    };
}

export async function activate(context: ExtensionContext): Promise<void> {
    const outputChannel = createLogChannel(SERVER_NAME);
    const status = new StatusBar();
    const details = new DetailsView();
    const server = new ServerController({
        outputChannel,
        status,
        workspaceState: context.workspaceState,
        showDetails: (result) => details.show(result),
    });
    controller = server;
    const tree = new FindingsTree();
    context.subscriptions.push(outputChannel, details, status, server, tree, window.registerTreeDataProvider('dynInspect.findings', tree), ...registerCommands(server));

    const refreshSummary = debounce(() => void server.refreshSummary(), 500);
    context.subscriptions.push(
        workspace.onDidChangeConfiguration((event) => {
            const action = classifyConfigurationChange(event);
            if (action === 'restart') {
                void server.restart();
            } else if (action === 'reconfigure') {
                void server.reconfigure();
            }
        }),
        workspace.onDidGrantWorkspaceTrust(() => void server.restart()),
        // New diagnostics usually mean the server picked up a new run.
        languages.onDidChangeDiagnostics(() => refreshSummary()),
    );

    // Not awaited: the import check can take a while (torch), and commands must not wait for it.
    void server.restart();

    try {
        const pythonListener = await onDidChangePythonInterpreter(() => {
            if (getSettings().interpreter.length === 0) {
                void server.restart();
            }
        });
        if (pythonListener) {
            context.subscriptions.push(pythonListener);
        }
    } catch (error) {
        traceError('Could not watch the Python extension for interpreter changes:', error);
    }
}

export async function deactivate(): Promise<void> {
    await controller?.stop();
    controller = undefined;
}
