import * as assert from 'assert';
import { FindingNode, FindingsTree, kindOf } from '../../common/tree';
import { DiagnosticSeverity, Position, Range, TreeItemCollapsibleState, Uri, mock } from '../mocks/vscode';

function diag(line: number, message: string, code: string, severity = DiagnosticSeverity.Warning, source = 'dyn-inspect'): object {
    return { message, source, code, severity, range: new Range(new Position(line, 4), new Position(line, 9)) };
}

suite('findings tree', () => {
    setup(() => {
        mock.reset();
        mock.setWorkspace('/w');
    });

    test('kinds from the server\'s codes and severities', () => {
        assert.strictEqual(kindOf({ code: 'GB0170', severity: 1 }), 'breaks');
        assert.strictEqual(kindOf({ code: { value: 'GB0059', target: undefined as never }, severity: 1 }), 'breaks');
        assert.strictEqual(kindOf({ code: 'recompile', severity: 2 }), 'recompiles');
        assert.strictEqual(kindOf({ code: 'recompile-limit', severity: 1 }), 'recompiles');
        assert.strictEqual(kindOf({ code: 'BackendCompilerFailed', severity: 0 }), 'failures');
        assert.strictEqual(kindOf({ code: 'recompile-cause', severity: 2 }), 'recompiles');
        // a verify's "fixed ✓" Hint is not a graph break
        assert.strictEqual(kindOf({ code: 'verified', severity: 3 }), 'verified');
        // nor is the Warning of a verify that did not verify the fix
        assert.strictEqual(kindOf({ code: 'not-verified', severity: 2 }), 'unverified');
    });

    test('a verify that did not verify the fix: its crash site first, nothing marked fixed', () => {
        const train = Uri.file('/w/train.py');
        mock.diagnostics = [
            [train, [diag(9, 'not verified (re-run r2): the re-run exited 1 here: RuntimeError: boom', 'not-verified'), diag(26, 'Graph break: branch', 'GB0170')]],
        ] as never;
        const tree = new FindingsTree();
        assert.deepStrictEqual(tree.getChildren().map((k) => tree.getTreeItem(k).label), ['Not verified (1)', 'Graph breaks (1)']);
    });

    test('after a verify: the fixed marks in their own group, after what is still there', () => {
        const train = Uri.file('/w/train.py');
        mock.diagnostics = [
            [train, [diag(45, 'fixed ✓ (verified run r2): `x.shape[0]` takes 16, 32', 'verified', DiagnosticSeverity.Hint), diag(26, 'Graph break: branch\n(still there after the fix — verified run r2)', 'GB0170')]],
        ] as never;
        const tree = new FindingsTree();
        const kinds = tree.getChildren();
        assert.deepStrictEqual(kinds.map((k) => tree.getTreeItem(k).label), ['Graph breaks (1)', 'Verified fixed ✓ (1)']);
        const [file] = tree.getChildren(kinds[1]);
        const [fixed] = tree.getChildren(file).map((f) => tree.getTreeItem(f));
        assert.deepStrictEqual([fixed.label, fixed.description], ['fixed ✓ (verified run r2): `x.shape[0]` takes 16, 32', 'line 46']);
    });

    test('breaks and recompiles grouped by file, sorted by line; a click opens the line', () => {
        const train = Uri.file('/w/train.py');
        const utils = Uri.file('/w/model_utils.py');
        mock.diagnostics = [
            [train, [diag(29, 'Graph break: print\nmore', 'GB0059'), diag(26, 'Graph break: branch', 'GB0170'), diag(24, 'Recompiled: forward', 'recompile', 2)]],
            [utils, [diag(6, 'Graph break: helper print', 'GB0059'), diag(6, 'from pylint', 'W0611', 1, 'pylint')]],
        ] as never;
        const tree = new FindingsTree();
        const kinds = tree.getChildren();
        assert.deepStrictEqual(kinds.map((k) => tree.getTreeItem(k).label), ['Graph breaks (3)', 'Recompiles (1)']);
        const files = tree.getChildren(kinds[0]);
        assert.deepStrictEqual(files.map((f) => [tree.getTreeItem(f).label, tree.getTreeItem(f).description]), [['model_utils.py', '1'], ['train.py', '2']]);
        const findings = tree.getChildren(files[1]);
        const items = findings.map((f) => tree.getTreeItem(f));
        assert.deepStrictEqual(items.map((i) => [i.label, i.description]), [['Graph break: branch', 'line 27'], ['Graph break: print', 'line 30']]);
        assert.strictEqual(items[0].collapsibleState, TreeItemCollapsibleState.None);
        assert.strictEqual(items[0].command?.command, 'vscode.open');
        const [uri, options] = items[0].command?.arguments as [Uri, { selection: Range }];
        assert.strictEqual(uri.fsPath, '/w/train.py');
        assert.strictEqual(options.selection.start.line, 26);
        assert.deepStrictEqual(tree.getChildren(findings[0] as FindingNode), []);
        tree.dispose();
    });

    test('refreshes when the diagnostics change; empty without our diagnostics', () => {
        const tree = new FindingsTree();
        let fired = 0;
        tree.onDidChangeTreeData(() => {
            fired += 1;
        });
        assert.deepStrictEqual(tree.getChildren(), []);
        mock.didChangeDiagnostics.fire(undefined);
        assert.strictEqual(fired, 1);
        tree.dispose();
    });
});
