import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { ExecuteCommandSignature, LanguageClientOptions } from 'vscode-languageclient/node';
import { DetailsView, FunctionDetails } from '../../common/details';
import { ServerLaunch } from '../../common/launch';
import { LanguageClient } from '../mocks/languageclient';
import { mock } from '../mocks/vscode';
import { startedServer } from './helpers';

const LAUNCH: ServerLaunch = {
    source: 'setting',
    interpreter: ['/envs/a/bin/python'],
    server: { command: '/envs/a/bin/python', args: ['-m', 'dyn_inspect.lsp'] },
    cli: { command: '/envs/a/bin/dyn-inspect', args: [] },
};

/** Shaped like the real server's answer for examples/train.py (trimmed). */
function forwardDetails(root: string): FunctionDetails {
    return {
        found: true,
        run: path.join(root, '.dyn-inspect', 'runs', '20250101-120000-abcdef'),
        function: 'forward',
        file: path.join(root, 'train.py'),
        line: 26,
        recorded_line: 25,
        title: 'compiled 2× · 3 graph breaks · 8 kernels · 6.60 s compile',
        compiles: 2,
        part_compiles: 2,
        compile_ids: ['0/0', '0/1', '1/0', '1/1'],
        outcomes: ['graph_break', 'graph_break', 'graph_break', 'graph'],
        graph_breaks: ['1df49e44f1e94f7b', '4deb17c4cd8c35e4', '9c65805494e71371'],
        kernels: 8,
        compile_time_s: 6.6028,
        recompiles: [
            {
                compile_id: '0/1',
                part: null,
                part_line: null,
                reasons: ["0/0: tensor 'x' size mismatch at index 0. expected 16, actual 32"],
                suggestion: 'dim 0 of `x` changed from 16 to 32: torch compiled for a static size.',
                code: 'torch._dynamo.mark_dynamic(x, 0)',
            },
            {
                compile_id: '1/1',
                part: 'torch_dynamo_resume_in_forward_at_27',
                part_line: 27,
                reasons: ["1/0: tensor 'h' size mismatch at index 0. expected 16, actual 32"],
                suggestion: null,
                code: null,
            },
        ],
        recompile_limit: null,
        markdown: '# `forward` — train.py:26\n\n- Compiles: 2 of the function, 2 of the code after its graph breaks\n',
    };
}

type ExecuteCommandMiddleware = (command: string, args: unknown[], next: ExecuteCommandSignature) => Promise<unknown>;

suite('code lens details (dynInspect.showDetails)', () => {
    let root: string;
    let details: DetailsView;
    let executeCommand: ExecuteCommandMiddleware;

    setup(async () => {
        details = new DetailsView();
        ({ root } = await startedServer(LAUNCH, { showDetails: (result) => details.show(result) }));
        const options = LanguageClient.instances[0].clientOptions as LanguageClientOptions;
        const middleware = options.middleware?.executeCommand;
        assert.ok(middleware, 'the client gets an executeCommand middleware');
        executeCommand = middleware as ExecuteCommandMiddleware;
    });

    function detailsChannels(): typeof mock.outputChannels {
        return mock.outputChannels.filter((channel) => channel.name === 'dyn-inspect: Details');
    }

    test('shows the Markdown the server rendered, not a rendering of its own', async () => {
        const channelsBefore = detailsChannels().length;
        mock.registeredCommands.set('markdown.showPreviewToSide', () => {
            throw new Error('no preview');
        });
        const answer = { ...forwardDetails(root), markdown: '# `forward` — as the server wrote it\n' };
        await executeCommand('dynInspect.showDetails', [path.join(root, 'train.py'), 26], async () => answer);
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.strictEqual(detailsChannels().length, channelsBefore + 1);
        assert.strictEqual(detailsChannels()[0].text, answer.markdown);
    });

    test('details without Markdown (an older server): a warning, nothing shown', async () => {
        const older: FunctionDetails = { ...forwardDetails(root) };
        delete older.markdown;
        await executeCommand('dynInspect.showDetails', [path.join(root, 'train.py'), 26], async () => older);
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.strictEqual(detailsChannels().length, 0);
        assert.strictEqual(mock.messages[0].level, 'warning');
    });

    test('clicking the lens opens the details in the Markdown preview (a generated file), and returns the answer', async () => {
        const previews: string[] = [];
        mock.registeredCommands.set('markdown.showPreviewToSide', (uri: unknown) => {
            previews.push((uri as { fsPath: string }).fsPath);
        });
        const answer = forwardDetails(root);
        const file = path.join(root, 'train.py');
        const result = await executeCommand('dynInspect.showDetails', [file, 26], async () => answer);
        assert.strictEqual(result, answer);
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.strictEqual(previews.length, 1);
        assert.ok(previews[0].endsWith('forward-26.md'), previews[0]);
        assert.strictEqual(fs.readFileSync(previews[0], 'utf8'), answer.markdown);
        assert.strictEqual(detailsChannels().length, 0);

        // The generated file's folder goes with the window: nothing is left in the temp folder.
        details.dispose();
        assert.ok(!fs.existsSync(path.dirname(previews[0])), path.dirname(previews[0]));
    });

    test('without a Markdown preview: the server\'s answer in the details channel, and returned', async () => {
        mock.registeredCommands.set('markdown.showPreviewToSide', () => {
            throw new Error("command 'markdown.showPreviewToSide' not found");
        });
        const answer = forwardDetails(root);
        const calls: unknown[][] = [];
        const next: ExecuteCommandSignature = async (command, args) => {
            calls.push([command, args]);
            return answer;
        };
        const file = path.join(root, 'train.py');
        const result = await executeCommand('dynInspect.showDetails', [file, 26], next);
        assert.strictEqual(result, answer);
        assert.deepStrictEqual(calls, [['dynInspect.showDetails', [file, 26]]]);
        await new Promise((resolve) => setTimeout(resolve, 10));
        const channels = detailsChannels();
        assert.strictEqual(channels.length, 1);
        assert.strictEqual(channels[0].languageOrOptions, 'markdown');
        assert.strictEqual(channels[0].text, answer.markdown);
        assert.deepStrictEqual(channels[0].shows, [true], 'revealed without taking the focus');

        // A second click replaces the text and reuses the channel.
        await executeCommand('dynInspect.showDetails', [file, 26], async () => ({ ...answer, function: 'other', markdown: '# `other` — train.py:26\n' }));
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.strictEqual(detailsChannels().length, 1);
        assert.ok(channels[0].text.startsWith('# `other`'));
        assert.strictEqual(channels[0].text.match(/^# /gm)?.length, 1);

        details.dispose();
        assert.ok(channels[0].disposed);
    });

    test('other server commands pass through untouched', async () => {
        const result = await executeCommand('dynInspect.showInTui', ['/runs/1'], async () => 'dyn-inspect open /runs/1');
        assert.strictEqual(result, 'dyn-inspect open /runs/1');
        assert.strictEqual(detailsChannels().length, 0);
        assert.strictEqual(mock.messages.length, 0);
    });

    test('no function there (the file changed): a message instead of the channel', async () => {
        const file = path.join(root, 'train.py');
        await executeCommand('dynInspect.showDetails', [file, 1], async () => ({ found: false, run: '/r', file, line: 1 }));
        assert.strictEqual(detailsChannels().length, 0);
        assert.strictEqual(mock.messages[0].level, 'info');
        assert.match(mock.messages[0].message, /no compiled function at train\.py:1/);
    });

    test('a failed command (the server answers {} or nothing): a warning', async () => {
        await executeCommand('dynInspect.showDetails', ['/x.py', 1], async () => ({}));
        await executeCommand('dynInspect.showDetails', ['/x.py', 1], async () => undefined);
        assert.strictEqual(detailsChannels().length, 0);
        assert.deepStrictEqual(
            mock.messages.map((m) => m.level),
            ['warning', 'warning'],
        );
    });
});
