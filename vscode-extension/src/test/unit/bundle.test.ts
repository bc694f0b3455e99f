/**
 * Loads the esbuild bundle (dist/extension.js, what the .vsix ships) and activates it in an
 * untrusted workspace: every contributed command must be registered and no server started.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { ExtensionContext } from 'vscode';
import { mock } from '../mocks/vscode';
import { memento } from './helpers';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const BUNDLE = path.join(ROOT, 'dist', 'extension.js');

interface BundledExtension {
    activate(context: ExtensionContext): Promise<void>;
    deactivate(): Promise<void>;
}

/** The bundled vscode-languageclient subclasses vscode classes the mock lacks: give it empty ones. */
function loadBundle(): BundledExtension {
    const mockPath = require.resolve('vscode');
    const cached = require.cache[mockPath];
    assert.ok(cached, 'the vscode mock is loaded');
    const original = cached.exports as Record<string | symbol, unknown>;
    cached.exports = new Proxy(original, {
        get: (target, property): unknown => (property in target ? target[property] : class {}),
    });
    try {
        delete require.cache[BUNDLE];
        // The bundle is a plain CommonJS file picked at run time, so it is loaded with require().
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        return require(BUNDLE) as BundledExtension;
    } finally {
        cached.exports = original;
    }
}

async function waitFor(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 250 && !condition(); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

suite('bundle (dist/extension.js)', () => {
    setup(() => mock.reset());

    test('activates untrusted (all commands registered, Restricted Mode shown), then starts on trust', async () => {
        assert.ok(fs.existsSync(BUNDLE), 'run "npm run build" first');
        mock.isTrusted = false;
        mock.setWorkspace(ROOT);
        const extension = loadBundle();
        const context = { subscriptions: [] as { dispose(): unknown }[], workspaceState: memento() };
        await extension.activate(context as unknown as ExtensionContext);
        await waitFor(() => mock.messages.length >= 1);

        const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
            contributes: { commands: { command: string }[] };
        };
        const contributed = manifest.contributes.commands.map((c) => c.command).sort();
        assert.deepStrictEqual([...mock.registeredCommands.keys()].sort(), contributed);
        assert.strictEqual(mock.statusBarItems[0].text, '$(shield) dyn-inspect');
        assert.match(mock.messages[0].message, /Restricted Mode/);

        // Granting trust starts the server; here the configured interpreter does not exist.
        const missing = path.join(ROOT, 'no-such-python');
        mock.configuration = { 'dynInspect.interpreter': [missing] };
        mock.isTrusted = true;
        mock.didGrantWorkspaceTrust.fire();
        await waitFor(() => mock.messages.length >= 2);
        assert.strictEqual(mock.messages[1]?.level, 'error');
        assert.ok(mock.messages[1].message.includes(`was not found: ${missing}`));
        assert.strictEqual(mock.statusBarItems[0].text, '$(warning) dyn-inspect');

        await extension.deactivate();
        context.subscriptions.forEach((d) => d.dispose());
    });
});
