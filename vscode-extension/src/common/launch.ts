/**
 * Deciding how to start the server, in order: the `dynInspect.interpreter` setting, the
 * interpreter selected in the Python extension, `dyn-inspect` on PATH. Each failure is a
 * LaunchError whose message says what to do.
 */
import * as path from 'path';
import { WorkspaceFolder, workspace } from 'vscode';
import { CLI_MODULE, CLI_NAME, SERVER_MODULE, SOURCE_PLACEHOLDER } from './constants';
import { traceInfo, traceWarn } from './log';
import {
    ImportCheck,
    ProcessRunner,
    checkServerModule,
    findOnPath,
    getPythonExtensionInterpreter,
    isExecutableFile,
    runProcess,
} from './python';
import { ExtensionSettings } from './settings';

export type LaunchSource = 'setting' | 'pythonExtension' | 'path';

/** A command line (executable first) run without a shell. */
export interface CommandLine {
    command: string;
    args: string[];
}

export interface ServerLaunch {
    source: LaunchSource;
    /** The language server: `<python> -m dyn_inspect.lsp` or `dyn-inspect lsp`. */
    server: CommandLine;
    /** The CLI for terminal commands (`dyn-inspect FILE.py`, `open`, `export`), without subcommand. */
    cli: CommandLine;
    /** The interpreter command line, when the launch uses one. */
    interpreter?: string[];
}

export type LaunchFailure = 'untrusted' | 'interpreterMissing' | 'notImportable' | 'notFound';

export class LaunchError extends Error {
    constructor(
        readonly kind: LaunchFailure,
        message: string,
        /** The interpreter the message is about, if any (for an "install" action). */
        readonly interpreter?: string[],
    ) {
        super(message);
        this.name = 'LaunchError';
    }
}

export interface LaunchDependencies {
    runProcess: ProcessRunner;
    env: NodeJS.ProcessEnv;
    isTrusted: () => boolean;
    pythonExtensionInterpreter: (folder: WorkspaceFolder | undefined) => Promise<string[] | undefined>;
}

const defaultDependencies: LaunchDependencies = {
    runProcess,
    env: process.env,
    isTrusted: () => workspace.isTrusted,
    pythonExtensionInterpreter: (folder) => getPythonExtensionInterpreter(folder?.uri),
};

function quote(arg: string): string {
    return /^[\w@%+=:,./\\-]+$/.test(arg) ? arg : `"${arg.replace(/"/g, '\\"')}"`;
}

export function formatCommandLine(parts: string[]): string {
    return parts.map(quote).join(' ');
}

/** dyn-inspect installs from its source checkout (README): `pip install -e <checkout>`. */
export function installCommand(interpreter: string[], checkout: string = SOURCE_PLACEHOLDER): string {
    return formatCommandLine([...interpreter, '-m', 'pip', 'install', '-e', checkout]);
}

const SOURCE_LABEL: Record<Exclude<LaunchSource, 'path'>, string> = {
    setting: 'the dynInspect.interpreter setting',
    pythonExtension: 'the Python extension',
};

function failureFor(check: Exclude<ImportCheck, { ok: true }>, interpreter: string[], source: Exclude<LaunchSource, 'path'>): LaunchError {
    const shown = formatCommandLine(interpreter);
    if (check.reason === 'interpreterMissing') {
        const fix =
            source === 'setting'
                ? 'Fix the setting, or clear it to use the Python extension\'s interpreter or dyn-inspect on PATH.'
                : 'Select another interpreter with "Python: Select Interpreter", or set dynInspect.interpreter.';
        return new LaunchError('interpreterMissing', `The Python interpreter from ${SOURCE_LABEL[source]} was not found: ${shown}. ${fix}`, interpreter);
    }
    if (check.notInstalled) {
        return new LaunchError('notImportable', `dyn-inspect is not installed in ${shown}: install it from its source checkout with ${installCommand(interpreter)}`, interpreter);
    }
    return new LaunchError(
        'notImportable',
        `dyn-inspect is installed in ${shown} but "import ${SERVER_MODULE}" failed (${check.detail}). See the dyn-inspect output for details; reinstall with ${installCommand(interpreter)}`,
        interpreter,
    );
}

/**
 * The CLI that belongs to an interpreter: its `dyn-inspect` console script when it sits
 * next to the interpreter (virtual environments, conda), else `<python> -m dyn_inspect.cli`.
 */
export function cliForInterpreter(interpreter: string[]): CommandLine {
    const [command, ...leading] = interpreter;
    if (leading.length === 0 && path.isAbsolute(command)) {
        const dir = path.dirname(command);
        const candidates = [path.join(dir, CLI_NAME), path.join(dir, `${CLI_NAME}.exe`), path.join(dir, 'Scripts', `${CLI_NAME}.exe`)];
        const script = candidates.find(isExecutableFile);
        if (script) {
            return { command: script, args: [] };
        }
    }
    return { command, args: [...leading, '-m', CLI_MODULE] };
}

function pythonLaunch(interpreter: string[], source: Exclude<LaunchSource, 'path'>): ServerLaunch {
    const [command, ...leading] = interpreter;
    return {
        source,
        interpreter,
        server: { command, args: [...leading, '-m', SERVER_MODULE] },
        cli: cliForInterpreter(interpreter),
    };
}

export async function resolveServerLaunch(
    settings: ExtensionSettings,
    folder: WorkspaceFolder | undefined,
    overrides: Partial<LaunchDependencies> = {},
): Promise<ServerLaunch> {
    const deps: LaunchDependencies = { ...defaultDependencies, ...overrides };
    const cwd = folder?.uri.fsPath;

    if (!deps.isTrusted()) {
        throw new LaunchError(
            'untrusted',
            'dyn-inspect is off in Restricted Mode: its language server runs a Python interpreter, so it is not started in an untrusted workspace. Trust this workspace to see graph breaks.',
        );
    }

    // 1. An explicit setting wins and never falls back: a wrong setting should be fixed, not hidden.
    if (settings.interpreter.length > 0) {
        const check = await checkServerModule(settings.interpreter, deps.runProcess, cwd);
        if (!check.ok) {
            throw failureFor(check, settings.interpreter, 'setting');
        }
        return pythonLaunch(settings.interpreter, 'setting');
    }

    // 2. The Python extension's interpreter, when the extension is installed.
    let extensionFailure: LaunchError | undefined;
    const selected = await deps.pythonExtensionInterpreter(folder);
    if (selected && selected.length > 0) {
        const check = await checkServerModule(selected, deps.runProcess, cwd);
        if (check.ok) {
            return pythonLaunch(selected, 'pythonExtension');
        }
        extensionFailure = failureFor(check, selected, 'pythonExtension');
        traceWarn(`${extensionFailure.message} Trying ${CLI_NAME} on PATH.`);
    }

    // 3. `dyn-inspect` on PATH (e.g. installed with pipx).
    const onPath = findOnPath(CLI_NAME, deps.env);
    if (onPath) {
        traceInfo(`Using ${onPath} from PATH.`);
        return { source: 'path', server: { command: onPath, args: ['lsp'] }, cli: { command: onPath, args: [] } };
    }

    if (extensionFailure) {
        throw extensionFailure;
    }
    throw new LaunchError(
        'notFound',
        `dyn-inspect was not found: set dynInspect.interpreter to a Python that has it, select such an interpreter in the Python extension, or install it from its source checkout so that "${CLI_NAME}" is on PATH (pip install -e ${SOURCE_PLACEHOLDER}).`,
    );
}
