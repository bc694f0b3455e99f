/** Reading `dynInspect.*` settings and turning them into the server's initializationOptions. */
import * as os from 'os';
import * as path from 'path';
import { ConfigurationChangeEvent, WorkspaceFolder, workspace } from 'vscode';
import { CONFIG_SECTION } from './constants';

export type GraphBreakSeverity = 'error' | 'warning' | 'information' | 'hint';

const SEVERITIES: readonly GraphBreakSeverity[] = ['error', 'warning', 'information', 'hint'];

export interface ExtensionSettings {
    /** Interpreter command line (executable first); empty means "not set". */
    interpreter: string[];
    /** Absolute runs folder, or null for the server's default (`<workspace>/.dyn-inspect/runs`). */
    runsDir: string | null;
    graphBreakSeverity: GraphBreakSeverity;
    showLibraryBreaks: boolean;
    showRecompiles: boolean;
}

/** Exactly what the server reads from initializationOptions and didChangeConfiguration. */
export interface InitializationOptions {
    runsDir: string | null;
    graphBreakSeverity: GraphBreakSeverity;
    showLibraryBreaks: boolean;
    showRecompiles: boolean;
    run: string | null;
    /** The extension renders command results itself (details.ts): the server must not also open them. */
    showContent: 'none';
}

/** The folder the server runs for: the first workspace folder (one server per window). */
export function getWorkspaceRoot(): WorkspaceFolder | undefined {
    return workspace.workspaceFolders?.[0];
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function resolveVariables(value: string, folder: WorkspaceFolder | undefined): string {
    let result = value.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (match: string, name: string, envName?: string) => {
        if (name === 'workspaceFolder') {
            return folder ? folder.uri.fsPath : match;
        }
        if (name === 'userHome') {
            return os.homedir();
        }
        return process.env[envName ?? ''] ?? '';
    });
    if (result === '~' || result.startsWith('~/') || result.startsWith('~\\')) {
        result = path.join(os.homedir(), result.slice(1));
    }
    return result;
}

export function getSettings(folder: WorkspaceFolder | undefined = getWorkspaceRoot()): ExtensionSettings {
    const config = workspace.getConfiguration(CONFIG_SECTION, folder?.uri);

    const interpreter = (config.get<unknown[]>('interpreter') ?? [])
        .filter((item): item is string => typeof item === 'string' && item.trim().length > 0)
        .map((item) => resolveVariables(item, folder));

    const rawRunsDir = config.get<string | null>('runsDir');
    let runsDir: string | null = null;
    if (typeof rawRunsDir === 'string' && rawRunsDir.trim()) {
        runsDir = resolveVariables(rawRunsDir.trim(), folder);
        if (!path.isAbsolute(runsDir) && folder) {
            runsDir = path.join(folder.uri.fsPath, runsDir);
        }
    }

    const severity = config.get<string>('graphBreakSeverity');
    return {
        interpreter,
        runsDir,
        graphBreakSeverity: SEVERITIES.includes(severity as GraphBreakSeverity)
            ? (severity as GraphBreakSeverity)
            : 'warning',
        showLibraryBreaks: config.get<boolean>('showLibraryBreaks') !== false,
        showRecompiles: config.get<boolean>('showRecompiles') !== false,
    };
}

export function toInitializationOptions(settings: ExtensionSettings, run: string | null): InitializationOptions {
    return {
        runsDir: settings.runsDir,
        graphBreakSeverity: settings.graphBreakSeverity,
        showLibraryBreaks: settings.showLibraryBreaks,
        showRecompiles: settings.showRecompiles,
        run,
        showContent: 'none',
    };
}

/**
 * What a settings change needs: a new server process (the interpreter changed), a
 * didChangeConfiguration to the running one, or nothing. `trace.server` is applied by
 * vscode-languageclient itself.
 */
export type ConfigurationAction = 'restart' | 'reconfigure' | 'none';

export function classifyConfigurationChange(event: ConfigurationChangeEvent): ConfigurationAction {
    if (event.affectsConfiguration(`${CONFIG_SECTION}.interpreter`)) {
        return 'restart';
    }
    const reconfigureKeys = ['runsDir', 'graphBreakSeverity', 'showLibraryBreaks', 'showRecompiles'];
    if (reconfigureKeys.some((key) => event.affectsConfiguration(`${CONFIG_SECTION}.${key}`))) {
        return 'reconfigure';
    }
    return 'none';
}
