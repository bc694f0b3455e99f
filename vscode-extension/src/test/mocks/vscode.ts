/**
 * Mock of the parts of the `vscode` API the extension uses. Tests steer it through `mock`
 * (settings, trust, installed extensions, answers to dialogs) and read what was shown.
 */
import * as path from 'path';
import { pathToFileURL } from 'url';

export class Uri {
    private constructor(
        readonly scheme: string,
        readonly fsPath: string,
    ) {}

    static file(fsPath: string): Uri {
        return new Uri('file', path.resolve(fsPath));
    }

    static joinPath(base: Uri, ...segments: string[]): Uri {
        return new Uri(base.scheme, path.join(base.fsPath, ...segments));
    }

    get path(): string {
        return this.fsPath;
    }

    toString(): string {
        return pathToFileURL(this.fsPath).href;
    }
}

export class Position {
    constructor(
        readonly line: number,
        readonly character: number,
    ) {}
}

export class Range {
    constructor(
        readonly start: Position,
        readonly end: Position,
    ) {}
}

export class ThemeColor {
    constructor(readonly id: string) {}
}

export enum StatusBarAlignment {
    Left = 1,
    Right = 2,
}

export enum ProgressLocation {
    SourceControl = 1,
    Window = 10,
    Notification = 15,
}

export class Disposable {
    constructor(private readonly callOnDispose: () => void) {}
    dispose(): void {
        this.callOnDispose();
    }
}

type Listener<T> = (value: T) => unknown;

export class EventEmitter<T> {
    private listeners: Listener<T>[] = [];
    readonly event = (listener: Listener<T>): Disposable => {
        this.listeners.push(listener);
        return new Disposable(() => {
            this.listeners = this.listeners.filter((l) => l !== listener);
        });
    };
    fire(value: T): void {
        [...this.listeners].forEach((listener) => listener(value));
    }
    dispose(): void {
        this.listeners = [];
    }
}

export enum DiagnosticSeverity {
    Error = 0,
    Warning = 1,
    Information = 2,
    Hint = 3,
}

export enum TreeItemCollapsibleState {
    None = 0,
    Collapsed = 1,
    Expanded = 2,
}

export class ThemeIcon {
    constructor(readonly id: string) {}
}

export class TreeItem {
    description?: string;
    tooltip?: string;
    iconPath?: ThemeIcon;
    resourceUri?: Uri;
    command?: { command: string; title: string; arguments?: unknown[] };
    constructor(
        readonly label: string,
        readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
    ) {}
}

export interface WorkspaceFolder {
    uri: Uri;
    name: string;
    index: number;
}

export interface MockTerminal {
    options: { name?: string; shellPath?: string; shellArgs?: string[]; cwd?: string; env?: Record<string, string> };
    shown: boolean;
    exitStatus: { code: number | undefined } | undefined;
    show(): void;
    dispose(): void;
}

export interface MockExtension {
    isActive: boolean;
    exports: unknown;
    activate(): Promise<unknown>;
}

/** An output channel made with window.createOutputChannel; `text` is what was appended. */
export interface MockOutputChannel {
    name: string;
    /** The languageId argument (a string), or the options object ({ log: true }). */
    languageOrOptions: unknown;
    text: string;
    /** show() calls, each with its preserveFocus argument. */
    shows: (boolean | undefined)[];
    disposed: boolean;
}

export interface MockDiagnostic {
    message: string;
    source?: string;
    range: Range;
    code?: string | number | { value: string | number };
    severity?: DiagnosticSeverity;
}

/** Test-side controls and records. */
export const mock = {
    isTrusted: true,
    workspaceFolders: undefined as WorkspaceFolder[] | undefined,
    /** Values for workspace.getConfiguration(section).get(key), keyed "section.key". */
    configuration: {} as Record<string, unknown>,
    extensions: {} as Record<string, MockExtension>,
    diagnostics: [] as [Uri, MockDiagnostic[]][],
    treeProviders: new Map<string, unknown>(),
    activeTextEditor: undefined as unknown,
    /** Answer to the next message/quick pick/save dialog. */
    messageAnswer: undefined as string | undefined,
    quickPickAnswer: (items: unknown[]): unknown => items[0],
    saveDialogAnswer: undefined as Uri | undefined,
    openDialogAnswer: undefined as Uri[] | undefined,
    messages: [] as { level: 'info' | 'warning' | 'error'; message: string; items: string[] }[],
    terminals: [] as MockTerminal[],
    quickPicks: [] as unknown[][],
    executedCommands: [] as { command: string; args: unknown[] }[],
    registeredCommands: new Map<string, (...args: unknown[]) => unknown>(),
    logLines: [] as string[],
    outputChannels: [] as MockOutputChannel[],
    statusBarItems: [] as Record<string, unknown>[],
    didCloseTerminal: new EventEmitter<MockTerminal>(),
    didChangeConfiguration: new EventEmitter<unknown>(),
    didGrantWorkspaceTrust: new EventEmitter<void>(),
    didChangeDiagnostics: new EventEmitter<unknown>(),

    reset(): void {
        mock.isTrusted = true;
        mock.workspaceFolders = undefined;
        mock.configuration = {};
        mock.extensions = {};
        mock.diagnostics = [];
        mock.activeTextEditor = undefined;
        mock.messageAnswer = undefined;
        mock.quickPickAnswer = (items: unknown[]): unknown => items[0];
        mock.saveDialogAnswer = undefined;
        mock.openDialogAnswer = undefined;
        mock.messages = [];
        mock.terminals = [];
        mock.quickPicks = [];
        mock.executedCommands = [];
        mock.registeredCommands = new Map();
        mock.logLines = [];
        mock.outputChannels = [];
        mock.statusBarItems = [];
        mock.didCloseTerminal = new EventEmitter<MockTerminal>();
        mock.didChangeConfiguration = new EventEmitter<unknown>();
        mock.didGrantWorkspaceTrust = new EventEmitter<void>();
        mock.didChangeDiagnostics = new EventEmitter<unknown>();
    },

    /** Makes `folder` the only workspace folder and returns it. */
    setWorkspace(folder: string): WorkspaceFolder {
        const workspaceFolder = { uri: Uri.file(folder), name: path.basename(folder), index: 0 };
        mock.workspaceFolders = [workspaceFolder];
        return workspaceFolder;
    },
};

function record(level: 'info' | 'warning' | 'error') {
    return async (message: string, ...items: string[]): Promise<string | undefined> => {
        mock.messages.push({ level, message, items });
        return mock.messageAnswer;
    };
}

export const workspace = {
    get isTrusted(): boolean {
        return mock.isTrusted;
    },
    get workspaceFolders(): WorkspaceFolder[] | undefined {
        return mock.workspaceFolders;
    },
    getConfiguration(section: string): { get<T>(key: string, defaultValue?: T): T | undefined } {
        return {
            get<T>(key: string, defaultValue?: T): T | undefined {
                const full = `${section}.${key}`;
                return full in mock.configuration ? (mock.configuration[full] as T) : defaultValue;
            },
        };
    },
    asRelativePath(pathOrUri: Uri | string): string {
        const fsPath = typeof pathOrUri === 'string' ? pathOrUri : pathOrUri.fsPath;
        const root = mock.workspaceFolders?.[0]?.uri.fsPath;
        return root ? path.relative(root, fsPath) : fsPath;
    },
    onDidChangeConfiguration: (listener: Listener<unknown>): Disposable => mock.didChangeConfiguration.event(listener),
    onDidGrantWorkspaceTrust: (listener: Listener<void>): Disposable => mock.didGrantWorkspaceTrust.event(listener),
};

export const window = {
    get activeTextEditor(): unknown {
        return mock.activeTextEditor;
    },
    createOutputChannel(name: string, languageOrOptions?: unknown): unknown {
        const record: MockOutputChannel = { name, languageOrOptions, text: '', shows: [], disposed: false };
        mock.outputChannels.push(record);
        const log = (level: string) => (message: string): void => {
            mock.logLines.push(`[${level}] ${message}`);
        };
        return {
            name,
            info: log('info'),
            warn: log('warn'),
            error: log('error'),
            debug: log('debug'),
            trace: log('trace'),
            appendLine: log('line'),
            append: (value: string): void => {
                record.text += value;
            },
            clear: (): void => {
                record.text = '';
            },
            show: (preserveFocus?: boolean): void => {
                record.shows.push(preserveFocus);
            },
            dispose: (): void => {
                record.disposed = true;
            },
        };
    },
    createStatusBarItem(id: string): Record<string, unknown> {
        const item = { id, text: '', tooltip: '', show: (): void => undefined, dispose: (): void => undefined };
        mock.statusBarItems.push(item);
        return item;
    },
    showInformationMessage: record('info'),
    showWarningMessage: record('warning'),
    showErrorMessage: record('error'),
    async showQuickPick(items: unknown[]): Promise<unknown> {
        mock.quickPicks.push(items);
        return mock.quickPickAnswer(items);
    },
    async showSaveDialog(): Promise<Uri | undefined> {
        return mock.saveDialogAnswer;
    },
    async showOpenDialog(): Promise<Uri[] | undefined> {
        return mock.openDialogAnswer;
    },
    async showTextDocument(): Promise<void> {
        return undefined;
    },
    async withProgress<T>(_options: unknown, task: () => Promise<T>): Promise<T> {
        return task();
    },
    createTerminal(options: MockTerminal['options']): MockTerminal {
        const terminal: MockTerminal = {
            options,
            shown: false,
            exitStatus: undefined,
            show(): void {
                terminal.shown = true;
            },
            dispose(): void {
                mock.didCloseTerminal.fire(terminal);
            },
        };
        mock.terminals.push(terminal);
        return terminal;
    },
    onDidCloseTerminal: (listener: Listener<MockTerminal>): Disposable => mock.didCloseTerminal.event(listener),
    registerTreeDataProvider(id: string, provider: unknown): Disposable {
        mock.treeProviders.set(id, provider);
        return new Disposable(() => mock.treeProviders.delete(id));
    },
};

export const commands = {
    registerCommand(command: string, handler: (...args: unknown[]) => unknown): Disposable {
        mock.registeredCommands.set(command, handler);
        return new Disposable(() => mock.registeredCommands.delete(command));
    },
    async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
        mock.executedCommands.push({ command, args });
        return mock.registeredCommands.get(command)?.(...args);
    },
};

export const extensions = {
    getExtension(id: string): MockExtension | undefined {
        return mock.extensions[id];
    },
};

export const languages = {
    getDiagnostics(): [Uri, MockDiagnostic[]][] {
        return mock.diagnostics;
    },
    onDidChangeDiagnostics: (listener: Listener<unknown>): Disposable => mock.didChangeDiagnostics.event(listener),
};
