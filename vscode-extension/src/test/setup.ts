/**
 * Mocha `--require` file: resolves `vscode` and `vscode-languageclient[/node]` to the mocks in
 * ./mocks so the extension's modules load in plain Node (no VS Code, no network).
 */
import * as path from 'path';
import Module from 'module';

type ResolveFilename = (request: string, ...rest: unknown[]) => string;
const moduleWithResolver = Module as unknown as { _resolveFilename: ResolveFilename };

const redirects: Record<string, string> = {
    vscode: path.join(__dirname, 'mocks', 'vscode.js'),
    'vscode-languageclient': path.join(__dirname, 'mocks', 'languageclient.js'),
    'vscode-languageclient/node': path.join(__dirname, 'mocks', 'languageclient.js'),
};

const original = moduleWithResolver._resolveFilename;
moduleWithResolver._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
    const target = redirects[request];
    return target ?? original.call(this, request, ...rest);
};
