import * as assert from 'assert';
import * as path from 'path';
import { chooseRun, exportBugReport, registerCommands, runCurrentFile, showBreaks } from '../../common/commands';
import { ServerLaunch } from '../../common/launch';
import { ServerController } from '../../common/server';
import { LanguageClient } from '../mocks/languageclient';
import { Position, Range, Uri, mock } from '../mocks/vscode';
import { OK, fakeRunner, startedServer, tempDir } from './helpers';

const CLI = '/envs/a/bin/dyn-inspect';
const LAUNCH: ServerLaunch = {
    source: 'setting',
    interpreter: ['/envs/a/bin/python'],
    server: { command: '/envs/a/bin/python', args: ['-m', 'dyn_inspect.lsp'] },
    cli: { command: CLI, args: [] },
};

function pythonEditor(file: string, dirty = false): { saves: number } {
    const state = { saves: 0 };
    mock.activeTextEditor = {
        document: {
            languageId: 'python',
            uri: Uri.file(file),
            isDirty: dirty,
            save: async (): Promise<boolean> => {
                state.saves += 1;
                return true;
            },
        },
    };
    return state;
}

suite('commands', () => {
    let root: string;
    let server: ServerController;

    setup(async () => {
        ({ root, server } = await startedServer(LAUNCH));
    });

    test('Run Current File saves the file and runs `dyn-inspect FILE.py` in a terminal', async () => {
        const file = path.join(root, 'train.py');
        const editor = pythonEditor(file, true);
        await runCurrentFile(server);
        assert.strictEqual(editor.saves, 1);
        assert.strictEqual(mock.terminals.length, 1);
        assert.deepStrictEqual(mock.terminals[0].options, { name: 'dyn-inspect: train.py', shellPath: CLI, shellArgs: [file], cwd: root, env: {} });
        assert.ok(mock.terminals[0].shown);
    });

    test('with dynInspect.runsDir set, the CLI gets it as $DYN_INSPECT_RUNS_DIR', async () => {
        mock.configuration = { 'dynInspect.runsDir': 'runs' };
        pythonEditor(path.join(root, 'train.py'));
        await runCurrentFile(server);
        assert.deepStrictEqual(mock.terminals[0].options.env, { DYN_INSPECT_RUNS_DIR: path.join(root, 'runs') });
        mock.saveDialogAnswer = Uri.file(path.join(root, 'report.zip'));
        const runner = fakeRunner({ [CLI]: OK });
        await exportBugReport(server, runner);
        assert.strictEqual(runner.calls[0].options?.env?.DYN_INSPECT_RUNS_DIR, path.join(root, 'runs'));
    });

    test('Run Current File needs a Python file', async () => {
        await runCurrentFile(server);
        assert.strictEqual(mock.terminals.length, 0);
        assert.strictEqual(mock.messages[0].level, 'warning');
    });

    test('Open Inspector runs `dyn-inspect open` (with the selected run, if any)', async () => {
        registerCommands(server);
        await mock.registeredCommands.get('dynInspect.openInspector')?.();
        assert.deepStrictEqual(mock.terminals[0].options.shellArgs, ['open']);
        const run = tempDir();
        await server.selectRun(run);
        await mock.registeredCommands.get('dynInspect.openInspector')?.();
        assert.deepStrictEqual(mock.terminals[1].options.shellArgs, ['open', run]);
    });

    test('Select Run offers the server\'s runs and selects the picked one', async () => {
        const run = tempDir();
        LanguageClient.requestHandler = (_method, params): unknown =>
            (params as { command: string }).command === 'dynInspect.listRuns'
                ? [{ path: run, id: 'run-1', command: 'python train.py', breaks: 4, recompiles: 2, status: 'finished' }]
                : undefined;
        await chooseRun(server);
        const items = mock.quickPicks[0] as { label: string; description: string; detail: string }[];
        assert.deepStrictEqual(
            items.map((item) => [item.label, item.description, item.detail]),
            [['run-1', '4 breaks · 2 recompiles · finished', 'python train.py']],
        );
        const client = LanguageClient.instances[0];
        assert.deepStrictEqual(client.requests.find((r) => (r.params as { command: string }).command === 'dynInspect.selectRun')?.params, {
            command: 'dynInspect.selectRun',
            arguments: [run],
        });
    });

    test('Select Run with no runs says how to record one', async () => {
        LanguageClient.requestHandler = (): unknown => [];
        await chooseRun(server);
        assert.strictEqual(mock.quickPicks.length, 0);
        assert.match(mock.messages[0].message, /No dyn-inspect runs recorded yet/);
    });

    test('Export Bug Report runs `dyn-inspect export -o FILE.zip --force` and reports the file', async () => {
        const target = Uri.file(path.join(root, 'report.zip'));
        mock.saveDialogAnswer = target;
        const runner = fakeRunner({ [CLI]: OK });
        await exportBugReport(server, runner);
        // --force: the save dialog has already confirmed replacing an existing file.
        assert.deepStrictEqual(runner.calls.map((c) => [c.command, c.args, c.options?.cwd]), [[CLI, ['export', '-o', target.fsPath, '--force'], root]]);
        assert.strictEqual(mock.messages[0].message, `Bug report written to ${target.fsPath}`);
    });

    test('Export Bug Report shows the CLI\'s error', async () => {
        mock.saveDialogAnswer = Uri.file(path.join(root, 'report.zip'));
        await exportBugReport(server, fakeRunner({ [CLI]: { exitCode: 2, stdout: '', stderr: 'error: no runs under .dyn-inspect/runs\n' } }));
        assert.strictEqual(mock.messages[0].level, 'error');
        assert.strictEqual(mock.messages[0].message, 'dyn-inspect export failed: error: no runs under .dyn-inspect/runs');
    });

    test('Export Bug Report does nothing when the dialog is cancelled', async () => {
        const runner = fakeRunner({});
        await exportBugReport(server, runner);
        assert.strictEqual(runner.calls.length, 0);
    });

    test('commands that run Python refuse in an untrusted workspace', async () => {
        registerCommands(server);
        pythonEditor(path.join(root, 'train.py'));
        mock.isTrusted = false;
        await mock.registeredCommands.get('dynInspect.runCurrentFile')?.();
        assert.strictEqual(mock.terminals.length, 0);
        assert.match(mock.messages[0].message, /Restricted Mode/);
    });

    test('the status bar list shows only dyn-inspect diagnostics, sorted, and opens Problems', async () => {
        const range = (line: number): Range => new Range(new Position(line, 0), new Position(line, 1));
        mock.diagnostics = [
            [Uri.file(path.join(root, 'b.py')), [{ message: 'Graph break: print()\nmore', source: 'dyn-inspect', range: range(9) }]],
            [
                Uri.file(path.join(root, 'a.py')),
                [
                    { message: 'unused import', source: 'pylint', range: range(0) },
                    { message: 'Recompile: size mismatch', source: 'dyn-inspect', range: range(2) },
                ],
            ],
        ];
        mock.quickPickAnswer = (items: unknown[]): unknown => items[items.length - 1];
        await showBreaks();
        const items = mock.quickPicks[0] as { label: string; description?: string }[];
        assert.deepStrictEqual(
            items.map((item) => [item.label, item.description]),
            [
                ['Recompile: size mismatch', 'a.py:3'],
                ['Graph break: print()', 'b.py:10'],
                ['$(list-flat) Open the Problems panel', 'type "dyn-inspect" in its filter'],
            ],
        );
        assert.strictEqual(mock.executedCommands[0].command, 'workbench.action.problems.focus');
    });
});
