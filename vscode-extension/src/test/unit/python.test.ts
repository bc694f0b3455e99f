import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { Uri as MockUri, mock } from '../mocks/vscode';
import { checkServerModule, findOnPath, getPythonExtensionInterpreter, runProcess } from '../../common/python';
import { NOT_FOUND, NO_MODULE, OK, fakeRunner, makeExecutable, tempDir } from './helpers';

interface FakeApi {
    ready: Promise<void>;
    environments: {
        getActiveEnvironmentPath(resource?: unknown): { id: string; path: string };
        resolveEnvironment(env: unknown): Promise<{ executable: { uri?: MockUri } } | undefined>;
    };
}

function installPythonExtension(api: FakeApi | undefined, active = true): { activations: number } {
    const state = { activations: 0 };
    mock.extensions['ms-python.python'] = {
        isActive: active,
        exports: active ? api : undefined,
        activate: async (): Promise<unknown> => {
            state.activations += 1;
            return api;
        },
    };
    return state;
}

suite('python', () => {
    setup(() => mock.reset());

    suite('checkServerModule', () => {
        test('runs <python> -c "import dyn_inspect.lsp"', async () => {
            const runner = fakeRunner({ py: OK });
            assert.deepStrictEqual(await checkServerModule(['py', '-X', 'utf8'], runner, '/ws'), { ok: true });
            assert.deepStrictEqual(runner.calls[0].args, ['-X', 'utf8', '-c', 'import dyn_inspect.lsp']);
            assert.strictEqual(runner.calls[0].options?.cwd, '/ws');
        });

        test('classifies a missing interpreter, a missing module and a timeout', async () => {
            assert.strictEqual(((await checkServerModule(['py'], fakeRunner({ py: NOT_FOUND }))) as { reason: string }).reason, 'interpreterMissing');
            assert.deepStrictEqual(await checkServerModule(['py'], fakeRunner({ py: NO_MODULE })), {
                ok: false,
                reason: 'notImportable',
                notInstalled: true,
                detail: "ModuleNotFoundError: No module named 'dyn_inspect'",
            });
            const timedOut = await checkServerModule(
                ['py'],
                fakeRunner({ py: { exitCode: null, stdout: '', stderr: '', error: { message: 'killed', killed: true } } }),
            );
            assert.match((timedOut as { detail: string }).detail, /did not finish/);
        });

        test('the real runner reports a spawn failure and exit codes', async () => {
            const missing = await runProcess(path.join(tempDir(), 'missing'), []);
            assert.strictEqual(missing.exitCode, null);
            assert.strictEqual(missing.error?.code, 'ENOENT');
            const failing = await runProcess(makeExecutable(tempDir(), 'fails', 'echo oops >&2; exit 3'), []);
            assert.strictEqual(failing.exitCode, 3);
            assert.strictEqual(failing.stderr.trim(), 'oops');
            assert.strictEqual(failing.error, undefined);
        });
    });

    suite('findOnPath', () => {
        test('returns the first executable match in PATH order', () => {
            const first = tempDir();
            const second = tempDir();
            fs.writeFileSync(path.join(first, 'dyn-inspect'), 'not executable', { mode: 0o644 });
            const expected = makeExecutable(second, 'dyn-inspect');
            makeExecutable(tempDir(), 'dyn-inspect');
            assert.strictEqual(findOnPath('dyn-inspect', { PATH: ['', first, second].join(path.delimiter) }), expected);
            assert.strictEqual(findOnPath('dyn-inspect', { PATH: first }), undefined);
            assert.strictEqual(findOnPath('dyn-inspect', {}), undefined);
        });
    });

    suite('getPythonExtensionInterpreter', () => {
        const api = (executable: string | undefined): FakeApi => ({
            ready: Promise.resolve(),
            environments: {
                getActiveEnvironmentPath: () => ({ id: 'env', path: '/envs/selected' }),
                resolveEnvironment: async () => ({ executable: { uri: executable ? MockUri.file(executable) : undefined } }),
            },
        });

        test('undefined when the Python extension is not installed', async () => {
            assert.strictEqual(await getPythonExtensionInterpreter(), undefined);
        });

        test('activates the extension if needed and returns the resolved executable', async () => {
            const state = installPythonExtension(api('/envs/selected/bin/python'), false);
            assert.deepStrictEqual(await getPythonExtensionInterpreter(), ['/envs/selected/bin/python']);
            assert.strictEqual(state.activations, 1);
        });

        test('undefined when the environment has no executable or the API is too old', async () => {
            installPythonExtension(api(undefined));
            assert.strictEqual(await getPythonExtensionInterpreter(), undefined);
            installPythonExtension({ ready: Promise.resolve() } as unknown as FakeApi);
            assert.strictEqual(await getPythonExtensionInterpreter(), undefined);
        });

        test('undefined (and logged) when the API throws', async () => {
            const broken = api('/x');
            broken.environments.resolveEnvironment = async () => {
                throw new Error('discovery failed');
            };
            installPythonExtension(broken);
            assert.strictEqual(await getPythonExtensionInterpreter(), undefined);
        });
    });
});
