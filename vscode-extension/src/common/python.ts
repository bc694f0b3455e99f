/**
 * Finding Python: the Python extension's selected interpreter (optional dependency),
 * executables on PATH, and checking that an interpreter can import the server module.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Disposable, Event, Uri, extensions } from 'vscode';
import { IMPORT_CHECK_TIMEOUT_MS, PYTHON_EXTENSION_ID, SERVER_MODULE } from './constants';
import { traceError, traceInfo } from './log';

// ---------------------------------------------------------------------------
// Running processes
// ---------------------------------------------------------------------------

export interface ProcessResult {
    /** Exit code, or null when the process could not start or was killed. */
    exitCode: number | null;
    stdout: string;
    stderr: string;
    /** Set when the process could not be started (code ENOENT, EACCES, ...) or was killed (timeout). */
    error?: { code?: string; message: string; killed: boolean };
}

export interface ProcessOptions {
    cwd?: string;
    timeoutMs?: number;
    env?: NodeJS.ProcessEnv;
}

export type ProcessRunner = (command: string, args: string[], options?: ProcessOptions) => Promise<ProcessResult>;

/** Runs a command without a shell and never rejects. */
export const runProcess: ProcessRunner = (command, args, options = {}) =>
    new Promise<ProcessResult>((resolve) => {
        execFile(
            command,
            args,
            { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs, windowsHide: true },
            (error, stdout, stderr) => {
                const exitCode = error ? (typeof error.code === 'number' ? error.code : null) : 0;
                resolve({
                    exitCode,
                    stdout: String(stdout),
                    stderr: String(stderr),
                    error:
                        error && exitCode === null
                            ? { code: typeof error.code === 'string' ? error.code : undefined, message: error.message, killed: error.killed === true }
                            : undefined,
                });
            },
        );
    });

// ---------------------------------------------------------------------------
// Checking an interpreter
// ---------------------------------------------------------------------------

export type ImportCheck =
    | { ok: true }
    /** The interpreter itself could not be run. */
    | { ok: false; reason: 'interpreterMissing'; detail: string }
    /** It ran, but `import dyn_inspect.lsp` failed; `notInstalled` when dyn_inspect itself is absent. */
    | { ok: false; reason: 'notImportable'; notInstalled: boolean; detail: string };

const MISSING_CODES = new Set(['ENOENT', 'EACCES', 'ENOTDIR', 'EPERM']);

function lastLine(text: string): string {
    const lines = text.trim().split(/\r?\n/);
    return lines[lines.length - 1] ?? '';
}

/** Runs `<interpreter...> -c "import dyn_inspect.lsp"`. */
export async function checkServerModule(
    interpreter: string[],
    run: ProcessRunner = runProcess,
    cwd?: string,
): Promise<ImportCheck> {
    const [command, ...leading] = interpreter;
    const result = await run(command, [...leading, '-c', `import ${SERVER_MODULE}`], {
        cwd,
        timeoutMs: IMPORT_CHECK_TIMEOUT_MS,
    });
    if (result.exitCode === 0) {
        return { ok: true };
    }
    const code = result.error?.code;
    if (code && MISSING_CODES.has(code)) {
        return { ok: false, reason: 'interpreterMissing', detail: `${code}: ${result.error?.message ?? ''}`.trim() };
    }
    if (result.error?.killed) {
        return {
            ok: false,
            reason: 'notImportable',
            notInstalled: false,
            detail: `import ${SERVER_MODULE} did not finish within ${IMPORT_CHECK_TIMEOUT_MS / 1000} s`,
        };
    }
    const notInstalled = /No module named '?dyn_inspect/.test(result.stderr);
    return {
        ok: false,
        reason: 'notImportable',
        notInstalled,
        detail: lastLine(result.stderr) || result.error?.message || `exit code ${result.exitCode}`,
    };
}

// ---------------------------------------------------------------------------
// PATH
// ---------------------------------------------------------------------------

export function isExecutableFile(file: string): boolean {
    try {
        if (!fs.statSync(file).isFile()) {
            return false;
        }
        fs.accessSync(file, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/** Like `which name`: the first executable `name` on PATH (with PATHEXT on Windows). */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
    const pathValue = env.PATH ?? env.Path ?? '';
    const extensionsToTry = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
    for (const dir of pathValue.split(path.delimiter)) {
        if (!dir) {
            continue;
        }
        for (const ext of extensionsToTry) {
            const candidate = path.join(dir, name + ext.toLowerCase());
            if (isExecutableFile(candidate)) {
                return candidate;
            }
        }
    }
    return undefined;
}

// ---------------------------------------------------------------------------
// The Python extension (ms-python.python), optional
// ---------------------------------------------------------------------------

/** The part of ms-python.python's exported API this extension uses. */
export interface PythonExtensionApi {
    ready?: Promise<void>;
    environments?: {
        getActiveEnvironmentPath(resource?: Uri): { id: string; path: string };
        resolveEnvironment(
            environment: { id: string; path: string } | string,
        ): Promise<{ executable: { uri?: Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath?: Event<unknown>;
    };
}

/** The Python extension's API, or undefined when it isn't installed or exposes no environments API. */
export async function getPythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
    const extension = extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (!extension) {
        return undefined;
    }
    try {
        const api = extension.isActive ? extension.exports : await extension.activate();
        if (!api?.environments) {
            traceInfo(`${PYTHON_EXTENSION_ID} has no environments API; not using it.`);
            return undefined;
        }
        await api.ready;
        return api;
    } catch (error) {
        traceError(`Could not activate ${PYTHON_EXTENSION_ID}:`, error);
        return undefined;
    }
}

/** The interpreter selected in the Python extension for `resource`, as a command line. */
export async function getPythonExtensionInterpreter(resource?: Uri): Promise<string[] | undefined> {
    const api = await getPythonExtensionApi();
    if (!api?.environments) {
        return undefined;
    }
    try {
        const active = api.environments.getActiveEnvironmentPath(resource);
        const resolved = await api.environments.resolveEnvironment(active);
        const executable = resolved?.executable.uri?.fsPath;
        if (!executable) {
            traceInfo(`The Python extension's environment ${active.path} has no executable.`);
            return undefined;
        }
        return [executable];
    } catch (error) {
        traceError('Could not get the interpreter from the Python extension:', error);
        return undefined;
    }
}

/** Calls `listener` when the interpreter selected in the Python extension changes. */
export async function onDidChangePythonInterpreter(listener: () => void): Promise<Disposable | undefined> {
    const api = await getPythonExtensionApi();
    return api?.environments?.onDidChangeActiveEnvironmentPath?.(() => listener());
}
