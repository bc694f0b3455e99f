/** Creating, starting, stopping and talking to the language client. */
import * as fs from 'fs';
import { Disposable, LogOutputChannel, Memento, WorkspaceFolder } from 'vscode';
import {
    DidChangeConfigurationNotification,
    Executable,
    ExecuteCommandRequest,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ShowMessageNotification,
    State,
    TransportKind,
} from 'vscode-languageclient/node';
import { SELECTED_RUN_KEY, SERVER_ID, SERVER_NAME, ServerCommands } from './constants';
import { detailsMiddleware } from './details';
import { LaunchError, ServerLaunch, formatCommandLine, resolveServerLaunch } from './launch';
import { traceError, traceInfo } from './log';
import type { LspRunInfo, LspSummary } from './outputs';
import { ExtensionSettings, InitializationOptions, getSettings, getWorkspaceRoot, toInitializationOptions } from './settings';
import { StatusBar, showLaunchError, showServerMessage } from './status';

/** One entry of `dynInspect.listRuns` (inspector/outputs/lsp.py; generated from the server's schema). */
export type RunInfo = LspRunInfo;

/** The result of `dynInspect.summary` (inspector/outputs/lsp.py; generated from the server's schema). */
export type RunSummary = LspSummary;

/** The process the client spawns (stdio). The integration test spawns exactly this. */
export function buildServerOptions(launch: ServerLaunch, cwd: string | undefined): Executable {
    return {
        command: launch.server.command,
        args: launch.server.args,
        transport: TransportKind.stdio,
        options: { cwd, env: { ...process.env, PYTHONUTF8: '1', PYTHONUNBUFFERED: '1' } },
    };
}

/**
 * `showDetails` receives what the code lens command (`dynInspect.showDetails`) returns:
 * VS Code itself drops the results of the server commands that the client registers.
 */
export function buildClientOptions(
    outputChannel: LogOutputChannel,
    initializationOptions: InitializationOptions,
    showDetails?: (result: unknown) => void,
): LanguageClientOptions {
    return {
        // Python files, and the Python cells of any notebook (LSP 3.17 notebook documents:
        // the server puts a recorded cell's findings on the open cell holding its text)
        documentSelector: [{ scheme: 'file', language: 'python' }, { notebook: '*', language: 'python' }],
        outputChannel,
        traceOutputChannel: outputChannel,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        initializationOptions,
        middleware: showDetails ? { executeCommand: detailsMiddleware(showDetails) } : undefined,
    };
}

export interface ServerControllerOptions {
    outputChannel: LogOutputChannel;
    status: StatusBar;
    workspaceState: Memento;
    /** Shows what the code lens command returns (a DetailsView in the extension). */
    showDetails?: (result: unknown) => void;
    /** Replaceable in tests. */
    resolveLaunch?: (settings: ExtensionSettings, folder: WorkspaceFolder | undefined) => Promise<ServerLaunch>;
}

/** Owns the one language client of this window; restarts are serialised. */
export class ServerController implements Disposable {
    private client: LanguageClient | undefined;
    private launch: ServerLaunch | undefined;
    private queue: Promise<void> = Promise.resolve();
    private stateListener: Disposable | undefined;
    private readonly resolveLaunch: (settings: ExtensionSettings, folder: WorkspaceFolder | undefined) => Promise<ServerLaunch>;

    constructor(private readonly options: ServerControllerOptions) {
        this.resolveLaunch = options.resolveLaunch ?? ((settings, folder) => resolveServerLaunch(settings, folder));
    }

    get isRunning(): boolean {
        return this.client?.state === State.Running;
    }

    /** The run chosen with "Select Run", if its folder still exists. */
    get selectedRun(): string | null {
        const run = this.options.workspaceState.get<string>(SELECTED_RUN_KEY);
        return run && fs.existsSync(run) ? run : null;
    }

    /** Stops the running server (if any) and starts a new one with the current settings. */
    restart(): Promise<void> {
        return this.enqueue(() => this.doRestart());
    }

    stop(): Promise<void> {
        return this.enqueue(() => this.doStop());
    }

    /** How to run the CLI: the last successful launch, else resolved now (throws LaunchError). */
    async getLaunch(): Promise<ServerLaunch> {
        await this.queue;
        if (this.launch) {
            return this.launch;
        }
        const folder = getWorkspaceRoot();
        this.launch = await this.resolveLaunch(getSettings(folder), folder);
        return this.launch;
    }

    /** Sends the current settings to the running server. */
    async reconfigure(): Promise<void> {
        if (!this.client || !this.isRunning) {
            return this.restart();
        }
        const settings = toInitializationOptions(getSettings(), this.selectedRun);
        await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: { dynInspect: settings } });
        await this.refreshSummary();
    }

    async listRuns(): Promise<RunInfo[]> {
        return (await this.executeCommand<RunInfo[]>(ServerCommands.listRuns, [])) ?? [];
    }

    async selectRun(runPath: string): Promise<void> {
        await this.options.workspaceState.update(SELECTED_RUN_KEY, runPath);
        await this.executeCommand<unknown>(ServerCommands.selectRun, [runPath]);
        await this.refreshSummary();
    }

    async refreshSummary(): Promise<void> {
        if (!this.isRunning) {
            return;
        }
        try {
            const summary = await this.executeCommand<RunSummary>(ServerCommands.summary, []);
            if (summary) {
                this.options.status.showSummary(summary);
            }
        } catch (error) {
            traceError('dynInspect.summary failed:', error);
        }
    }

    dispose(): void {
        void this.stop();
    }

    /** Runs `task` after the previous start/stop; the queue itself never rejects. */
    private enqueue(task: () => Promise<void>): Promise<void> {
        this.queue = this.queue.then(task).catch((error: unknown) => {
            traceError('dyn-inspect server lifecycle error:', error);
            this.options.status.showError(`dyn-inspect: ${error instanceof Error ? error.message : String(error)}`);
        });
        return this.queue;
    }

    private async executeCommand<T>(command: string, args: unknown[]): Promise<T | undefined> {
        if (!this.client || !this.isRunning) {
            throw new Error('The dyn-inspect language server is not running. Run "dyn-inspect: Restart Server" or see "dyn-inspect: Show Output".');
        }
        return (await this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args })) as T | undefined;
    }

    private async doStop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.stateListener?.dispose();
        this.stateListener = undefined;
        if (!client) {
            return;
        }
        try {
            await client.stop();
        } catch (error) {
            traceError('Stopping the server failed:', error);
        }
    }

    private async doRestart(): Promise<void> {
        await this.doStop();
        this.launch = undefined;
        const { status, outputChannel } = this.options;
        const folder = getWorkspaceRoot();
        const settings = getSettings(folder);
        status.showStarting();

        let launch: ServerLaunch;
        try {
            launch = await this.resolveLaunch(settings, folder);
        } catch (error) {
            if (error instanceof LaunchError) {
                traceError(error.message);
                status.showLaunchProblem(error);
                void showLaunchError(error);
                return;
            }
            throw error;
        }
        this.launch = launch;

        const serverOptions = buildServerOptions(launch, folder?.uri.fsPath);
        traceInfo(`Starting server (${launch.source}): ${formatCommandLine([launch.server.command, ...launch.server.args])}`);
        const client = new LanguageClient(
            SERVER_ID,
            SERVER_NAME,
            serverOptions,
            buildClientOptions(outputChannel, toInitializationOptions(settings, this.selectedRun), this.options.showDetails),
        );
        try {
            await client.start();
        } catch (error) {
            traceError('The server failed to start:', error);
            status.showError('The dyn-inspect language server failed to start. See "dyn-inspect: Show Output".');
            try {
                await client.dispose();
            } catch {
                // It did not start, so there is nothing more to clean up.
            }
            return;
        }
        this.client = client;
        // Replaces the client's own handler, to add "Run Current File" to the no-runs message.
        client.onNotification(ShowMessageNotification.type, (params) => void showServerMessage(params));
        this.stateListener = client.onDidChangeState((event) => {
            // Our own stop() clears this.client first, so these are crashes and the client's own restarts.
            if (this.client !== client) {
                return;
            }
            if (event.newState === State.Stopped) {
                status.showError('The dyn-inspect language server stopped. See "dyn-inspect: Show Output", then "dyn-inspect: Restart Server".');
            } else if (event.newState === State.Running) {
                status.showRunning();
                void this.refreshSummary();
            }
        });
        status.showRunning();
        await this.refreshSummary();
    }
}
