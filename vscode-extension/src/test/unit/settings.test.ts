import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ConfigurationChangeEvent, WorkspaceFolder } from 'vscode';
import { classifyConfigurationChange, getSettings, resolveVariables, toInitializationOptions } from '../../common/settings';
import { mock } from '../mocks/vscode';

function changeOf(...keys: string[]): ConfigurationChangeEvent {
    return { affectsConfiguration: (section: string): boolean => keys.includes(section) };
}

suite('settings', () => {
    let folder: WorkspaceFolder;
    setup(() => {
        mock.reset();
        folder = mock.setWorkspace(path.join(os.tmpdir(), 'proj')) as unknown as WorkspaceFolder;
    });

    test('defaults', () => {
        assert.deepStrictEqual(getSettings(folder), {
            interpreter: [],
            runsDir: null,
            graphBreakSeverity: 'warning',
            showLibraryBreaks: true,
            showRecompiles: true,
        });
    });

    test('the defaults declared in package.json are the ones getSettings falls back to', () => {
        const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
            contributes: { configuration: { properties: Record<string, { default: unknown }> } };
        };
        const declared = manifest.contributes.configuration.properties;
        const defaults = getSettings(folder);
        assert.strictEqual(declared['dynInspect.showLibraryBreaks'].default, true);
        for (const key of ['interpreter', 'runsDir', 'graphBreakSeverity', 'showLibraryBreaks', 'showRecompiles'] as const) {
            assert.deepStrictEqual(declared[`dynInspect.${key}`].default, defaults[key], key);
        }
    });

    test('reads and normalises every setting', () => {
        mock.configuration = {
            'dynInspect.interpreter': ['${workspaceFolder}/.venv/bin/python', '', 7, '-X', 'utf8'],
            'dynInspect.runsDir': 'out/runs',
            'dynInspect.graphBreakSeverity': 'error',
            'dynInspect.showLibraryBreaks': false,
            'dynInspect.showRecompiles': false,
        };
        assert.deepStrictEqual(getSettings(folder), {
            interpreter: [path.join(folder.uri.fsPath, '.venv/bin/python'), '-X', 'utf8'],
            runsDir: path.join(folder.uri.fsPath, 'out/runs'),
            graphBreakSeverity: 'error',
            showLibraryBreaks: false,
            showRecompiles: false,
        });
    });

    test('an unknown severity falls back to warning', () => {
        mock.configuration = { 'dynInspect.graphBreakSeverity': 'fatal' };
        assert.strictEqual(getSettings(folder).graphBreakSeverity, 'warning');
    });

    test('resolveVariables', () => {
        process.env.DYN_INSPECT_TEST_VAR = 'abc';
        assert.strictEqual(resolveVariables('${userHome}/x', folder), `${os.homedir()}/x`);
        assert.strictEqual(resolveVariables('~/y', folder), path.join(os.homedir(), 'y'));
        assert.strictEqual(resolveVariables('${env:DYN_INSPECT_TEST_VAR}/z', folder), 'abc/z');
        assert.strictEqual(resolveVariables('${workspaceFolder}', undefined), '${workspaceFolder}');
    });

    test('initializationOptions carry exactly the server\'s keys', () => {
        mock.configuration = { 'dynInspect.runsDir': '/abs/runs' };
        assert.deepStrictEqual(toInitializationOptions(getSettings(folder), '/abs/runs/r1'), {
            runsDir: '/abs/runs',
            graphBreakSeverity: 'warning',
            showLibraryBreaks: true,
            showRecompiles: true,
            run: '/abs/runs/r1',
            showContent: 'none',
        });
    });

    test('an interpreter change restarts, other server settings reconfigure, the rest does nothing', () => {
        assert.strictEqual(classifyConfigurationChange(changeOf('dynInspect.interpreter', 'dynInspect.runsDir')), 'restart');
        for (const key of ['runsDir', 'graphBreakSeverity', 'showLibraryBreaks', 'showRecompiles']) {
            assert.strictEqual(classifyConfigurationChange(changeOf(`dynInspect.${key}`)), 'reconfigure', key);
        }
        assert.strictEqual(classifyConfigurationChange(changeOf('dynInspect.trace.server')), 'none');
        assert.strictEqual(classifyConfigurationChange(changeOf('editor.fontSize')), 'none');
    });
});
