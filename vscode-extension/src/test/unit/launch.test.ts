import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { WorkspaceFolder } from 'vscode';
import { LaunchDependencies, LaunchError, ServerLaunch, cliForInterpreter, resolveServerLaunch } from '../../common/launch';
import { mock } from '../mocks/vscode';
import { NOT_FOUND, NO_MODULE, OK, fakeRunner, makeExecutable, makeSettings, tempDir } from './helpers';

/** Awaits `promise`, expecting a LaunchError, and returns it. */
async function launchError(promise: Promise<ServerLaunch>): Promise<LaunchError> {
    try {
        await promise;
    } catch (error) {
        assert.ok(error instanceof LaunchError, `expected a LaunchError, got ${String(error)}`);
        return error;
    }
    assert.fail('expected the launch to fail');
}

suite('resolveServerLaunch', () => {
    let folder: WorkspaceFolder;
    let emptyPath: string;

    setup(() => {
        mock.reset();
        folder = mock.setWorkspace(tempDir()) as unknown as WorkspaceFolder;
        emptyPath = tempDir();
    });

    const never = async (): Promise<string[] | undefined> => assert.fail('the Python extension must not be asked');

    /** The launch for the interpreter setting `interpreter`, which never falls back to the Python extension. */
    const fromSetting = (interpreter: string[], overrides: Partial<LaunchDependencies>): Promise<ServerLaunch> =>
        resolveServerLaunch(makeSettings({ interpreter }), folder, { ...overrides, pythonExtensionInterpreter: never });

    suite('interpreter sources', () => {
        test('setting: checks the import, then starts <python> -m dyn_inspect.lsp', async () => {
            const runner = fakeRunner({ '/envs/a/bin/python': OK });
            const launch = await fromSetting(['/envs/a/bin/python'], { runProcess: runner, env: { PATH: emptyPath } });
            assert.strictEqual(launch.source, 'setting');
            assert.deepStrictEqual(launch.server, { command: '/envs/a/bin/python', args: ['-m', 'dyn_inspect.lsp'] });
            assert.deepStrictEqual(runner.calls.map((c) => [c.command, c.args]), [['/envs/a/bin/python', ['-c', 'import dyn_inspect.lsp']]]);
            assert.strictEqual(runner.calls[0].options?.cwd, folder.uri.fsPath);
        });

        test('setting: keeps the interpreter\'s leading arguments', async () => {
            const runner = fakeRunner({ conda: OK });
            const interpreter = ['conda', 'run', '-n', 'torch', 'python'];
            const launch = await fromSetting(interpreter, { runProcess: runner });
            assert.deepStrictEqual(launch.server, { command: 'conda', args: ['run', '-n', 'torch', 'python', '-m', 'dyn_inspect.lsp'] });
            assert.deepStrictEqual(runner.calls[0].args, ['run', '-n', 'torch', 'python', '-c', 'import dyn_inspect.lsp']);
            assert.deepStrictEqual(launch.cli, { command: 'conda', args: ['run', '-n', 'torch', 'python', '-m', 'dyn_inspect.cli'] });
        });

        test('Python extension: its interpreter is used when the setting is empty', async () => {
            const runner = fakeRunner({ '/envs/selected/bin/python': OK });
            const launch = await resolveServerLaunch(makeSettings(), folder, {
                runProcess: runner,
                env: { PATH: emptyPath },
                pythonExtensionInterpreter: async () => ['/envs/selected/bin/python'],
            });
            assert.strictEqual(launch.source, 'pythonExtension');
            assert.deepStrictEqual(launch.server, { command: '/envs/selected/bin/python', args: ['-m', 'dyn_inspect.lsp'] });
            assert.deepStrictEqual(runner.calls[0].args, ['-c', 'import dyn_inspect.lsp']);
        });

        test('PATH: dyn-inspect lsp when there is no setting and no Python extension', async () => {
            const bin = tempDir();
            const exe = makeExecutable(bin, 'dyn-inspect');
            const runner = fakeRunner({});
            const launch = await resolveServerLaunch(makeSettings(), folder, {
                runProcess: runner,
                env: { PATH: [emptyPath, bin].join(path.delimiter) },
                pythonExtensionInterpreter: async () => undefined,
            });
            assert.strictEqual(launch.source, 'path');
            assert.deepStrictEqual(launch.server, { command: exe, args: ['lsp'] });
            assert.deepStrictEqual(launch.cli, { command: exe, args: [] });
            assert.strictEqual(runner.calls.length, 0);
        });

        test('PATH: used when the Python extension\'s interpreter lacks dyn-inspect', async () => {
            const bin = tempDir();
            const exe = makeExecutable(bin, 'dyn-inspect');
            const launch = await resolveServerLaunch(makeSettings(), folder, {
                runProcess: fakeRunner({ '/usr/bin/python3': NO_MODULE }),
                env: { PATH: bin },
                pythonExtensionInterpreter: async () => ['/usr/bin/python3'],
            });
            assert.strictEqual(launch.source, 'path');
            assert.strictEqual(launch.server.command, exe);
        });

        test('a file on PATH that is not executable is skipped', async () => {
            const bin = tempDir();
            makeExecutable(bin, 'dyn-inspect');
            fs.chmodSync(path.join(bin, 'dyn-inspect'), 0o644);
            const error = await launchError(
                resolveServerLaunch(makeSettings(), folder, { runProcess: fakeRunner({}), env: { PATH: bin }, pythonExtensionInterpreter: async () => undefined }),
            );
            assert.strictEqual(error.kind, 'notFound');
        });
    });

    suite('failures', () => {
        test('setting: interpreter missing, without falling back to the Python extension or PATH', async () => {
            const bin = tempDir();
            makeExecutable(bin, 'dyn-inspect');
            const error = await launchError(fromSetting(['/nope/python'], { runProcess: fakeRunner({ '/nope/python': NOT_FOUND }), env: { PATH: bin } }));
            assert.strictEqual(error.kind, 'interpreterMissing');
            assert.match(error.message, /dynInspect\.interpreter setting was not found: \/nope\/python\. Fix the setting/);
        });

        test('setting: interpreter missing, detected by really running it', async () => {
            const missing = path.join(tempDir(), 'no-such-python');
            const error = await launchError(fromSetting([missing], { env: { PATH: emptyPath } }));
            assert.strictEqual(error.kind, 'interpreterMissing');
            assert.ok(error.message.includes(missing));
        });

        test('setting: dyn_inspect not installed gives the pip command that fixes it', async () => {
            const error = await launchError(fromSetting(['/envs/a/bin/python'], { runProcess: fakeRunner({ '/envs/a/bin/python': NO_MODULE }), env: { PATH: emptyPath } }));
            assert.strictEqual(error.kind, 'notImportable');
            assert.strictEqual(
                error.message,
                'dyn-inspect is not installed in /envs/a/bin/python: install it from its source checkout with /envs/a/bin/python -m pip install -e /path/to/dyn-inspect',
            );
            assert.deepStrictEqual(error.interpreter, ['/envs/a/bin/python']);
        });

        test('setting: module present but its import fails, really running a fake interpreter', async () => {
            const python = makeExecutable(tempDir(), 'python', 'echo "ImportError: cannot import name \'LanguageServer\' from \'pygls.lsp.server\'" >&2; exit 1');
            const error = await launchError(fromSetting([python], { env: { PATH: emptyPath } }));
            assert.strictEqual(error.kind, 'notImportable');
            assert.match(error.message, /is installed in .* but "import dyn_inspect\.lsp" failed \(ImportError: cannot import name 'LanguageServer'/);
        });

        test('Python extension interpreter lacks dyn-inspect and nothing is on PATH', async () => {
            const error = await launchError(
                resolveServerLaunch(makeSettings(), folder, {
                    runProcess: fakeRunner({ '/usr/bin/python3': NO_MODULE }),
                    env: { PATH: emptyPath },
                    pythonExtensionInterpreter: async () => ['/usr/bin/python3'],
                }),
            );
            assert.strictEqual(error.kind, 'notImportable');
            assert.ok(error.message.startsWith('dyn-inspect is not installed in /usr/bin/python3: install it from its source checkout with /usr/bin/python3 -m pip install -e /path/to/dyn-inspect'));
        });

        test('Python extension interpreter missing and nothing is on PATH', async () => {
            const error = await launchError(
                resolveServerLaunch(makeSettings(), folder, {
                    runProcess: fakeRunner({}),
                    env: { PATH: emptyPath },
                    pythonExtensionInterpreter: async () => ['/gone/venv/bin/python'],
                }),
            );
            assert.strictEqual(error.kind, 'interpreterMissing');
            assert.match(error.message, /from the Python extension was not found: \/gone\/venv\/bin\/python\. Select another interpreter/);
        });

        test('nothing found anywhere', async () => {
            const runner = fakeRunner({});
            const error = await launchError(
                resolveServerLaunch(makeSettings(), folder, { runProcess: runner, env: { PATH: emptyPath }, pythonExtensionInterpreter: async () => undefined }),
            );
            assert.strictEqual(error.kind, 'notFound');
            assert.match(error.message, /set dynInspect\.interpreter .*\(pip install -e \/path\/to\/dyn-inspect\)/);
            assert.strictEqual(runner.calls.length, 0);
        });

        test('untrusted workspace: nothing is run, not even the import check', async () => {
            mock.isTrusted = false;
            const bin = tempDir();
            makeExecutable(bin, 'dyn-inspect');
            const runner = fakeRunner({ '/envs/a/bin/python': OK });
            const error = await launchError(fromSetting(['/envs/a/bin/python'], { runProcess: runner, env: { PATH: bin } }));
            assert.strictEqual(error.kind, 'untrusted');
            assert.match(error.message, /Restricted Mode/);
            assert.strictEqual(runner.calls.length, 0);
        });
    });

    suite('CLI for terminal commands', () => {
        test('the console script next to the interpreter', () => {
            const bin = tempDir();
            const python = makeExecutable(bin, 'python');
            const script = makeExecutable(bin, 'dyn-inspect');
            assert.deepStrictEqual(cliForInterpreter([python]), { command: script, args: [] });
        });

        test('python -m dyn_inspect.cli when there is no console script beside it', () => {
            const python = makeExecutable(tempDir(), 'python');
            assert.deepStrictEqual(cliForInterpreter([python]), { command: python, args: ['-m', 'dyn_inspect.cli'] });
        });
    });
});
