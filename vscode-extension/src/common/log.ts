/** The extension's single log output channel ("dyn-inspect" in the Output panel). */
import { LogOutputChannel, window } from 'vscode';

let channel: LogOutputChannel | undefined;

export function createLogChannel(name: string): LogOutputChannel {
    channel = window.createOutputChannel(name, { log: true });
    return channel;
}

export function getLogChannel(): LogOutputChannel | undefined {
    return channel;
}

export function showOutput(): void {
    channel?.show(true);
}

function format(parts: unknown[]): string {
    return parts
        .map((part) => (part instanceof Error ? (part.stack ?? part.message) : String(part)))
        .join(' ');
}

export function traceInfo(...parts: unknown[]): void {
    channel?.info(format(parts));
}

export function traceWarn(...parts: unknown[]): void {
    channel?.warn(format(parts));
}

export function traceError(...parts: unknown[]): void {
    channel?.error(format(parts));
}

export function traceVerbose(...parts: unknown[]): void {
    channel?.debug(format(parts));
}
