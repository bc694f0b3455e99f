import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { LogOutputChannel, WorkspaceFolder } from 'vscode';
import { LaunchError, ServerLaunch, resolveServerLaunch } from '../../common/launch';
import { createLogChannel } from '../../common/log';
import { ServerController } from '../../common/server';
import { ExtensionSettings } from '../../common/settings';
import { StatusBar } from '../../common/status';
import { LanguageClient, State } from '../mocks/languageclient';
import { Uri, mock } from '../mocks/vscode';
import { NO_MODULE, OK, fakeRunner, memento, tempDir } from './helpers';

const LAUNCH: ServerLaunch = {
    source: 'setting',
    interpreter: ['/envs/a/bin/python'],
    server: { command: '/envs/a/bin/python', args: ['-m', 'dyn_inspect.lsp'] },
    cli: { command: '/envs/a/bin/python', args: ['-m', 'dyn_inspect.cli'] },
};

type Resolver = (settings: ExtensionSettings, folder: WorkspaceFolder | undefined) => Promise<ServerLaunch>;

suite('ServerController', () => {
    let outputChannel: LogOutputChannel;
    let status: StatusBar;
    let root: string;

    setup(() => {
        mock.reset();
        LanguageClient.reset();
        root = tempDir();
        mock.setWorkspace(root);
        outputChannel = createLogChannel('dyn-inspect');
        status = new StatusBar();
        LanguageClient.requestHandler = (method, params): unknown => {
            const command = (params as { command: string }).command;
            if (method === 'workspace/executeCommand' && command === 'dynInspect.summary') {
                return { breaks: 2, recompiles: 1, run: `${root}/.dyn-inspect/runs/20250101-1` };
            }
            return undefined;
        };
    });

    function controller(resolveLaunch: Resolver, state = memento()): ServerController {
        return new ServerController({ outputChannel, status, workspaceState: state, resolveLaunch });
    }

    test('starts the client over stdio with the settings as initializationOptions, then shows the summary', async () => {
        mock.configuration = { 'dynInspect.graphBreakSeverity': 'hint', 'dynInspect.showLibraryBreaks': false };
        const server = controller(async () => LAUNCH);
        await server.restart();

        assert.strictEqual(LanguageClient.instances.length, 1);
        const client = LanguageClient.instances[0];
        assert.strictEqual(client.id, 'dynInspect');
        const serverOptions = client.serverOptions as { command: string; args: string[]; transport: number; options: { cwd: string; env: NodeJS.ProcessEnv } };
        assert.strictEqual(serverOptions.command, '/envs/a/bin/python');
        assert.deepStrictEqual(serverOptions.args, ['-m', 'dyn_inspect.lsp']);
        assert.strictEqual(serverOptions.transport, 0 /* stdio */);
        assert.strictEqual(serverOptions.options.cwd, root);
        const clientOptions = client.clientOptions as { documentSelector: unknown; initializationOptions: unknown };
        assert.deepStrictEqual(clientOptions.documentSelector, [
            { scheme: 'file', language: 'python' },
            { notebook: '*', language: 'python' },
        ]);
        assert.deepStrictEqual(clientOptions.initializationOptions, {
            runsDir: null,
            graphBreakSeverity: 'hint',
            showLibraryBreaks: false,
            showRecompiles: true,
            run: null,
            showContent: 'none',
        });
        assert.strictEqual(client.state, State.Running);
        assert.strictEqual(status.item.text, '$(flame) 2 breaks · 1 recompile');
        assert.strictEqual(status.item.command, 'dynInspect.showBreaks');
        assert.deepStrictEqual(client.requests[0], { method: 'workspace/executeCommand', params: { command: 'dynInspect.summary', arguments: [] } });
    });

    test('the server\'s "no runs found" message offers Run Current File; other messages show as they are', async () => {
        const server = controller(async () => LAUNCH);
        await server.restart();
        const handler = LanguageClient.instances[0].notificationHandlers.get('window/showMessage') as (params: { type: number; message: string }) => void;
        assert.ok(handler, 'no window/showMessage handler');
        mock.messageAnswer = 'Run Current File with dyn-inspect';
        handler({ type: 3, message: 'dyn-inspect: no recorded runs found in /w (looked for .dyn-inspect/runs ...)' });
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.deepStrictEqual(mock.messages.at(-1), {
            level: 'info',
            message: 'dyn-inspect: no recorded runs found in /w (looked for .dyn-inspect/runs ...)',
            items: ['Run Current File with dyn-inspect'],
        });
        assert.ok(mock.executedCommands.some((c) => c.command === 'dynInspect.runCurrentFile'));
        mock.messageAnswer = undefined;
        handler({ type: 2, message: 'dyn-inspect: something else' });
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.deepStrictEqual(mock.messages.at(-1), { level: 'warning', message: 'dyn-inspect: something else', items: [] });
    });

    test('restart stops the previous client first', async () => {
        const server = controller(async () => LAUNCH);
        await server.restart();
        await server.restart();
        assert.strictEqual(LanguageClient.instances.length, 2);
        assert.ok(LanguageClient.instances[0].stopped);
        assert.strictEqual(LanguageClient.instances[1].state, State.Running);
    });

    test('untrusted workspace: no client, no process, status and message say so', async () => {
        mock.isTrusted = false;
        const runner = fakeRunner({ '/envs/a/bin/python': OK });
        mock.configuration = { 'dynInspect.interpreter': ['/envs/a/bin/python'] };
        const server = controller((settings, folder) => resolveServerLaunch(settings, folder, { runProcess: runner }));
        await server.restart();
        assert.strictEqual(LanguageClient.instances.length, 0);
        assert.strictEqual(runner.calls.length, 0);
        assert.strictEqual(status.item.text, '$(shield) dyn-inspect');
        assert.match(String(status.item.tooltip), /Restricted Mode/);
        assert.strictEqual(mock.messages[0].level, 'info');
        assert.deepStrictEqual(mock.messages[0].items, ['Manage Workspace Trust']);
    });

    test('a launch error is shown with its fix, and no client is created', async () => {
        mock.configuration = { 'dynInspect.interpreter': ['/envs/a/bin/python'] };
        const runner = fakeRunner({ '/envs/a/bin/python': NO_MODULE });
        const server = controller((settings, folder) => resolveServerLaunch(settings, folder, { runProcess: runner, env: { PATH: '' } }));
        await server.restart();
        assert.strictEqual(LanguageClient.instances.length, 0);
        assert.strictEqual(mock.messages[0].level, 'error');
        assert.strictEqual(mock.messages[0].message, 'dyn-inspect is not installed in /envs/a/bin/python: install it from its source checkout with /envs/a/bin/python -m pip install -e /path/to/dyn-inspect');
        assert.deepStrictEqual(mock.messages[0].items, ['Install dyn-inspect…', 'Open Settings', 'Show Output']);
        assert.strictEqual(status.item.text, '$(warning) dyn-inspect');
        await assert.rejects(server.getLaunch(), LaunchError);
    });

    test('the "Install dyn-inspect…" button installs the chosen source checkout and restarts after it succeeds', async () => {
        mock.messageAnswer = 'Install dyn-inspect…';
        const checkout = tempDir();
        fs.writeFileSync(path.join(checkout, 'pyproject.toml'), '[project]\nname = "dyn-inspect"\n');
        mock.openDialogAnswer = [Uri.file(checkout)];
        let restarts = 0;
        mock.registeredCommands.set('dynInspect.restartServer', () => {
            restarts += 1;
        });
        const server = controller(async () => {
            throw new LaunchError('notImportable', 'not installed', ['/envs/a/bin/python']);
        });
        await server.restart();
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.deepStrictEqual(mock.terminals[0].options.shellArgs, ['-m', 'pip', 'install', '-e', checkout]);
        assert.strictEqual(mock.terminals[0].options.shellPath, '/envs/a/bin/python');
        mock.terminals[0].exitStatus = { code: 0 };
        mock.terminals[0].dispose();
        await new Promise((resolve) => setImmediate(resolve));
        assert.strictEqual(restarts, 1);
    });

    test('a folder that is not a dyn-inspect checkout is refused, nothing runs', async () => {
        mock.messageAnswer = 'Install dyn-inspect…';
        const other = tempDir();
        fs.writeFileSync(path.join(other, 'pyproject.toml'), '[project]\nname = "something-else"\n');
        mock.openDialogAnswer = [Uri.file(other)];
        const server = controller(async () => {
            throw new LaunchError('notImportable', 'not installed', ['/envs/a/bin/python']);
        });
        await server.restart();
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.strictEqual(mock.terminals.length, 0);
        assert.match(mock.messages.at(-1)?.message ?? '', /is not a dyn-inspect checkout/);
    });

    test('a server that fails to start is reported and disposed', async () => {
        LanguageClient.startError = new Error('Pending response rejected since connection got disposed');
        const server = controller(async () => LAUNCH);
        await server.restart();
        assert.ok(LanguageClient.instances[0].disposed);
        assert.strictEqual(server.isRunning, false);
        assert.match(String(status.item.tooltip), /failed to start/);
    });

    test('an unexpected error during a restart does not block later restarts', async () => {
        let calls = 0;
        const server = controller(async () => {
            calls += 1;
            if (calls === 1) {
                throw new Error('boom');
            }
            return LAUNCH;
        });
        await server.restart();
        assert.match(String(status.item.tooltip), /boom/);
        await server.restart();
        assert.strictEqual(server.isRunning, true);
    });

    test('a crash after start shows up in the status bar, and clears when the client restarts it', async () => {
        const server = controller(async () => LAUNCH);
        await server.restart();
        LanguageClient.instances[0].setState(State.Stopped);
        assert.strictEqual(status.item.text, '$(warning) dyn-inspect');
        // The client restarted the server by itself.
        LanguageClient.instances[0].setState(State.Running);
        await new Promise((resolve) => setImmediate(resolve));
        assert.strictEqual(status.item.text, '$(flame) 2 breaks · 1 recompile');
    });

    test('reconfigure sends didChangeConfiguration under "dynInspect"', async () => {
        const server = controller(async () => LAUNCH);
        await server.restart();
        mock.configuration = { 'dynInspect.showRecompiles': false };
        await server.reconfigure();
        assert.deepStrictEqual(LanguageClient.instances[0].notifications, [
            {
                method: 'workspace/didChangeConfiguration',
                params: { settings: { dynInspect: { runsDir: null, graphBreakSeverity: 'warning', showLibraryBreaks: true, showRecompiles: false, run: null, showContent: 'none' } } },
            },
        ]);
        assert.strictEqual(LanguageClient.instances.length, 1);
    });

    test('selectRun calls the server, remembers the run and passes it at the next start', async () => {
        const run = tempDir();
        const server = controller(async () => LAUNCH);
        await server.restart();
        await server.selectRun(run);
        assert.deepStrictEqual(LanguageClient.instances[0].requests[1].params, { command: 'dynInspect.selectRun', arguments: [run] });
        assert.strictEqual(server.selectedRun, run);
        await server.restart();
        assert.strictEqual((LanguageClient.instances[1].clientOptions as { initializationOptions: { run: string } }).initializationOptions.run, run);
    });

    test('listRuns returns the server\'s list, and fails clearly when no server runs', async () => {
        const runs = [{ path: '/r/1', id: '1', command: 'python train.py', breaks: 3, recompiles: 0, status: 'finished' }];
        LanguageClient.requestHandler = (): unknown => runs;
        const server = controller(async () => LAUNCH);
        await assert.rejects(server.listRuns(), /not running/);
        await server.restart();
        assert.deepStrictEqual(await server.listRuns(), runs);
    });
});
