#!/usr/bin/env bash
# CI for the VS Code extension: install, `npm test` (type-check, lint, unit tests, integration
# test: the one list of checks, also what a developer runs), package. Exits non-zero on the
# first failure.
#
# The integration test runs the real Python language server when DYN_INSPECT_PYTHON is set
# (with DYN_INSPECT_IT_WORKSPACE and DYN_INSPECT_IT_FILE); otherwise it reports itself skipped.
set -euo pipefail

cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "npm ci"
npm ci --no-audit --no-fund

step "npm test (generated outputs.ts current, tsc --noEmit, eslint, unit tests with vscode mocked, integration test with the real server over stdio)"
if [[ -z "${DYN_INSPECT_PYTHON:-}" ]]; then
    echo "DYN_INSPECT_PYTHON is not set: the integration test will report itself skipped."
fi
npm test

step "package (vsce)"
rm -f ./*.vsix
npm run --silent package
ls -l ./*.vsix
