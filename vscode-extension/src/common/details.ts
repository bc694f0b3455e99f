/**
 * The code lens command `dynInspect.showDetails`: the server returns the function's details as
 * JSON, which VS Code would drop, with their Markdown rendered once by the server (`markdown`:
 * the text Neovim's document shows too, every string from the run escaped). A client
 * middleware shows that Markdown in the built-in preview of a generated file, or in an
 * output channel where no preview is available.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { OutputChannel, Uri, commands, window, workspace } from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { DETAILS_CHANNEL_NAME, ServerCommands } from './constants';
import { traceError } from './log';
import type { LspFunctionDetails, LspRecompile } from './outputs';

/** One recompile of the function (or of the code after one of its graph breaks); generated from the server's schema. */
export type RecompileDetails = LspRecompile;

/** What `dynInspect.showDetails` returns (inspector/outputs/lsp.py); generated from the server's schema. */
export type FunctionDetails = LspFunctionDetails;

function isDetails(value: unknown): value is FunctionDetails {
    return typeof value === 'object' && value !== null && typeof (value as { found?: unknown }).found === 'boolean';
}

/** `file:line`, relative to the workspace when inside it. */
function location(file: string | undefined, line: number | undefined): string {
    const shown = file ? workspace.asRelativePath(file) : '?';
    return line ? `${shown}:${line}` : shown;
}

/** Shows `dynInspect.showDetails` results: a Markdown output channel, created on first use. */
export class DetailsView {
    private channel: OutputChannel | undefined;
    /** The folder of the generated preview files, removed on dispose (one per window, never left in the temp folder). */
    private previewDir: string | undefined;

    /** Shows `result` (what the server returned); never throws. */
    show(result: unknown): void {
        if (!isDetails(result)) {
            void window.showWarningMessage('dyn-inspect: the server returned no details for this function. See "dyn-inspect: Show Output".');
            return;
        }
        if (!result.found) {
            void window.showInformationMessage(
                `dyn-inspect: no compiled function at ${location(result.file, result.line)} in the run shown. The file may have changed; record a new run.`,
            );
            return;
        }
        const text = result.markdown;
        if (!text) {
            void window.showWarningMessage('dyn-inspect: the server sent no Markdown for these details (an older dyn-inspect?).');
            return;
        }
        void this.preview(result, text).catch((error: unknown) => {
            traceError('The Markdown preview of the details failed; showing them in the output instead:', error);
            this.toChannel(text);
        });
    }

    /** The details as a generated file (private, per window) shown in the Markdown preview. */
    private async preview(details: FunctionDetails, text: string): Promise<void> {
        const dir = path.join(os.tmpdir(), `dyn-inspect-details-${process.pid}`);
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        this.previewDir = dir;
        const name = `${(details.function ?? 'function').replace(/[^\w-]/g, '_').slice(0, 80)}-${details.line ?? 0}.md`;
        const file = path.join(dir, name);
        fs.writeFileSync(file, text, { mode: 0o600 });
        await commands.executeCommand('markdown.showPreviewToSide', Uri.file(file));
    }

    private toChannel(text: string): void {
        this.channel ??= window.createOutputChannel(DETAILS_CHANNEL_NAME, 'markdown');
        this.channel.clear();
        this.channel.append(text);
        this.channel.show(true);
    }

    dispose(): void {
        this.channel?.dispose();
        this.channel = undefined;
        if (this.previewDir) {
            try {
                fs.rmSync(this.previewDir, { recursive: true, force: true });
            } catch (error) {
                traceError('Could not remove the details preview folder:', error);
            }
            this.previewDir = undefined;
        }
    }
}

/**
 * `executeCommand` middleware: passes every command to the server unchanged and, for
 * `dynInspect.showDetails` (the code lens command), hands the result to `show`.
 */
export function detailsMiddleware(show: (result: unknown) => void): NonNullable<Middleware['executeCommand']> {
    return async (command, args, next) => {
        const result: unknown = await next(command, args);
        if (command === ServerCommands.showDetails) {
            try {
                show(result);
            } catch (error) {
                traceError('Showing the function details failed:', error);
            }
        }
        return result;
    };
}
