/** Mock of `vscode-languageclient/node`: records what the extension asks of the client. */

export enum State {
    Stopped = 1,
    Running = 2,
    Starting = 3,
}

export enum TransportKind {
    stdio = 0,
    ipc = 1,
    pipe = 2,
    socket = 3,
}

export enum RevealOutputChannelOn {
    Debug = 0,
    Info = 1,
    Warn = 2,
    Error = 3,
    Never = 4,
}

export const ExecuteCommandRequest = { type: { method: 'workspace/executeCommand' } };
export const DidChangeConfigurationNotification = { type: { method: 'workspace/didChangeConfiguration' } };
export const ShowMessageNotification = { type: { method: 'window/showMessage' } };

interface MethodType {
    method: string;
}

type StateListener = (event: { oldState: State; newState: State }) => void;

export class LanguageClient {
    /** Every client constructed since the last reset. */
    static instances: LanguageClient[] = [];
    /** Answers sendRequest(method, params). */
    static requestHandler: (method: string, params: unknown) => unknown = () => undefined;
    /** When set, start() rejects with it. */
    static startError: Error | undefined;

    static reset(): void {
        LanguageClient.instances = [];
        LanguageClient.requestHandler = () => undefined;
        LanguageClient.startError = undefined;
    }

    state: State = State.Stopped;
    readonly requests: { method: string; params: unknown }[] = [];
    readonly notifications: { method: string; params: unknown }[] = [];
    stopped = false;
    disposed = false;
    private readonly listeners: StateListener[] = [];

    constructor(
        readonly id: string,
        readonly name: string,
        readonly serverOptions: unknown,
        readonly clientOptions: unknown,
    ) {
        LanguageClient.instances.push(this);
    }

    async start(): Promise<void> {
        if (LanguageClient.startError) {
            throw LanguageClient.startError;
        }
        this.setState(State.Running);
    }

    async stop(): Promise<void> {
        this.stopped = true;
        this.setState(State.Stopped);
    }

    async dispose(): Promise<void> {
        this.disposed = true;
    }

    async sendRequest(type: MethodType, params: unknown): Promise<unknown> {
        this.requests.push({ method: type.method, params });
        return LanguageClient.requestHandler(type.method, params);
    }

    async sendNotification(type: MethodType, params: unknown): Promise<void> {
        this.notifications.push({ method: type.method, params });
    }

    /** Handlers registered with onNotification, by method. */
    readonly notificationHandlers = new Map<string, (params: never) => void>();

    onNotification(type: MethodType, handler: (params: never) => void): { dispose(): void } {
        this.notificationHandlers.set(type.method, handler);
        return { dispose: () => this.notificationHandlers.delete(type.method) };
    }

    onDidChangeState(listener: StateListener): { dispose(): void } {
        this.listeners.push(listener);
        return { dispose: () => this.listeners.splice(this.listeners.indexOf(listener), 1) };
    }

    /** Simulates the client's own state change (e.g. a crash it gave up on). */
    setState(newState: State): void {
        const oldState = this.state;
        this.state = newState;
        [...this.listeners].forEach((listener) => listener({ oldState, newState }));
    }
}
