// What both real-client tests (vscode.e2e.mjs, jupyterlab.e2e.mjs) need: named steps that
// print their time, assertions, a free port, waiting on a condition (never a sleep), and
// stopping what they started.
import * as net from 'node:net';

const t0 = Date.now();

/** The value of the environment variable `name`, which run.sh must have set. */
export function need(name) {
    if (!process.env[name]) {
        throw new Error(`${name} is not set`);
    }
    return process.env[name];
}

export const secs = () => ((Date.now() - t0) / 1000).toFixed(1);

export async function step(name, fn) {
    const started = Date.now();
    try {
        const result = await fn();
        console.log(`  ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
        return result;
    } catch (error) {
        console.log(`  FAIL ${name} at ${secs()} s: ${error.message}`);
        throw error;
    }
}

export function assert(condition, message) {
    if (!condition) {
        throw new Error(message);
    }
}

export async function freePort() {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
        server.on('error', reject);
    });
}

export async function waitFor(what, predicate, timeoutMs, intervalMs = 500) {
    const deadline = Date.now() + timeoutMs;
    let last;
    for (;;) {
        try {
            last = await predicate();
            if (last) {
                return last;
            }
        } catch (error) {
            last = error;
        }
        if (Date.now() > deadline) {
            throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
        }
        await new Promise((r) => setTimeout(r, intervalMs));
    }
}

/** Runs `main` and exits with 0 (passed) or 1 (failed, with its message), after stopping
 * every child in `children` (process groups started detached, or objects with kill()). */
export function runMain(label, main, children) {
    main()
        .then(() => 0, (error) => {
            console.log(`${label}: FAILED: ${error.message}`);
            return 1;
        })
        .then((code) => {
            for (const child of children.reverse()) {
                try {
                    if (child.pid) {
                        process.kill(-child.pid, 'SIGTERM');
                    } else {
                        child.kill();
                    }
                } catch {
                    // Already gone.
                }
            }
            setTimeout(() => process.exit(code), 1000);
        });
}
