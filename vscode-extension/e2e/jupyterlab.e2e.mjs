// The language server in a real JupyterLab: JupyterLab 4 with jupyterlab-lsp (installed by
// install.sh into its own virtual environment), configured as docs/notebooks.md says, driven
// by Playwright through Debian's Chromium, on the workspace make_notebook.py executed
// cells.ipynb in. jupyterlab-lsp sends the notebook as one virtual document
// (.virtual_documents/cells.ipynb: cells joined, magics rewritten); the server finds the
// recorded cells in it (lsp/virtual_notebooks.py). Nothing is mocked: the cells are then run
// again by JupyterLab's own kernel (the interpreter under test, through a kernelspec).
//
// Environment (set by run.sh):
//   E2E_CACHE       the folder install.sh filled (node, playwright-core)
//   E2E_JUPYTERLAB  the bin folder of the environment with jupyterlab and jupyterlab-lsp
//   E2E_PYTHON      an interpreter with dyn-inspect and ipykernel installed
//   E2E_WORKSPACE   a folder holding cells.ipynb, executed, and its run in .dyn-inspect/runs
//   E2E_OUT         where screenshots and logs go (jupyterlab-notebook.png, jupyterlab-failure.png)
//   E2E_CHROMIUM    the browser binary (default /usr/bin/chromium)
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { assert, freePort, need, runMain, step, waitFor } from './harness.mjs';

const env = process.env;
const CACHE = need('E2E_CACHE');
const JUPYTER = path.join(need('E2E_JUPYTERLAB'), 'jupyter');
const PYTHON = need('E2E_PYTHON');
const WS = fs.realpathSync(need('E2E_WORKSPACE'));
const OUT = need('E2E_OUT');
const CHROMIUM = env.E2E_CHROMIUM || '/usr/bin/chromium';
const require = createRequire(path.join(CACHE, 'app', 'package.json'));
const { chromium } = require('playwright-core');

const RUNS = path.join(WS, '.dyn-inspect', 'runs');
const NOTEBOOK = path.join(WS, 'cells.ipynb');
const NEEDLE = 'if x.sum() > 0:';
const CONDITION = 'x.sum() > 0';
const TOKEN = 'dyn-inspect-e2e';
const children = [];
let page;

function runsOnDisk() {
    return fs.existsSync(RUNS) ? fs.readdirSync(RUNS).filter((n) => n !== 'latest' && !n.startsWith('.')).sort() : [];
}

/** The Jupyter configuration docs/notebooks.md gives (the language server for Python
 * documents), a kernelspec running the interpreter under test, and settings that keep
 * JupyterLab from asking about news over the page. All in a scratch folder. */
function jupyterHome() {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'dyn-inspect-jlab-'));
    const config = path.join(home, 'config');
    fs.mkdirSync(config);
    fs.writeFileSync(
        path.join(config, 'jupyter_server_config.json'),
        JSON.stringify({
            LanguageServerManager: {
                language_servers: {
                    'dyn-inspect': {
                        version: 2,
                        argv: [PYTHON, '-m', 'dyn_inspect.lsp', '--stdio'],
                        languages: ['python'],
                        mime_types: ['text/x-python', 'text/x-ipython'],
                        display_name: 'dyn-inspect',
                    },
                },
            },
        }),
    );
    // (on JUPYTER_PATH, which comes first: in a virtual environment jupyter_core prefers
    // the environment's own kernelspecs to the user's data folder)
    const kernel = path.join(home, 'path', 'kernels', 'python3');
    fs.mkdirSync(kernel, { recursive: true });
    fs.writeFileSync(
        path.join(kernel, 'kernel.json'),
        JSON.stringify({ argv: [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}'], display_name: 'Python 3 (ipykernel)', language: 'python' }),
    );
    const settings = path.join(home, 'settings', '@jupyterlab', 'apputils-extension');
    fs.mkdirSync(settings, { recursive: true });
    fs.writeFileSync(path.join(settings, 'notification.jupyterlab-settings'), JSON.stringify({ fetchNews: 'false' }));
    return home;
}

/** The warning marks CodeMirror shows in the cell whose text holds `needle`: their text. */
async function cellMarks(needle) {
    return page.evaluate((needle) => {
        const cell = [...document.querySelectorAll('.jp-Notebook .jp-Cell')].find((c) => (c.querySelector('.cm-content')?.textContent || '').includes(needle));
        return cell ? [...cell.querySelectorAll('.cm-lintRange-warning')].map((m) => m.textContent) : null;
    }, needle);
}

/** The text of the tooltip `selector` shown when the pointer rests on the first warning
 * mark in the notebook (moved onto it again until it shows: CodeMirror shows a tooltip
 * after the pointer rests, and the notebook may still be laying out). */
async function hoverOn(selector, what) {
    const mark = page.locator('.jp-Notebook .cm-lintRange-warning').first();
    return waitFor(`${what} over the mark`, async () => {
        const box = await mark.boundingBox();
        await page.mouse.move(5, 5);
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
        const shown = page.locator(selector).first();
        await shown.waitFor({ timeout: 3000 });
        return shown.innerText();
    }, 60000);
}

/** The server's hover on the mark (jupyterlab-lsp asks for it while Ctrl is held). */
async function serverHover() {
    await page.keyboard.down('Control');
    try {
        return await hoverOn('.lsp-hover', "the server's hover (Ctrl)");
    } finally {
        await page.keyboard.up('Control');
        await page.mouse.move(5, 5);
    }
}

async function main() {
    const home = jupyterHome();
    const port = await freePort();
    const labEnv = {
        ...env,
        JUPYTER_CONFIG_DIR: path.join(home, 'config'),
        JUPYTER_PATH: path.join(home, 'path'),
        JUPYTER_DATA_DIR: path.join(home, 'data'),
        JUPYTER_RUNTIME_DIR: path.join(home, 'runtime'),
        JUPYTERLAB_SETTINGS_DIR: path.join(home, 'settings'),
        JUPYTERLAB_WORKSPACES_DIR: path.join(home, 'workspaces'),
    };
    delete labEnv.DYN_INSPECT_RUNS_DIR; // the kernel records into its working directory: WS
    const logPath = path.join(OUT, 'jupyterlab.log');
    const log = fs.openSync(logPath, 'w');
    const lab = spawn(
        JUPYTER,
        ['lab', '--no-browser', '--allow-root', `--ServerApp.root_dir=${WS}`, '--ServerApp.ip=127.0.0.1', `--ServerApp.port=${port}`, `--IdentityProvider.token=${TOKEN}`],
        { cwd: WS, env: labEnv, stdio: ['ignore', log, log], detached: true },
    );
    children.push(lab);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    children.push({ kill: () => browser.close().catch(() => {}) });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const before = runsOnDisk();
    try {
        await step('JupyterLab starts with jupyterlab-lsp and the dyn-inspect server configured', async () => {
            await waitFor('the Jupyter server', async () => (await fetch(`http://127.0.0.1:${port}/api/status?token=${TOKEN}`)).ok, 120000);
            const specs = await (await fetch(`http://127.0.0.1:${port}/lsp/status?token=${TOKEN}`)).json();
            assert(specs.specs && specs.specs['dyn-inspect'], `jupyter-lsp does not list the dyn-inspect server: ${JSON.stringify(specs).slice(0, 300)}`);
        });

        await step('the recorded break squiggles exactly `x.sum() > 0` in the cell defining f', async () => {
            await page.goto(`http://127.0.0.1:${port}/lab/tree/cells.ipynb?token=${TOKEN}`);
            const marks = await waitFor('a warning mark in the cell holding the `if`', async () => {
                const found = await cellMarks(NEEDLE);
                return found && found.length ? found : null;
            }, 120000);
            assert(JSON.stringify(marks) === JSON.stringify([CONDITION]), `the marks in f's cell are ${JSON.stringify(marks)}, not ["${CONDITION}"]`);
            const elsewhere = await page.locator('.jp-Notebook .cm-lintRange-warning').count();
            assert(elsewhere === 1, `${elsewhere} warning marks in the notebook, expected the one on f's \`if\``);
        });

        await step("hovering it with Ctrl shows the server's hover: the break, torch's words", async () => {
            const text = await serverHover();
            assert(/Graph break: .*\(GB\d+\)/.test(text), `the hover says ${JSON.stringify(text.slice(0, 200))}`);
            await page.mouse.move(5, 5);
        });

        await step('an edit above the `if`: the server follows the cell through it (its hover on the moved line)', async () => {
            const line = page.locator('.jp-Cell .cm-line', { hasText: 'def f(x):' }).first();
            await line.click();
            await page.keyboard.press('End');
            await page.keyboard.press('Enter');
            await page.keyboard.type('# edited in JupyterLab');
            await page.keyboard.press('Escape');
            // The hover is asked of the server at the `if`'s new line, after the edit reached
            // it: a server that lost the edited cell answers nothing there
            const text = await serverHover();
            assert(/Graph break: .*\(GB\d+\)/.test(text), `after the edit the hover says ${JSON.stringify(text.slice(0, 200))}`);
            // jupyterlab-lsp draws the last publish's positions again on the edited text (the
            // mark sits on the old line, now the typed one) until the server republishes,
            // once the typing pauses, possibly after its hover answered. Waited for, not read
            // at once; a mark that never settles fails.
            let marks;
            const seen = new Set();
            try {
                await waitFor('the mark on `x.sum() > 0` after the edit', async () => {
                    marks = await cellMarks(NEEDLE);
                    seen.add(JSON.stringify(marks));
                    return JSON.stringify(marks) === JSON.stringify([CONDITION]);
                }, 20000);
                if (seen.size > 1) {
                    console.log(`jupyterlab e2e: marks seen while the edit settled: ${[...seen].join(', ')}`);
                }
            } catch {
                assert(false, `after the edit the marks in f's cell are ${JSON.stringify(marks)}`);
            }
        });

        await step("Run All Cells in JupyterLab's kernel records a run naming the notebook, shown under the cell", async () => {
            await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Run$/ }).click();
            await page.locator('.lm-Menu-itemLabel', { hasText: /^Run All Cells$/ }).click();
            // The block under the calling cell names its run: a new one (the saved block
            // named the old). (A cell that compiled nothing leaves no run: the defining
            // cell's run folder comes and goes while it runs.)
            const block = await waitFor('a dyn-inspect block naming a new run under the calling cell', async () => {
                for (const text of await page.locator('.jp-OutputArea-output').allInnerTexts()) {
                    const m = text.match(/run: (\S+)/);
                    if (m && text.startsWith('dyn-inspect') && !before.includes(path.basename(m[1]))) {
                        return { text, run: m[1] };
                    }
                }
                return null;
            }, 240000);
            // (the edit moved the `if` down a line)
            assert(block.text.includes('graph break at cell [3], line 7'), `the block does not say "graph break at cell [3], line 7": ${block.text.slice(0, 300)}`);
            assert(runsOnDisk().includes(path.basename(block.run)), `the run ${block.run} it names is not under ${RUNS}`);
            const summary = JSON.parse(execFileSync(PYTHON, ['-m', 'dyn_inspect.cli', 'summary', '--json', block.run], { encoding: 'utf8' }));
            assert(summary.status === 'finished', `the new run is ${summary.status}`);
            assert(summary.command[0] === NOTEBOOK, `the run's command is ${JSON.stringify(summary.command)}, not the notebook ${NOTEBOOK}`);
            assert(summary.graph_breaks.unique === 1, `the new run has ${JSON.stringify(summary.graph_breaks)} graph breaks, not one`);
        });

        await step("the new run's mark is back on `x.sum() > 0` in the edited cell", async () => {
            const marks = await waitFor('the warning mark in f\'s cell', async () => {
                const found = await cellMarks(NEEDLE);
                return found && found.length ? found : null;
            }, 60000);
            assert(JSON.stringify(marks) === JSON.stringify([CONDITION]), `the marks in f's cell are ${JSON.stringify(marks)}`);
            await page.screenshot({ path: path.join(OUT, 'jupyterlab-notebook.png') });
        });
        console.log('jupyterlab e2e: passed');
    } catch (error) {
        try {
            await page.screenshot({ path: path.join(OUT, 'jupyterlab-failure.png') });
        } catch {
            // The browser may be gone.
        }
        console.log(`--- ${logPath} (tail) ---\n${fs.readFileSync(logPath, 'utf8').split('\n').slice(-30).join('\n')}`);
        throw error;
    }
}

runMain('jupyterlab e2e', main, children);
