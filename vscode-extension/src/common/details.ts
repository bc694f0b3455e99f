/**
 * The code lens command `dynInspect.showDetails`: the server returns the function's details as
 * JSON, which VS Code would drop. A client middleware shows them as rendered Markdown (the
 * built-in Markdown preview of a generated file), or in an output channel where no preview
 * is available.
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

function plural(n: number, word: string): string {
    return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `file:line`, relative to the workspace when inside it. */
function location(file: string | undefined, line: number | undefined): string {
    const shown = file ? workspace.asRelativePath(file) : '?';
    return line ? `${shown}:${line}` : shown;
}

/** ["graph_break", "graph_break", "graph"] -> "graph_break ×2, graph ×1" (first-seen order). */
function countOutcomes(outcomes: string[]): string {
    const counts = new Map<string, number>();
    for (const outcome of outcomes) {
        counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    }
    return [...counts].map(([outcome, n]) => `${outcome} ×${n}`).join(', ');
}

/** Markdown for one function's details (a found one). */
export function formatDetails(details: FunctionDetails): string {
    const name = details.function ?? '?';
    const lines: string[] = [`# \`${name}\` — ${location(details.file, details.line)}`, ''];
    if (details.title) {
        lines.push(details.title, '');
    }

    const facts: string[] = [];
    if (details.recorded_line !== undefined && details.recorded_line !== details.line) {
        facts.push(`Line in the run: ${details.recorded_line} (the file changed since)`);
    }
    if (details.run) {
        facts.push(`Run: ${path.basename(details.run)} (${details.run})`);
    }
    const compiles = details.compiles ?? 0;
    const partCompiles = details.part_compiles ?? 0;
    facts.push(
        partCompiles > 0
            ? `Compiles: ${compiles} of the function, ${partCompiles} of the code after its graph breaks`
            : `Compiles: ${compiles}`,
    );
    if (details.compile_ids?.length) {
        facts.push(`Compile ids: ${details.compile_ids.join(', ')}`);
    }
    if (details.outcomes?.length) {
        facts.push(`Outcomes: ${countOutcomes(details.outcomes)}`);
    }
    const breaks = details.graph_breaks?.length ?? 0;
    facts.push(`Graph breaks: ${breaks}${breaks > 0 ? ' unique (hover the marked lines for the reasons)' : ''}`);
    facts.push(`Kernels: ${details.kernels ?? 0}`);
    facts.push(`Compile time: ${(details.compile_time_s ?? 0).toFixed(2)} s`);
    lines.push(...facts.map((fact) => `- ${fact}`));

    const recompiles = details.recompiles ?? [];
    if (recompiles.length > 0) {
        lines.push('', `## ${plural(recompiles.length, 'recompile')}`);
        for (const step of recompiles) {
            const what = step.part
                ? `\`${step.part}\` (the code after the graph break${step.part_line ? ` at line ${step.part_line}` : ''})`
                : `\`${name}\``;
            lines.push('', `### ${step.compile_id} — ${what}`, '');
            for (const reason of step.reasons) {
                lines.push(`- Guard failed: ${reason}`);
            }
            if (step.suggestion) {
                lines.push(`- Suggestion: ${step.suggestion}`);
            }
            if (step.code) {
                lines.push(`- Try: \`${step.code}\``);
            }
        }
    }
    if (details.recompile_limit) {
        lines.push('', `**Recompile limit reached:** ${details.recompile_limit}`);
    }
    return `${lines.join('\n')}\n`;
}

/** Shows `dynInspect.showDetails` results: a Markdown output channel, created on first use. */
export class DetailsView {
    private channel: OutputChannel | undefined;

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
        const text = formatDetails(result);
        void this.preview(result, text).catch((error: unknown) => {
            traceError('The Markdown preview of the details failed; showing them in the output instead:', error);
            this.toChannel(text);
        });
    }

    /** The details as a generated file (private, per window) shown in the Markdown preview. */
    private async preview(details: FunctionDetails, text: string): Promise<void> {
        const dir = path.join(os.tmpdir(), `dyn-inspect-details-${process.pid}`);
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
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
