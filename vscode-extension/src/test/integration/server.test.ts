/**
 * Starts the real Python language server the way the extension does (resolveServerLaunch +
 * buildServerOptions, over stdio) and checks that opening a Python file of a workspace with a
 * recorded run yields diagnostics with source "dyn-inspect".
 *
 * Environment (set by the project's CI script):
 *   DYN_INSPECT_PYTHON        interpreter that has dyn-inspect installed (unset: the suite is skipped)
 *   DYN_INSPECT_IT_WORKSPACE  workspace folder holding .dyn-inspect/runs/<run-id>/
 *   DYN_INSPECT_IT_FILE       Python file with a graph break (absolute, or relative to the workspace)
 */
import * as assert from 'assert';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { fileURLToPath, pathToFileURL } from 'url';
import type { WorkspaceFolder } from 'vscode';
import {
    CodeLensRequest,
    ConfigurationRequest,
    DidOpenTextDocumentNotification,
    ExecuteCommandRequest,
    ExitNotification,
    InitializeRequest,
    InitializedNotification,
    MessageConnection,
    PublishDiagnosticsNotification,
    PublishDiagnosticsParams,
    ShutdownRequest,
    StreamMessageReader,
    StreamMessageWriter,
    createMessageConnection,
} from 'vscode-languageserver-protocol/node';
import { FunctionDetails } from '../../common/details';
import { resolveServerLaunch } from '../../common/launch';
import { buildServerOptions } from '../../common/server';
import { getSettings, toInitializationOptions } from '../../common/settings';
import { mock } from '../mocks/vscode';

const DIAGNOSTICS_TIMEOUT_MS = 120_000;

function requiredEnv(name: string): string {
    const value = process.env[name];
    if (!value) {
        throw new Error(`${name} must be set when DYN_INSPECT_PYTHON is set`);
    }
    return value;
}

function samePath(uri: string, file: string): boolean {
    try {
        return fs.realpathSync(fileURLToPath(uri)) === fs.realpathSync(file);
    } catch {
        return false;
    }
}

suite('integration: real dyn-inspect language server over stdio', function () {
    const python = process.env.DYN_INSPECT_PYTHON;
    let server: ChildProcess | undefined;
    let connection: MessageConnection | undefined;
    let stderr = '';

    suiteSetup(function () {
        if (!python) {
            console.log('    Skipping the integration test: DYN_INSPECT_PYTHON is not set (the CI script sets it).');
            this.skip();
        }
    });

    teardown(async function () {
        if (this.currentTest?.state === 'failed' && stderr) {
            console.log(`--- server stderr ---\n${stderr}\n--- end of server stderr ---`);
        }
        if (connection) {
            try {
                await Promise.race([connection.sendRequest(ShutdownRequest.type), new Promise((resolve) => setTimeout(resolve, 5000))]);
                await connection.sendNotification(ExitNotification.type);
            } catch {
                // The server may already be gone; it is killed below either way.
            }
            connection.dispose();
        }
        server?.kill();
    });

    test('publishes diagnostics with source "dyn-inspect" after didOpen', async () => {
        const workspaceDir = path.resolve(requiredEnv('DYN_INSPECT_IT_WORKSPACE'));
        const file = path.resolve(workspaceDir, requiredEnv('DYN_INSPECT_IT_FILE'));
        assert.ok(fs.existsSync(path.join(workspaceDir, '.dyn-inspect', 'runs')), `${workspaceDir} has no .dyn-inspect/runs`);

        // The extension's own launch code, with the interpreter given as the setting.
        mock.reset();
        const folder = mock.setWorkspace(workspaceDir) as unknown as WorkspaceFolder;
        mock.configuration = { 'dynInspect.interpreter': [python as string] };
        const settings = getSettings(folder);
        const launch = await resolveServerLaunch(settings, folder);
        assert.strictEqual(launch.source, 'setting');
        const executable = buildServerOptions(launch, workspaceDir);

        server = spawn(executable.command, executable.args ?? [], { cwd: executable.options?.cwd, env: executable.options?.env, stdio: 'pipe' });
        server.stderr?.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
        });
        const exited = new Promise<never>((_resolve, reject) => {
            server?.on('exit', (code, signal) => reject(new Error(`the server exited early (code ${code}, signal ${signal})`)));
            server?.on('error', reject);
        });

        const conn = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
        connection = conn;
        const initializationOptions = toInitializationOptions(settings, null);
        const diagnostics = new Promise<PublishDiagnosticsParams>((resolve) => {
            conn.onNotification(PublishDiagnosticsNotification.type, (params) => {
                if (samePath(params.uri, file) && params.diagnostics.some((d) => d.source === 'dyn-inspect')) {
                    resolve(params);
                }
            });
        });
        conn.onRequest(ConfigurationRequest.type, (params) => params.items.map((item) => (item.section === 'dynInspect' ? initializationOptions : null)));
        // Any other server-to-client request (client/registerCapability, window/workDoneProgress/create, ...): accept.
        conn.onRequest((): null => null);
        conn.listen();

        const workspaceUri = pathToFileURL(workspaceDir).href;
        await Promise.race([
            conn.sendRequest(InitializeRequest.type, {
                processId: process.pid,
                clientInfo: { name: 'dyn-inspect integration test' },
                rootUri: workspaceUri,
                workspaceFolders: [{ uri: workspaceUri, name: path.basename(workspaceDir) }],
                initializationOptions,
                capabilities: {
                    textDocument: {
                        synchronization: { dynamicRegistration: true, didSave: true },
                        publishDiagnostics: { relatedInformation: true, versionSupport: true },
                        hover: { dynamicRegistration: true, contentFormat: ['markdown', 'plaintext'] },
                    },
                    workspace: {
                        configuration: true,
                        workspaceFolders: true,
                        didChangeConfiguration: { dynamicRegistration: true },
                        didChangeWatchedFiles: { dynamicRegistration: true },
                        executeCommand: { dynamicRegistration: true },
                    },
                    window: { workDoneProgress: true },
                },
            }),
            exited,
        ]);
        await conn.sendNotification(InitializedNotification.type, {});
        await conn.sendNotification(DidOpenTextDocumentNotification.type, {
            textDocument: { uri: pathToFileURL(file).href, languageId: 'python', version: 1, text: fs.readFileSync(file, 'utf8') },
        });

        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`no dyn-inspect diagnostics for ${file} within ${DIAGNOSTICS_TIMEOUT_MS / 1000} s`)), DIAGNOSTICS_TIMEOUT_MS);
        });
        try {
            const published = await Promise.race([diagnostics, timeout, exited]);
            const ours = published.diagnostics.filter((d) => d.source === 'dyn-inspect');
            assert.ok(ours.length >= 1);
            console.log(`    ${ours.length} dyn-inspect diagnostic(s), first: line ${ours[0].range.start.line + 1}: ${ours[0].message.split('\n')[0]}`);
        } finally {
            clearTimeout(timer);
        }

        // The code lens command: what the extension's middleware shows when a lens is clicked.
        const lenses = (await conn.sendRequest(CodeLensRequest.type, { textDocument: { uri: pathToFileURL(file).href } })) ?? [];
        const lens = lenses.find((l) => l.command?.command === 'dynInspect.showDetails');
        assert.ok(lens?.command, `no dynInspect.showDetails code lens in ${file}`);
        const details = (await conn.sendRequest(ExecuteCommandRequest.type, {
            command: lens.command.command,
            arguments: lens.command.arguments,
        })) as FunctionDetails;
        assert.strictEqual(details.found, true);
        const markdown = details.markdown ?? '';
        assert.match(markdown, /^# `[^`]+` — /); // rendered once, by the server
        console.log(`    code lens "${lens.command.title}" -> ${markdown.split('\n')[0]}`);
    });
});
