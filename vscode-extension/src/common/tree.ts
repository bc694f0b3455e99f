/**
 * The "dyn-inspect" view in the Explorer: the shown run's graph breaks, recompiles and
 * compile failures, grouped by kind and file; clicking one opens its line. Built from the
 * diagnostics the server published (source "dyn-inspect"), so it always agrees with the
 * squiggles and the Problems panel and needs no request of its own.
 */
import * as path from 'path';
import {
    Diagnostic,
    DiagnosticSeverity,
    Disposable,
    EventEmitter,
    ThemeIcon,
    TreeDataProvider,
    TreeItem,
    TreeItemCollapsibleState,
    Uri,
    languages,
    workspace,
} from 'vscode';
import { DIAGNOSTIC_SOURCE } from './constants';
import { DiagnosticCodes } from './outputs';

export type FindingKind = 'breaks' | 'recompiles' | 'failures' | 'verified' | 'unverified';

export const KIND_LABELS: Record<FindingKind, string> = {
    breaks: 'Graph breaks',
    recompiles: 'Recompiles',
    failures: 'Compile failures',
    verified: 'Verified fixed ✓',
    unverified: 'Not verified',
};
const KIND_ICONS: Record<FindingKind, string> = {
    breaks: 'debug-breakpoint-unsupported',
    recompiles: 'sync',
    failures: 'error',
    verified: 'pass',
    unverified: 'warning',
};
// a verify that did not verify the fix comes first: it is what the user just asked about
const ORDER: FindingKind[] = ['unverified', 'breaks', 'recompiles', 'failures', 'verified'];

/** Which kind a diagnostic of ours is (the server's codes: `GBxxxx`, `recompile`, `recompile-limit`,
 * `recompile-cause`, an error, `verified`: the Hint a verify leaves where a fixed cause showed, and
 * `not-verified`: the Warning where a re-run that did not verify the fix crashed or newly failed). */
export function kindOf(diagnostic: Pick<Diagnostic, 'code' | 'severity'>): FindingKind {
    const code = typeof diagnostic.code === 'object' && diagnostic.code !== null ? diagnostic.code.value : diagnostic.code;
    if (code === DiagnosticCodes.verified) {
        return 'verified';
    }
    if (code === DiagnosticCodes.notVerified) {
        return 'unverified';
    }
    const recompileCodes: readonly string[] = [DiagnosticCodes.recompile, DiagnosticCodes.recompileLimit, DiagnosticCodes.recompileCause];
    if (typeof code === 'string' && recompileCodes.includes(code)) {
        return 'recompiles';
    }
    return diagnostic.severity === DiagnosticSeverity.Error ? 'failures' : 'breaks';
}

export type FindingNode =
    | { type: 'kind'; kind: FindingKind; count: number }
    | { type: 'file'; kind: FindingKind; uri: Uri; diagnostics: Diagnostic[] }
    | { type: 'finding'; uri: Uri; diagnostic: Diagnostic };

type Grouped = Map<FindingKind, Map<string, { uri: Uri; diagnostics: Diagnostic[] }>>;

export class FindingsTree implements TreeDataProvider<FindingNode>, Disposable {
    private readonly changed = new EventEmitter<FindingNode | undefined>();
    readonly onDidChangeTreeData = this.changed.event;
    private readonly listener: Disposable;

    constructor() {
        this.listener = languages.onDidChangeDiagnostics(() => this.changed.fire(undefined));
    }

    /** Our diagnostics, by kind, then file (sorted by path, then line). */
    grouped(): Grouped {
        const out: Grouped = new Map();
        for (const [uri, diagnostics] of languages.getDiagnostics()) {
            for (const diagnostic of diagnostics) {
                if (diagnostic.source !== DIAGNOSTIC_SOURCE) {
                    continue;
                }
                const kind = kindOf(diagnostic);
                const files = out.get(kind) ?? new Map();
                out.set(kind, files);
                const entry = files.get(uri.toString()) ?? { uri, diagnostics: [] };
                files.set(uri.toString(), entry);
                entry.diagnostics.push(diagnostic);
            }
        }
        for (const files of out.values()) {
            for (const entry of files.values()) {
                entry.diagnostics.sort((a, b) => a.range.start.line - b.range.start.line);
            }
        }
        return out;
    }

    getChildren(node?: FindingNode): FindingNode[] {
        const grouped = this.grouped();
        if (!node) {
            return ORDER.filter((kind) => grouped.has(kind)).map((kind) => ({
                type: 'kind',
                kind,
                count: [...(grouped.get(kind)?.values() ?? [])].reduce((n, e) => n + e.diagnostics.length, 0),
            }));
        }
        if (node.type === 'kind') {
            const files = [...(grouped.get(node.kind)?.values() ?? [])];
            files.sort((a, b) => a.uri.fsPath.localeCompare(b.uri.fsPath));
            return files.map((e) => ({ type: 'file', kind: node.kind, uri: e.uri, diagnostics: e.diagnostics }));
        }
        if (node.type === 'file') {
            return node.diagnostics.map((diagnostic) => ({ type: 'finding', uri: node.uri, diagnostic }));
        }
        return [];
    }

    getTreeItem(node: FindingNode): TreeItem {
        if (node.type === 'kind') {
            const item = new TreeItem(`${KIND_LABELS[node.kind]} (${node.count})`, TreeItemCollapsibleState.Expanded);
            item.iconPath = new ThemeIcon(KIND_ICONS[node.kind]);
            return item;
        }
        if (node.type === 'file') {
            const item = new TreeItem(path.basename(node.uri.fsPath), TreeItemCollapsibleState.Expanded);
            const folder = path.dirname(workspace.asRelativePath(node.uri));
            item.description = folder === '.' ? `${node.diagnostics.length}` : `${folder} · ${node.diagnostics.length}`;
            item.resourceUri = node.uri;
            return item;
        }
        const d = node.diagnostic;
        const item = new TreeItem(d.message.split(/\r?\n/)[0], TreeItemCollapsibleState.None);
        item.description = `line ${d.range.start.line + 1}`;
        item.tooltip = d.message;
        item.command = { command: 'vscode.open', title: 'Open', arguments: [node.uri, { selection: d.range }] };
        return item;
    }

    dispose(): void {
        this.listener.dispose();
        this.changed.dispose();
    }
}
