/** Shared fixtures for the unit tests. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Memento } from 'vscode';
import type { ServerLaunch } from '../../common/launch';
import { createLogChannel } from '../../common/log';
import type { ProcessOptions, ProcessResult, ProcessRunner } from '../../common/python';
import { ServerController, ServerControllerOptions } from '../../common/server';
import type { ExtensionSettings } from '../../common/settings';
import { StatusBar } from '../../common/status';
import { LanguageClient } from '../mocks/languageclient';
import { mock } from '../mocks/vscode';

export function makeSettings(overrides: Partial<ExtensionSettings> = {}): ExtensionSettings {
    return {
        interpreter: [],
        runsDir: null,
        graphBreakSeverity: 'warning',
        showLibraryBreaks: true,
        showRecompiles: true,
        ...overrides,
    };
}

const tempDirs: string[] = [];
// The unit tests' folders go when the test process ends, passed or failed: a run of the
// suite leaves nothing in the temp folder.
process.on('exit', () => {
    for (const dir of tempDirs) {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

export function tempDir(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dyn-inspect-ext-test-'));
    tempDirs.push(dir);
    return dir;
}

/** Creates an executable shell script `dir/name` and returns its path. */
export function makeExecutable(dir: string, name: string, body = 'exit 0'): string {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, name);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
}

export const OK: ProcessResult = { exitCode: 0, stdout: '', stderr: '' };
export const NOT_FOUND: ProcessResult = {
    exitCode: null,
    stdout: '',
    stderr: '',
    error: { code: 'ENOENT', message: 'spawn ENOENT', killed: false },
};
export const NO_MODULE: ProcessResult = {
    exitCode: 1,
    stdout: '',
    stderr: "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'dyn_inspect'\n",
};

export interface RecordingRunner extends ProcessRunner {
    calls: { command: string; args: string[]; options?: ProcessOptions }[];
}

/** A ProcessRunner answering by executable (first element of the command line). */
export function fakeRunner(results: Record<string, ProcessResult>): RecordingRunner {
    const calls: RecordingRunner['calls'] = [];
    const runner = (async (command: string, args: string[], options?: ProcessOptions): Promise<ProcessResult> => {
        calls.push({ command, args, options });
        return results[command] ?? NOT_FOUND;
    }) as RecordingRunner;
    runner.calls = calls;
    return runner;
}

export function memento(initial: Record<string, unknown> = {}): Memento {
    const values = new Map<string, unknown>(Object.entries(initial));
    return {
        keys: () => [...values.keys()],
        get: <T>(key: string, defaultValue?: T): T | undefined => (values.has(key) ? (values.get(key) as T) : defaultValue),
        update: async (key: string, value: unknown): Promise<void> => {
            values.set(key, value);
        },
    } as Memento;
}

/**
 * A fresh mock window (what the mocks recorded is reset) on a new temporary workspace, and a
 * ServerController on it started with `launch`; `options` adds to or replaces its options.
 */
export async function startedServer(launch: ServerLaunch, options: Partial<ServerControllerOptions> = {}): Promise<{ root: string; server: ServerController }> {
    mock.reset();
    LanguageClient.reset();
    const root = tempDir();
    mock.setWorkspace(root);
    const server = new ServerController({
        outputChannel: createLogChannel('dyn-inspect'),
        status: new StatusBar(),
        workspaceState: memento(),
        resolveLaunch: async () => launch,
        ...options,
    });
    await server.restart();
    return { root, server };
}
